package dashboards

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/ocl-exporter/ocl_exporter/docs"
)

// family is what a query may use of a metric.
type family struct {
	labels  []string // nil: any (ALERTS, recording rules)
	counter bool
}

// families reads the metrics the exporter emits from docs/metrics.md (a
// test in cmd/ocl_exporter keeps it equal to a real scrape), the recording
// rules of alerts/*rules.yaml, and ALERTS.
func families(t *testing.T) map[string]family {
	t.Helper()
	f, err := os.Open("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	metrics, err := docs.ReadMetrics(f)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]family{"ALERTS": {}}
	for name, m := range metrics {
		out[name] = family{labels: m.Labels, counter: m.Counter()}
	}
	rules, err := filepath.Glob("../alerts/*rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range rules {
		groups, errs := rulefmt.ParseFile(path, false, model.UTF8Validation)
		if len(errs) > 0 {
			t.Fatalf("%s: %v", path, errs)
		}
		for _, g := range groups.Groups {
			for _, r := range g.Rules {
				if r.Record != "" {
					out[r.Record] = family{}
				}
			}
		}
	}
	return out
}

// gvars stand in for the dashboard variables and Grafana's built-ins; the
// cluster and pool stand-ins are valid regexes the checks below look for.
var gvars = map[string]string{
	"__rate_interval": "5m", "__interval": "1m", "__range": "1h",
	"cluster": "__cluster__", "pool": "__pool__", "datasource": "prometheus",
}

var gvar = regexp.MustCompile(`\$\{?(\w+)\}?`)

func substitute(expr string) (string, error) {
	var err error
	out := gvar.ReplaceAllStringFunc(expr, func(v string) string {
		name := gvar.FindStringSubmatch(v)[1]
		if s, ok := gvars[name]; ok {
			return s
		}
		err = fmt.Errorf("unknown variable %s", v)
		return v
	})
	return out, err
}

// labelValues matches a variable query the console rewrites to count by.
var labelValues = regexp.MustCompile(`^label_values\((.*), (\w+)\)$`)

// TestQueriesUseWhatTheExporterEmits parses every query (after variable
// substitution) and checks each selector against docs/metrics.md and the
// recording rules: the metric exists, its matchers and the labels the
// query groups or joins on are the metric's, it is filtered by cluster,
// and a counter is only read through rate, irate or increase.
func TestQueriesUseWhatTheExporterEmits(t *testing.T) {
	fams := families(t)
	for name, d := range boards(t) {
		for _, v := range d.Templating.List {
			if v.Type != "query" {
				continue
			}
			m := labelValues.FindStringSubmatch(v.Query)
			if m == nil {
				t.Errorf("%s: variable %s: %q is not label_values(selector, label)", name, v.Name, v.Query)
				continue
			}
			checkQuery(t, fmt.Sprintf("%s: variable %s", name, v.Name), m[1], fams, v.Name != "cluster")
		}
		for _, p := range d.Panels {
			for _, tg := range p.Targets {
				checkQuery(t, fmt.Sprintf("%s: %q %s", name, p.Title, tg.RefID), tg.Expr, fams, true)
			}
		}
	}
}

func checkQuery(t *testing.T, where, expr string, fams map[string]family, needCluster bool) {
	t.Helper()
	s, err := substitute(expr)
	if err != nil {
		t.Errorf("%s: %v", where, err)
		return
	}
	root, err := parser.ParseExpr(s)
	if err != nil {
		t.Errorf("%s: %v\n%s", where, err, s)
		return
	}
	parser.Inspect(root, func(node parser.Node, path []parser.Node) error {
		switch n := node.(type) {
		case *parser.VectorSelector:
			checkSelector(t, where, n, path, fams, needCluster)
		case *parser.AggregateExpr:
			checkLabels(t, where, "by", n.Grouping, n.Expr, fams)
		case *parser.BinaryExpr:
			if vm := n.VectorMatching; vm != nil && vm.On {
				checkLabels(t, where, "on", vm.MatchingLabels, n.LHS, fams)
				checkLabels(t, where, "on", vm.MatchingLabels, n.RHS, fams)
			}
		}
		return nil
	})
}

func checkSelector(t *testing.T, where string, n *parser.VectorSelector, path []parser.Node, fams map[string]family, needCluster bool) {
	t.Helper()
	fam, ok := fams[n.Name]
	if !ok {
		t.Errorf("%s: %s is neither in docs/metrics.md nor a recording rule in alerts/", where, n.Name)
		return
	}
	cluster := false
	for _, m := range n.LabelMatchers {
		switch {
		case m.Name == model.MetricNameLabel:
		case m.Name == "cluster":
			cluster = m.Type.String() == "=~" && m.Value == gvars["cluster"]
		case fam.labels != nil && !slices.Contains(fam.labels, m.Name):
			t.Errorf("%s: %s has no label %q", where, n.Name, m.Name)
		}
	}
	if needCluster && !cluster {
		t.Errorf(`%s: %s must be filtered by cluster=~"$cluster"`, where, n.Name)
	}
	if fam.counter && !slices.ContainsFunc(path, isRate) {
		t.Errorf("%s: counter %s outside rate, irate or increase", where, n.Name)
	}
}

func isRate(n parser.Node) bool {
	c, ok := n.(*parser.Call)
	return ok && slices.Contains([]string{"rate", "irate", "increase"}, c.Func.Name)
}

// checkLabels fails on a grouping or matching label that no metric under
// expr carries (a typo would silently group everything into one series).
func checkLabels(t *testing.T, where, clause string, labels []string, expr parser.Expr, fams map[string]family) {
	t.Helper()
	have := map[string]bool{"cluster": true}
	open := false
	parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
		if vs, ok := node.(*parser.VectorSelector); ok {
			fam := fams[vs.Name]
			open = open || fam.labels == nil
			for _, l := range fam.labels {
				have[l] = true
			}
		}
		return nil
	})
	for _, l := range labels {
		if !have[l] && !open {
			t.Errorf("%s: %s (%s): no metric in %s has label %q", where, clause, strings.Join(labels, ", "), expr, l)
		}
	}
}
