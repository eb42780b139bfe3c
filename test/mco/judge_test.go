//go:build e2emco

package mco

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/ocl-exporter/ocl_exporter/alerts"
	"github.com/ocl-exporter/ocl_exporter/test/cluster"
	"github.com/ocl-exporter/ocl_exporter/test/gaps"
	"github.com/ocl-exporter/ocl_exporter/test/lifecycle"
)

// target are the labels Prometheus adds to what the exporter serves, as
// the deploy bundle's ServiceMonitor scrapes it (one replica).
var target = map[string]string{
	"container": "ocl-exporter", "endpoint": "https-metrics", "instance": "10.128.2.15:29100",
	"job": "ocl-exporter", "namespace": "ocl-exporter", "pod": "ocl-exporter-7d9c5b8f6-k2x9p", "service": "ocl-exporter",
}

// scrape reads the exporter's /metrics as Prometheus stores it: each OCL
// series with the target labels, keyed in PromQL notation.
func (w *world) scrape(ctx context.Context) (map[string]float64, error) {
	families, err := cluster.Scrape(ctx, w.exporter)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{formatSeries("up", target): 1}
	for name, mf := range families {
		if !cluster.OwnFamily(name) ||
			strings.HasSuffix(name, "_total") { // request counters: not what an incident changes
			continue
		}
		for _, m := range mf.GetMetric() {
			lbls := maps.Clone(target)
			for _, l := range m.GetLabel() {
				lbls[l.GetName()] = l.GetValue()
			}
			out[formatSeries(name, lbls)] = m.GetGauge().GetValue()
		}
	}
	return out, nil
}

func equalSeries(a, b map[string]float64) bool { return b != nil && maps.Equal(a, b) }

// formatSeries writes a series in the PromQL notation promtool reads.
func formatSeries(name string, lbls map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(lbls)) {
		parts = append(parts, k+"="+strconv.Quote(lbls[k]))
	}
	return name + "{" + strings.Join(parts, ", ") + "}"
}

// replay lays the recorded scrapes out on the lifecycle's minutes: each
// record holds from its minute until the next one's, the first from 0,
// the last until the end. Minute 0 is when the incident started, so the
// rules that compare timestamps with time() see the incident's real ages
// stretched to the lifecycle's.
func (in *incident) replay() *gaps.Replay {
	rp := &gaps.Replay{Start: in.begin}
	for i, r := range in.records {
		from, until := r.at, in.l.End+1
		if i == 0 {
			from = 0 // the first record stands for the minutes before it
		}
		if i+1 < len(in.records) {
			until = in.records[i+1].at
		}
		round := gaps.Round{}
		for s, v := range r.series {
			round[s] = in.lifecycleTime(s, v)
		}
		rp.Append(round, until-from)
	}
	return rp
}

