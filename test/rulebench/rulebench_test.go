//go:build rulebench

// Package rulebench measures what the bundle costs inside Prometheus: the
// exporter (offline, on a synthetic cluster from test/synth) scraped by
// Prometheus 3.5 every 15 s with alerts/*rules.yaml evaluated every 15 s,
// as a user's Prometheus runs them. It reports each rule group's and the
// slowest rules' evaluation time (Prometheus' own, from its rules API),
// Prometheus' resident memory, and the time Prometheus spends on every
// dashboard query (over the data it holds) and every docs/queries.md
// query. make bench-rules runs it; docs/performance.md has the results.
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
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ocl-exporter/ocl_exporter/collector"
	"github.com/ocl-exporter/ocl_exporter/dashboards"
	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
	"github.com/ocl-exporter/ocl_exporter/test/cluster"
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

// evaluations is how many rule evaluations are averaged after the warm-up.
const evaluations = 6

func TestRuleCost(t *testing.T) {
	prom := os.Getenv("E2E_OPERATOR_PROMETHEUS")
	if _, err := os.Stat(prom); err != nil {
		t.Fatalf("$E2E_OPERATOR_PROMETHEUS=%q: %v; run make bench-rules, which builds Prometheus 3.5", prom, err)
	}
	var report strings.Builder
	report.WriteString("| nodes | series | all groups per evaluation | slowest group | slowest rules | dashboard queries: max, slowest | docs/queries.md max | Prometheus RSS |\n|---|---|---|---|---|---|---|---|\n")
	for _, n := range sizes(t) {
		r := measure(t, prom, n)
		fmt.Fprintf(&report, "| %d | %d | %s | %s | %s | %s | %s | %.0f MiB |\n",
			n, r.series, ms(r.total), r.slowestGroup, strings.Join(r.slowestRules, ", "), r.dashboards, ms(r.docsMax), r.rss/(1<<20))
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
	series       int
	total        time.Duration
	slowestGroup string
	slowestRules []string
	dashboards   string
	docsMax      time.Duration
	rss          float64
}

func measure(t *testing.T, prom string, nodes int) result {
	t.Helper()
	size := synth.Target
	size.Nodes = nodes
	src := sourcetest.FromObjects(t, synth.Objects(size))
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector.New(src, collector.DefaultOptions))
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
	rules, err := filepath.Abs(filepath.Join(repoRoot, "alerts", "*rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	config := fmt.Sprintf(`global:
  scrape_interval: 15s
  evaluation_interval: 15s
rule_files: [%q]
scrape_configs:
  - job_name: ocl-exporter
    static_configs: [{targets: [%q]}]
  - job_name: prometheus
    static_configs: [{targets: [%q]}]
`, rules, l.Addr().String(), addr)
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

	// Warm up: two evaluations on a full scrape, then average the next.
	waitFor(t, base, `count(up{job="ocl-exporter"} == 1) and count(count_over_time(up{job="ocl-exporter"}[2m]) >= 3)`, 3*time.Minute)
	groups := map[string][]time.Duration{}
	ruleTimes := map[string][]time.Duration{}
	var last time.Time
	for len(groups["ocl-rollout"]) < evaluations {
		var rs struct {
			Data struct {
				Groups []struct {
					Name           string  `json:"name"`
					EvaluationTime float64 `json:"evaluationTime"`
					LastEvaluation string  `json:"lastEvaluation"`
					Rules          []struct {
						Name           string  `json:"name"`
						EvaluationTime float64 `json:"evaluationTime"`
					} `json:"rules"`
				} `json:"groups"`
			} `json:"data"`
		}
		get(t, base+"/api/v1/rules", &rs)
		var newest time.Time
		for _, g := range rs.Data.Groups {
			at, _ := time.Parse(time.RFC3339Nano, g.LastEvaluation)
			if at.After(newest) {
				newest = at
			}
		}
		if newest.After(last) {
			last = newest
			for _, g := range rs.Data.Groups {
				groups[g.Name] = append(groups[g.Name], seconds(g.EvaluationTime))
				for _, r := range g.Rules {
					ruleTimes[g.Name+"/"+r.Name] = append(ruleTimes[g.Name+"/"+r.Name], seconds(r.EvaluationTime))
				}
			}
		}
		time.Sleep(5 * time.Second)
	}
	var res result
	var slowest string
	var slowestTime time.Duration
	for name, ts := range groups {
		m := mean(ts)
		res.total += m
		if m > slowestTime {
			slowest, slowestTime = name, m
		}
	}
	res.slowestGroup = slowest + " " + ms(slowestTime)
	type named struct {
		name string
		d    time.Duration
	}
	var rs []named
	for name, ts := range ruleTimes {
		rs = append(rs, named{name, mean(ts)})
	}
	slices.SortFunc(rs, func(a, b named) int { return int(b.d - a.d) })
	for _, r := range rs[:min(3, len(rs))] {
		res.slowestRules = append(res.slowestRules, r.name+" "+ms(r.d))
	}
	res.series = int(scalar(t, base, `count({job="ocl-exporter"})`))
	res.rss = scalar(t, base, `process_resident_memory_bytes{job="prometheus"}`)

	// Queries over what Prometheus holds (a few minutes): the time it
	// spends, from its own query statistics.
	var worst named
	end := time.Now()
	for _, q := range dashboardQueries(t) {
		d := queryTime(t, base, q.expr, q.rng, end)
		if d > worst.d {
			worst = named{q.where, d}
		}
	}
	res.dashboards = ms(worst.d) + " (" + worst.name + ")"
	for _, q := range docQueries(t) {
		res.docsMax = max(res.docsMax, queryTime(t, base, q, false, end))
	}
	t.Logf("%d nodes: %+v", nodes, res)
	return res
}

func seconds(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

func mean(ts []time.Duration) time.Duration {
	var s time.Duration
	for _, t := range ts {
		s += t
	}
	return s / time.Duration(len(ts))
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
// the last 5 minutes (graphs and timelines), else an instant query.
func queryTime(t *testing.T, base, q string, rng bool, end time.Time) time.Duration {
	t.Helper()
	v := url.Values{"query": {q}, "stats": {"all"}}
	path := "/api/v1/query"
	if rng {
		path = "/api/v1/query_range"
		v.Set("start", strconv.FormatInt(end.Add(-5*time.Minute).Unix(), 10))
		v.Set("end", strconv.FormatInt(end.Unix(), 10))
		v.Set("step", "15")
	} else {
		v.Set("time", strconv.FormatInt(end.Unix(), 10))
	}
	var r struct {
		Data struct {
			Stats struct {
				Timings struct {
					EvalTotalTime float64 `json:"evalTotalTime"`
				} `json:"timings"`
			} `json:"stats"`
		} `json:"data"`
	}
	get(t, base+path+"?"+v.Encode(), &r)
	return seconds(r.Data.Stats.Timings.EvalTotalTime)
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
	values := map[string]string{"cluster": "", "pool": ".*", "__rate_interval": "1m", "__interval": "15s", "__range": "5m"}
	var out []query
	for name, b := range files {
		var d struct {
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
