package alerts

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"text/template/parse"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/ocl-exporter/ocl_exporter/collector"
	"github.com/ocl-exporter/ocl_exporter/review"
	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
)

// replicas are the target labels Prometheus attaches to what each of two
// exporter replicas serves, as the deploy bundle's ServiceMonitor scrapes
// them (Service ocl-exporter in namespace ocl-exporter). The scenario tests
// feed the rules both replicas, so every expression must aggregate them away.
var replicas = replicaTargets(0)

// replicaTargets are the two replicas' target labels after generation
// reschedules of the Deployment: new pods, new names and addresses.
func replicaTargets(generation int) []map[string]string {
	hash := []string{"7d9c5b8f6", "5f6d8c9b4", "64b7c9d58", "8c5d7f96b"}[generation%4]
	return []map[string]string{
		targetLabels("ocl-exporter-"+hash+"-k2x9p", fmt.Sprintf("10.128.2.%d:29100", 15+generation)),
		targetLabels("ocl-exporter-"+hash+"-q7m4z", fmt.Sprintf("10.131.0.%d:29100", 22+generation)),
	}
}

func targetLabels(pod, instance string) map[string]string {
	return map[string]string{
		"container": "ocl-exporter", "endpoint": "https-metrics", "instance": instance,
		"job": "ocl-exporter", "namespace": "ocl-exporter", "pod": pod, "service": "ocl-exporter",
	}
}

// sample is one scraped series and its value.
type sample struct {
	series string // name{label="value", ...}, labels sorted
	value  float64
}

// scrape is what Prometheus stores after scraping both replicas serving the
// scenario directory dir, of the series the rules read.
func scrape(t *testing.T, dir string) []sample {
	t.Helper()
	rules, _ := readNames(t)
	return read(scrapeTargets(t, sourcetest.Source(t, dir), replicas), rules)
}

// buildInfo is the labels of the series the exporter's version collector
// serves beside the collector's (cmd/ocl_exporter/serve.go), as a release
// build sets them: the rules' scrape-gap bridges read it to know the
// exporter scraped.
var buildInfo = map[string]string{
	"branch": "HEAD", "goarch": "amd64", "goos": "linux", "goversion": "go1.25.5",
	"revision": "6544fd6", "tags": "unknown", "version": "v0.1.0",
}

// read keeps the samples of the metric names in names.
func read(samples []sample, names map[string]bool) []sample {
	return slices.DeleteFunc(samples, func(s sample) bool { return !names[s.series[:strings.IndexByte(s.series, '{')]] })
}

var (
	readsOnce            sync.Once
	ruleNames, histNames map[string]bool
)

// readNames are the metric names the rules' selectors read (up and the
// build's version, which OCLExporterDown and the scrape-gap bridges read,
// among them), and with them those ocl_exporter review reads. The
// scenario tests hold only the first, the lifecycle tests (the histories
// the e2e suite reviews) both: a change to a family neither reads
// rewrites no promtool test.
func readNames(t *testing.T) (rules, history map[string]bool) {
	t.Helper()
	readsOnce.Do(func() {
		var exprs []string
		for _, g := range loadRules(t) {
			for _, r := range g.Rules {
				exprs = append(exprs, r.Expr)
				for name, text := range r.Annotations {
					qs, err := templateQueries(text)
					if err != nil {
						t.Errorf("%s annotation %s: %v", r.Alert, name, err)
					}
					exprs = append(exprs, qs...)
				}
			}
		}
		ruleNames = selected(exprs)
		histNames = selected(append(exprs, review.Queries()...))
	})
	return ruleNames, histNames
}

// templateDefs are the variables Prometheus defines before an alert's
// template (rules/alerting.go).
const templateDefs = "{{$labels := .Labels}}{{$externalLabels := .ExternalLabels}}{{$externalURL := .ExternalURL}}{{$value := .Value}}"

