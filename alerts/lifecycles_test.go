package alerts

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
	"github.com/ocl-exporter/ocl_exporter/test/gaps"
	"github.com/ocl-exporter/ocl_exporter/test/lifecycle"
)

const lifecycleDir = "../testdata/lifecycles"

// lifecycleFile is the generated promtool test of a lifecycle.
func lifecycleFile(name string) string { return filepath.Join("tests", "lifecycle-"+name+".yaml") }

// TestLifecycleTestsAreGenerated keeps tests/lifecycle-<name>.yaml equal to
// what testdata/lifecycles/<name>/lifecycle.yaml generates: the exporter's
// offline path (the same as --snapshot) run on each stage, served by two
// replicas and scraped every minute across the stages, and the expected
// firing alerts at each minute as promql_expr_test on ALERTS. make
// test-rules runs them with the pinned promtool over the real rule files;
// go test ./alerts/ -update rewrites them.
//
// They are checked in rather than generated at test time so that the
// series promtool replays are reviewed with the lifecycle, make test-rules
// needs nothing but promtool, and a failure names the minute in a file one
// can read and rerun alone (bin/promtool test rules alerts/tests/lifecycle-x.yaml).
func TestLifecycleTestsAreGenerated(t *testing.T) {
	all, err := lifecycle.All(lifecycleDir)
	if err != nil {
		t.Fatal(err)
	}
	static := alertLabels(t)
	want := map[string]bool{}
	for _, l := range all {
		path := lifecycleFile(l.Name)
		want[path] = true
		t.Run(l.Name, func(t *testing.T) {
			got := promtoolLifecycle(t, l, static)
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			old, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test ./alerts/ -update generates it)", err)
			}
			if !bytes.Equal(old, got) {
				t.Errorf("%s is not what %s generates: go test ./alerts/ -update rewrites it", path, filepath.Join(l.Dir, lifecycle.File))
			}
		})
	}
	files, err := filepath.Glob(lifecycleFile("*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !want[f] {
			t.Errorf("%s has no lifecycle under %s: delete it", f, lifecycleDir)
		}
	}
}

// alertLabels are each alert's own labels (severity, namespace), which
// ALERTS carries besides the expression's.
func alertLabels(t *testing.T) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	for _, r := range alertRules(t) {
		out[r.Alert] = r.Labels
	}
	return out
}

// promtoolLifecycle writes the promtool test of l.
func promtoolLifecycle(t *testing.T, l *lifecycle.Lifecycle, static map[string]map[string]string) []byte {
	t.Helper()
	states, err := l.States()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Generated from %s/%s/%s by go test ./alerts/ -update: do not edit.\n",
		strings.TrimPrefix(lifecycleDir, "../"), l.Name, lifecycle.File)
	for _, line := range wrap(strings.Join(strings.Fields(l.Description), " "), 74) {
		fmt.Fprintf(&b, "# %s\n", line)
	}
	b.WriteString(PromtoolTestHeader("../*rules.yaml") + "tests:\n")
	fmt.Fprintf(&b, "  - name: lifecycle %s\n    interval: 1m\n    start_timestamp: %s\n", l.Name, l.Start.UTC().Format(time.RFC3339))
	b.WriteString("    input_series:\n")
	for _, s := range timeline(t, l, states) {
		fmt.Fprintf(&b, "      - series: %s\n        values: %s\n", quote(s.series), s.values)
	}
	b.WriteString("    promql_expr_test:\n")
	for _, e := range l.Expect {
		want := expectedAlerts(t, e.Firing, static)
		for _, m := range e.Minutes() {
			if len(want) == 0 {
				fmt.Fprintf(&b, "      - {expr: 'ALERTS{alertstate=\"firing\"}', eval_time: %dm, exp_samples: []}\n", m)
				continue
			}
			fmt.Fprintf(&b, "      - expr: 'ALERTS{alertstate=\"firing\"}'\n        eval_time: %dm\n        exp_samples:\n", m)
			for _, a := range want {
				fmt.Fprintf(&b, "          - {labels: %s, value: 1}\n", quote(a))
			}
		}
	}
	return b.Bytes()
}

