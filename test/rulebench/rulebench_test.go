//go:build rulebench

// Package rulebench measures what the bundle costs inside Prometheus: the
// exporter (offline, on a synthetic cluster from test/synth) scraped by
// Prometheus 3.5 every 15 s with alerts/*rules.yaml evaluated every 15 s,
// as a user's Prometheus runs them, after 6 hours of the same history
// (and the rules' results) backfilled, so that the dashboards' range has
// data. It reports each rule group's and each rule's evaluation time
// (Prometheus' own, from its rules API) with its pending and firing
// alerts, Prometheus' resident memory, and the time Prometheus spends on
// every dashboard query over the dashboards' range and every
// docs/queries.md query. make bench-rules runs it; docs/performance.md
// has the results.
package rulebench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"

	"github.com/ocl-exporter/ocl_exporter/collector"
	"github.com/ocl-exporter/ocl_exporter/dashboards"
	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
	"github.com/ocl-exporter/ocl_exporter/test/cluster"
	"github.com/ocl-exporter/ocl_exporter/test/history"
	"github.com/ocl-exporter/ocl_exporter/test/synth"
)

const repoRoot = "../.."

// sizes are the clusters measured: RULEBENCH_SIZES, default 2000,10000.
func sizes(t *testing.T) []int {
	s := os.Getenv("RULEBENCH_SIZES")
	if s == "" {
		s = "2000,10000"
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 10 {
			t.Fatalf("RULEBENCH_SIZES=%q: want node counts of at least 10", s)
		}
		out = append(out, n)
	}
	return out
}

// evaluations is how many rule evaluations after the warm-up each rule's
// median is taken over; a paired run (RULEBENCH_BASE) takes
// pairedEvaluations, its ratios being its measurement.
const (
	evaluations       = 10
	pairedEvaluations = 40
)

func evaluationsWanted(baseRef string) int {
	if baseRef != "" {
		return pairedEvaluations
	}
	return evaluations
}