// judge runs promtool on the repository's rules over the recorded
// scrapes (replay) with the lifecycle's expected alerts at every minute,
// then the gap matrix over the same scrapes (gaps.Matrix): the MCO's
// incidents must page through a scrape gap as the lifecycles do.
func judge(t *testing.T, in *incident, rulesDir string) {
	t.Helper()
	rp := in.replay()
	values := rp.Values()
	var b bytes.Buffer
	b.WriteString(alerts.PromtoolTestHeader(filepath.Join(rulesDir, "*rules.yaml")) + "tests:\n")
	fmt.Fprintf(&b, "  - name: %s with the MCO deciding\n    interval: 1m\n    start_timestamp: %d\n    input_series:\n", in.l.Name, in.begin.Unix())
	for _, s := range slices.Sorted(maps.Keys(values)) {
		fmt.Fprintf(&b, "      - series: %s\n        values: %s\n", quote(s), expanding(values[s]))
	}
	b.WriteString("    promql_expr_test:\n")
	static := alertLabels(t, rulesDir)
	for _, name := range expectedAlerts(t, in.l) {
		if _, ok := static[name]; !ok { // promtool then says at which minutes it is missing
			t.Errorf("the lifecycle expects alert %s: it is in no rule file", name)
		}
	}
	for _, e := range in.l.Expect {
		for _, m := range e.Minutes() {
			writeAlertTests(t, &b, m, e.Firing, static)
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "lifecycle-"+in.l.Name+"-mco.yaml")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tools["E2E_PROMTOOL"], "test", "rules", path).CombinedOutput()
	if err != nil {
		kept := filepath.Join(os.TempDir(), filepath.Base(path))
		_ = os.WriteFile(kept, b.Bytes(), 0o644)
		t.Fatalf("promtool on the series the exporter served while the MCO played %s, against the lifecycle's expected alerts (test kept in %s):\n%s",
			in.l.Name, kept, out)
	}
	files, err := filepath.Glob(filepath.Join(rulesDir, "*rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rules, err := gaps.LoadRules(files, alerts.GroupEvalOrder)
	if err != nil {
		t.Fatal(err)
	}
	want, err := rules.Expected(in.l)
	if err != nil {
		t.Fatal(err)
	}
	var steps []int
	for _, r := range in.records[1:] {
		steps = append(steps, r.at)
	}
	gaps.Matrix(t, rules, rp, want, steps)
}

// writeAlertTests checks at minute m that exactly the alerts of firing
// fire: ALERTS{alertstate="firing"} holds their series and no other.
func writeAlertTests(t *testing.T, b *bytes.Buffer, m int, firing []string, static map[string]map[string]string) {
	t.Helper()
	var want []string
	for _, f := range firing {
		name, lbls := parseSelector(t, f)
		for k, v := range static[name] {
			if _, set := lbls[k]; !set {
				lbls[k] = v
			}
		}
		lbls["alertname"], lbls["alertstate"] = name, "firing"
		want = append(want, formatSeries("ALERTS", lbls))
	}
	slices.Sort(want)
	if len(want) == 0 {
		fmt.Fprintf(b, "      - {expr: 'ALERTS{alertstate=\"firing\"}', eval_time: %dm, exp_samples: []}\n", m)
		return
	}
	fmt.Fprintf(b, "      - expr: 'ALERTS{alertstate=\"firing\"}'\n        eval_time: %dm\n        exp_samples:\n", m)
	for _, a := range want {
		fmt.Fprintf(b, "          - {labels: %s, value: 1}\n", quote(a))
	}
}

// expectedAlerts are the names of the alerts a lifecycle expects firing.
func expectedAlerts(t *testing.T, l *lifecycle.Lifecycle) []string {
	t.Helper()
	var out []string
	for _, e := range l.Expect {
		for _, f := range e.Firing {
			if name, _ := parseSelector(t, f); !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	return out
}

// parseSelector reads name{k="v", ...}, the lifecycles' notation.
func parseSelector(t *testing.T, s string) (string, map[string]string) {
	t.Helper()
	name, rest, _ := strings.Cut(s, "{")
	lbls := map[string]string{}
	rest = strings.TrimSuffix(strings.TrimSpace(rest), "}")
	for rest != "" {
		k, after, ok := strings.Cut(rest, "=")
		if !ok {
			t.Fatalf("expected alert %s: not name{label=\"value\", ...}", s)
		}
		v, err := strconv.QuotedPrefix(strings.TrimSpace(after))
		if err != nil {
			t.Fatalf("expected alert %s: %v", s, err)
		}
		lbls[strings.TrimSpace(k)], _ = strconv.Unquote(v)
		rest = strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(after), v)), ",")
	}
	return name, lbls
}

// alertLabels are each alert's own labels (severity, namespace), from the
// rule files.
func alertLabels(t *testing.T, rulesDir string) map[string]map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(rulesDir, "*rules.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no rule files in %s: %v", rulesDir, err)
	}
	out := map[string]map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Groups []struct {
				Rules []struct {
					Alert  string            `json:"alert"`
					Labels map[string]string `json:"labels"`
				} `json:"rules"`
			} `json:"groups"`
		}
		if err := sigsyaml.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, g := range doc.Groups {
			for _, r := range g.Rules {
				if r.Alert != "" {
					out[r.Alert] = maps.Clone(r.Labels)
				}
			}
		}
	}
	return out
}

// quote is a YAML single-quoted scalar.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// expanding writes one value per minute in promtool's notation, a series
// that vanishes getting a stale marker at the next minute.
func expanding(vs []string) string {
	vs = slices.Clone(vs)
	for m := 1; m < len(vs); m++ {
		if vs[m] == "" && vs[m-1] != "" && vs[m-1] != "stale" {
			vs[m] = "stale"
		}
	}
	var parts []string
	for i := 0; i < len(vs); {
		j := i
		for j < len(vs) && vs[j] == vs[i] {
			j++
		}
		v, n := vs[i], j-i
		switch {
		case v == "" && n == 1:
			parts = append(parts, "_")
		case v == "": // _xN is N missing samples
			parts = append(parts, fmt.Sprintf("_x%d", n))
		case n == 1:
			parts = append(parts, v)
		default: // vxN is N+1 samples of v
			parts = append(parts, fmt.Sprintf("%sx%d", v, n-1))
		}
		i = j
	}
	return strings.Join(parts, " ")
}

// lifecycleTime moves a timestamp the MCO wrote during the incident to the
// lifecycle minute of the step it was written in: the incident runs in
// seconds, the lifecycle in minutes, and the rules compare timestamps with
// time(). Timestamps from before minute 0 (the seed's) are already on the
// lifecycle's clock.
func (in *incident) lifecycleTime(series string, v float64) float64 {
	name, _, _ := strings.Cut(series, "{")
	if !strings.HasSuffix(name, "_timestamp_seconds") || v < float64(in.begin.Unix()) {
		return v
	}
	for _, r := range in.records {
		if v <= float64(r.when.Unix()) {
			return float64(in.begin.Unix() + int64(r.at)*60)
		}
	}
	return v
}