// replayed is one input series over the whole lifecycle, in promtool's
// expanding notation.
type replayed struct{ series, values string }

// replayOf scrapes each stage once (the exporter serves the same text for
// as long as the objects do not change) and lays the scrapes out minute by
// minute: what Prometheus stores from two replicas, up included, of the
// series the rules and review read.
func replayOf(t *testing.T, l *lifecycle.Lifecycle, states []lifecycle.State) *gaps.Replay {
	t.Helper()
	rp := &gaps.Replay{Start: l.Start}
	_, history := readNames(t)
	generation := 0
	for _, st := range states {
		if st.Exporter == lifecycle.ExporterRescheduled {
			generation++
		}
		targets := replicaTargets(generation)
		round := gaps.Round{}
		if st.Exporter == lifecycle.ExporterDown {
			for _, target := range targets {
				round[formatSeries("up", target)] = 0
			}
		} else {
			for _, s := range read(scrapeTargets(t, sourcetest.FromUnstructured(t, st.Objects), targets), history) {
				round[s.series] = s.value
			}
		}
		rp.Append(round, st.Until-st.At)
	}
	return rp
}

// timeline is the replay as promtool's input series: a series that
// vanishes gets a stale marker at the next scrape, as Prometheus writes,
// then no samples.
func timeline(t *testing.T, l *lifecycle.Lifecycle, states []lifecycle.State) []replayed {
	t.Helper()
	values := replayOf(t, l, states).Values()
	var out []replayed
	for _, series := range slices.Sorted(maps.Keys(values)) {
		vs := values[series]
		for m := 1; m < len(vs); m++ {
			if vs[m] == "" && vs[m-1] != "" && vs[m-1] != "stale" {
				vs[m] = "stale"
			}
		}
		out = append(out, replayed{series, expanding(vs)})
	}
	return out
}

// expanding writes one value per minute ("" for none) in promtool's
// notation: "vxN" is N+1 samples of v, "_xN" N missing samples.
func expanding(vs []string) string {
	var parts []string
	for i := 0; i < len(vs); {
		j := i
		for j < len(vs) && vs[j] == vs[i] {
			j++
		}
		n := j - i
		switch {
		case vs[i] == "" && n == 1:
			parts = append(parts, "_")
		case vs[i] == "":
			parts = append(parts, fmt.Sprintf("_x%d", n))
		case n == 1:
			parts = append(parts, vs[i])
		default:
			parts = append(parts, fmt.Sprintf("%sx%d", vs[i], n-1))
		}
		i = j
	}
	return strings.Join(parts, " ")
}

// expectedAlerts turns the alerts of an expectation, PromQL selectors of
// equality matchers, into the ALERTS series they are, sorted.
func expectedAlerts(t *testing.T, firing []string, static map[string]map[string]string) []string {
	t.Helper()
	var out []string
	for _, f := range firing {
		ms, err := parser.ParseMetricSelector(f)
		if err != nil {
			t.Fatalf("expected alert %s: %v", f, err)
		}
		lbls := map[string]string{"alertstate": "firing"}
		for _, m := range ms {
			if m.Type != labels.MatchEqual {
				t.Fatalf("expected alert %s: only = matchers name an alert", f)
			}
			name := m.Name
			if name == model.MetricNameLabel {
				name = "alertname"
			}
			lbls[name] = m.Value
		}
		own, ok := static[lbls["alertname"]]
		if !ok {
			t.Fatalf("expected alert %s: no alert %s in the rule files", f, lbls["alertname"])
		}
		for k, v := range own {
			if _, set := lbls[k]; !set {
				lbls[k] = v
			}
		}
		out = append(out, formatSeries("ALERTS", lbls))
	}
	slices.Sort(out)
	return out
}

// quote is a YAML single-quoted scalar.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// wrap breaks text into lines of at most width characters.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