func TestRuleCost(t *testing.T) {
	prom := os.Getenv("E2E_OPERATOR_PROMETHEUS")
	if _, err := os.Stat(prom); err != nil {
		t.Fatalf("$E2E_OPERATOR_PROMETHEUS=%q: %v; run make bench-rules, which builds Prometheus 3.5", prom, err)
	}
	var report, paired strings.Builder
	report.WriteString("| nodes | series | all groups per evaluation | rules without alerts | slowest group | slowest rules | dashboard queries: max, slowest | docs/queries.md max | Prometheus RSS |\n|---|---|---|---|---|---|---|---|---|\n")
	paired.WriteString(pairedHeader)
	for _, n := range sizes(t) {
		r := measure(t, prom, n)
		fmt.Fprintf(&report, "| %d | %d | %s | %s | %s | %s | %s | %s | %.0f MiB |\n",
			n, r.series, ms(r.total), ms(r.quiet), r.slowestGroup, strings.Join(r.slowestRules, ", "), r.dashboards, ms(r.docsMax), r.rss/(1<<20))
		paired.WriteString(r.paired)
	}
	if base := os.Getenv("RULEBENCH_BASE"); base != "" {
		report.WriteString("\nThe working tree against " + base + ", both evaluated in one Prometheus:\n\n" + paired.String())
	}
	t.Logf("\n%s", report.String())
	if out := os.Getenv("RULEBENCH_RESULTS"); out != "" {
		if err := os.WriteFile(out, []byte(report.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + " ms"
}

type result struct {
	series int
	total  time.Duration
	// quiet is the rules with no pending or firing alert, together: what
	// the bundle costs apart from expanding each alert's templates.
	quiet        time.Duration
	slowestGroup string
	slowestRules []string
	dashboards   string
	docsMax      time.Duration
	rss          float64
	// paired is the row of pairedReport, in a paired run.
	paired string
}

func measure(t *testing.T, prom string, nodes int) result {
	t.Helper()
	reg := registry(t, nodes)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })

	dir := t.TempDir()
	addr, err := cluster.FreeAddress()
	if err != nil {
		t.Fatal(err)
	}
	rules, err := filepath.Glob(filepath.Join(repoRoot, "alerts", "*rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rules {
		if rules[i], err = filepath.Abs(r); err != nil {
			t.Fatal(err)
		}
	}
	baseRef := os.Getenv("RULEBENCH_BASE")
	if baseRef != "" {
		rules = append(rules, baseRules(t, baseRef, dir, rules)...)
	}
	backfill(t, filepath.Join(dir, "data"), reg, l.Addr().String(), rules)
	quoted := make([]string, len(rules))
	for i, r := range rules {
		quoted[i] = strconv.Quote(r)
	}
	// Paired, the targets are scraped twice an evaluation interval, so
	// that the two sides' groups, half an interval apart (baseRules),
	// each evaluate as long after a scrape as the other: the side just
	// after a scrape reads what it wrote into the caches.
	scrape := scrapeInterval
	if baseRef != "" {
		scrape /= 2
	}
	config := fmt.Sprintf(`global:
  scrape_interval: %[5]s
  evaluation_interval: %[1]s
rule_files: [%[2]s]
scrape_configs:
  - job_name: ocl-exporter
    static_configs: [{targets: [%[3]q]}]
  - job_name: prometheus
    static_configs: [{targets: [%[4]q]}]
`, model.Duration(scrapeInterval), strings.Join(quoted, ", "), l.Addr().String(), addr, model.Duration(scrape))
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := cluster.StartProc(dir, "prometheus", prom, "--config.file", filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path", filepath.Join(dir, "data"), "--web.listen-address", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	base := "http://" + addr
	if err := cluster.WaitHTTP(p, http.DefaultClient, base+"/-/ready", "", time.Minute); err != nil {
		t.Fatal(err)
	}

	// Warm up: live scrapes (scrape_samples_scraped is not backfilled) and
	// three evaluations, then the median of the next.
	waitFor(t, base, `count(scrape_samples_scraped{job="ocl-exporter"} > 0) and on () count(prometheus_rule_group_iterations_total{rule_group=~".*;ocl-rollout"} >= 3)`, 3*time.Minute)
	tree, baseSet := collect(t, base, evaluationsWanted(baseRef))
	res := summarize(t, nodes, tree)
	if baseRef != "" {
		res.paired = pairedReport(nodes, tree, baseSet)
		logPairedRules(t, nodes, tree, baseSet)
	}
	res.series = int(scalar(t, base, `count({job="ocl-exporter"})`))
	res.rss = scalar(t, base, `process_resident_memory_bytes{job="prometheus"}`)

	// Queries over what Prometheus holds (a few minutes): the time it
	// spends, from its own query statistics.
	var worst named
	end := time.Now()
	for _, q := range dashboardQueries(t) {
		d, n := queryTime(t, base, q.expr, q.rng, end)
		t.Logf("%d nodes: query %s %s, %d series", nodes, q.where, ms(d), n)
		if d > worst.d {
			worst = named{q.where, d}
		}
	}
	res.dashboards = ms(worst.d) + " (" + worst.name + ")"
	for i, q := range docQueries(t) {
		d, n := queryTime(t, base, q, false, end)
		t.Logf("%d nodes: query docs/queries.md block %d %s, %d series", nodes, i+1, ms(d), n)
		res.docsMax = max(res.docsMax, d)
	}
	t.Logf("%d nodes: %+v", nodes, res)
	return res
}

func seconds(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

// median is the middle of ts (the mean of the two middle ones for an even
// count): on a machine shared with builds, one evaluation that waited for
// a core would move a mean by its whole delay.
func median(ts []time.Duration) time.Duration {
	s := slices.Sorted(slices.Values(ts))
	return (s[(len(s)-1)/2] + s[len(s)/2]) / 2
}

func get(t *testing.T, u string, into any) {
	t.Helper()
	resp, err := http.Get(u) //nolint:noctx // a local test server
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %s: %s", u, resp.Status, b)
	}
	if err := json.Unmarshal(b, into); err != nil {
		t.Fatalf("%s: %v", u, err)
	}
}

func scalar(t *testing.T, base, q string) float64 {
	t.Helper()
	var r struct {
		Data struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	get(t, base+"/api/v1/query?query="+url.QueryEscape(q), &r)
	if len(r.Data.Result) == 0 {
		t.Fatalf("%s: no result", q)
	}
	f, _ := strconv.ParseFloat(r.Data.Result[0].Value[1].(string), 64)
	return f
}

func waitFor(t *testing.T, base, q string, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for ctx.Err() == nil {
		var r struct {
			Data struct {
				Result []any `json:"result"`
			} `json:"data"`
		}
		get(t, base+"/api/v1/query?query="+url.QueryEscape(q), &r)
		if len(r.Data.Result) > 0 {
			return
		}
		time.Sleep(2 * time.Second)
	}
	t.Fatalf("%s: still empty after %s", q, timeout)
}

// queryTime is Prometheus' total evaluation time of q: a range query over
// the dashboards' range at Grafana's step (graphs and timelines), else an
// instant query.
func queryTime(t *testing.T, base, q string, rng bool, end time.Time) (d time.Duration, series int) {
	t.Helper()
	v := url.Values{"query": {q}, "stats": {"all"}}
	path := "/api/v1/query"
	if rng {
		path = "/api/v1/query_range"
		v.Set("start", strconv.FormatInt(end.Add(-dashboardRange).Unix(), 10))
		v.Set("end", strconv.FormatInt(end.Unix(), 10))
		v.Set("step", strconv.FormatInt(int64(step/time.Second), 10))
	} else {
		v.Set("time", strconv.FormatInt(end.Unix(), 10))
	}
	var r struct {
		Data struct {
			Result []json.RawMessage `json:"result"`
			Stats  struct {
				Timings struct {
					EvalTotalTime float64 `json:"evalTotalTime"`
				} `json:"timings"`
			} `json:"stats"`
		} `json:"data"`
	}
	get(t, base+path+"?"+v.Encode(), &r)
	return seconds(r.Data.Stats.Timings.EvalTotalTime), len(r.Data.Result)
}

type query struct {
	where, expr string
	rng         bool
}

var variable = regexp.MustCompile(`\$\{?(\w+)\}?`)

// dashboardQueries are every dashboard target with the variables as a
// single cluster's Prometheus sees them: no cluster label, every pool.
func dashboardQueries(t *testing.T) []query {
	t.Helper()
	files, err := dashboards.Files()
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]string{
		"cluster": "", "pool": ".*", "__rate_interval": model.Duration(max(4*scrapeInterval, step+scrapeInterval)).String(),
		"__interval": model.Duration(step).String(), "__range": model.Duration(dashboardRange).String(),
	}
	var out []query
	for name, b := range files {
		var d struct {
			Time struct {
				From string `json:"from"`
			} `json:"time"`
			Panels []struct {
				Title   string `json:"title"`
				Type    string `json:"type"`
				Targets []struct {
					Expr    string `json:"expr"`
					Instant bool   `json:"instant"`
				} `json:"targets"`
			} `json:"panels"`
		}
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatal(err)
		}
		if want := "now-" + model.Duration(dashboardRange).String(); d.Time.From != want {
			t.Fatalf("%s opens at %q, the benchmark measures %q: change dashboardRange", name, d.Time.From, want)
		}
		for _, p := range d.Panels {
			for _, tg := range p.Targets {
				expr := variable.ReplaceAllStringFunc(tg.Expr, func(v string) string { return values[variable.FindStringSubmatch(v)[1]] })
				out = append(out, query{where: name + " " + p.Title, expr: expr, rng: !tg.Instant})
			}
		}
	}
	return out
}

// docQueries are the PromQL blocks of docs/queries.md.
func docQueries(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "queries.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, block := range strings.Split(string(b), "```promql\n")[1:] {
		q, _, _ := strings.Cut(block, "```")
		out = append(out, strings.TrimSpace(q))
	}
	return out
}

const (
	scrapeInterval = 15 * time.Second
	// lookback is Prometheus' default lookback delta: how far back an
	// instant selector reads.
	lookback = 5 * time.Minute
	// dashboardRange is the range every dashboard opens at, and the
	// history backfilled before Prometheus starts.
	dashboardRange = 6 * time.Hour
	// step is Grafana's for dashboardRange on a panel 1,000 pixels wide
	// (range / max data points, at least the scrape interval).
	step = dashboardRange / 1000 / time.Second * time.Second
)

// backfill writes dashboardRange of history ending now into the TSDB at
// dir, as Prometheus would have stored it: the exporter's current output
// (reg) scraped every scrapeInterval with the job and instance labels of
// the live scrape, so that history and live samples are one series, and
// the rules' results evaluated every scrapeInterval by Prometheus' rule
// engine.
func backfill(t *testing.T, dir string, reg *prometheus.Registry, instance string, rules []string) {
	t.Helper()
	began := time.Now()
	samples := scraped(t, reg, instance)
	// The history ends a lookback before now, so the live evaluations read
	// the head only, as in a Prometheus up for longer than its lookback:
	// ending now, every selector of every rule also searched the newest
	// persisted block for the first five minutes, which the measurement
	// falls in, and no Prometheus in service does that.
	end := time.Now().Add(-lookback).Truncate(scrapeInterval)
	w := history.Written{Start: end.Add(-dashboardRange), End: end}
	series := func(app storage.Appender) error {
		refs := make([]storage.SeriesRef, len(samples))
		for ts := w.Start; !ts.After(w.End); ts = ts.Add(scrapeInterval) {
			if err := appendScrape(app, samples, refs, ts); err != nil {
				return err
			}
		}
		return nil
	}
	if err := history.Store(dir, w, series, rules, scrapeInterval); err != nil {
		t.Fatalf("backfilling %s of history: %v", dashboardRange, err)
	}
	t.Logf("backfilled %s of %d series in %s", dashboardRange, len(samples), time.Since(began).Round(time.Second))
}

// registry serves what serve.go serves for a synthetic cluster of nodes:
// the families and the build's version, which the scrape-gap bridges
// read.
func registry(t *testing.T, nodes int) *prometheus.Registry {
	t.Helper()
	size := synth.Target
	size.Nodes = nodes
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector.New(sourcetest.FromObjects(t, synth.Objects(size)), collector.DefaultOptions), versioncollector.NewCollector("ocl_exporter"))
	return reg
}