// templateQueries are the PromQL queries an annotation template runs:
// in each pipeline that calls query, its string (query "expr"), or the
// format printf fills in (printf `expr` $labels.x | query).
func templateQueries(text string) ([]string, error) {
	tree := parse.New("annotation")
	tree.Mode = parse.SkipFuncCheck
	if _, err := tree.Parse(templateDefs+text, "{{", "}}", map[string]*parse.Tree{}); err != nil {
		return nil, err
	}
	var out []string
	var walk func(n parse.Node)
	walkPipe := func(p *parse.PipeNode) {
		if p == nil || !slices.ContainsFunc(p.Cmds, func(c *parse.CommandNode) bool {
			id, ok := c.Args[0].(*parse.IdentifierNode)
			return ok && id.Ident == "query"
		}) {
			return
		}
		for _, c := range p.Cmds {
			for _, a := range c.Args {
				if str, ok := a.(*parse.StringNode); ok {
					out = append(out, strings.ReplaceAll(str.Text, "%s", "x"))
				}
			}
		}
	}
	walk = func(n parse.Node) {
		switch n := n.(type) {
		case *parse.ListNode:
			if n == nil {
				return
			}
			for _, c := range n.Nodes {
				walk(c)
			}
		case *parse.ActionNode:
			walkPipe(n.Pipe)
		case *parse.IfNode:
			walkPipe(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		case *parse.WithNode:
			walkPipe(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		case *parse.RangeNode:
			walkPipe(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		}
	}
	walk(tree.Root)
	for _, q := range out {
		if _, err := parser.ParseExpr(q); err != nil {
			return nil, fmt.Errorf("query %s: %w", q, err)
		}
	}
	return out, nil
}

// selected are the metric names the selectors of exprs read.
func selected(exprs []string) map[string]bool {
	names := map[string]bool{}
	for _, e := range exprs {
		expr, err := parser.ParseExpr(e)
		if err != nil {
			continue // TestExpressionsNameEmittedMetricsAndKnownValues reports a rule's
		}
		parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
			if vs, ok := n.(*parser.VectorSelector); ok {
				got, _ := selectorNames(vs) // exprProblems reports an unreadable selector
				for _, name := range got {
					names[name] = true
				}
			}
			return nil
		})
	}
	return names
}

// scrapeTargets is what Prometheus stores after scraping targets serving
// src: every family the collector emits with the target labels added, the
// build's version, and each target's up series. Sorted by series.
func scrapeTargets(t *testing.T, src collector.Source, targets []map[string]string) []sample {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(collector.New(src, collector.DefaultOptions))
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []sample
	for _, target := range targets {
		out = append(out, sample{formatSeries("up", target), 1})
		info := maps.Clone(target)
		maps.Copy(info, buildInfo)
		out = append(out, sample{formatSeries("ocl_exporter_build_info", info), 1})
		for _, mf := range families {
			for _, m := range mf.GetMetric() {
				lbls := maps.Clone(target)
				for _, lp := range m.GetLabel() {
					lbls[lp.GetName()] = lp.GetValue()
				}
				out = append(out, sample{formatSeries(mf.GetName(), lbls), value(t, mf.GetType(), m)})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].series < out[j].series })
	return out
}

// value is the sample of a gauge; the collector emits nothing else.
func value(t *testing.T, typ dto.MetricType, m *dto.Metric) float64 {
	t.Helper()
	if typ != dto.MetricType_GAUGE {
		t.Fatalf("unexpected metric type %v", typ)
	}
	return m.GetGauge().GetValue()
}

// formatSeries writes a series in the PromQL notation promtool reads.
func formatSeries(name string, lbls map[string]string) string {
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('{')
	for i, k := range slices.Sorted(maps.Keys(lbls)) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k + "=" + strconv.Quote(lbls[k]))
	}
	b.WriteByte('}')
	return b.String()
}

// formatValue writes a sample value without an exponent, which promtool's
// expanding notation (a+bxn) would misread.
func formatValue(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