// sample is one series of a scrape and its value.
type sample struct {
	lbls labels.Labels
	v    float64
}

// appendScrape appends samples at ts, refs holding each one's series
// reference across calls.
func appendScrape(app storage.Appender, samples []sample, refs []storage.SeriesRef, ts time.Time) error {
	for i, s := range samples {
		ref, err := app.Append(refs[i], s.lbls, ts.UnixMilli(), s.v)
		if err != nil {
			return fmt.Errorf("%s at %s: %w", s.lbls, ts, err)
		}
		refs[i] = ref
	}
	return nil
}

// scraped is what a scrape of reg stores, with the job and instance
// labels of the live scrape and the scrape's own up.
func scraped(t *testing.T, reg *prometheus.Registry, instance string) []sample {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	samples := []sample{{labels.FromStrings(model.MetricNameLabel, "up", "job", "ocl-exporter", "instance", instance), 1}}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			b := labels.NewScratchBuilder(len(m.GetLabel()) + 3)
			b.Add(model.MetricNameLabel, f.GetName())
			b.Add("job", "ocl-exporter")
			b.Add("instance", instance)
			for _, lp := range m.GetLabel() {
				b.Add(lp.GetName(), lp.GetValue())
			}
			b.Sort()
			var v float64
			switch {
			case m.GetGauge() != nil:
				v = m.GetGauge().GetValue()
			case m.GetCounter() != nil:
				v = m.GetCounter().GetValue()
			case m.GetUntyped() != nil:
				v = m.GetUntyped().GetValue()
			default:
				continue
			}
			samples = append(samples, sample{b.Labels(), v})
		}
	}
	return samples
}
