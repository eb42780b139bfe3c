package alerts

import (
	"bytes"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
)

var update = flag.Bool("update", false, "rewrite the generated promtool tests of tests/ (make generate)")

const (
	scenarioDir = "../testdata/scenarios"
	// sampleCount is how many one-minute samples each scenario series holds
	// after the first: eight hours, past every alert's for (6h at most).
	sampleCount = 480
)

// scenarioFile is the promtool test of a scenario directory, and
// expectFile the hand-written part it is generated from.
func scenarioFile(name string) string { return filepath.Join("tests", "scenario-"+name+".yaml") }
func expectFile(name string) string   { return filepath.Join("scenarios", name+".yaml") }

// TestScenarioTestsAreGenerated keeps tests/scenario-<name>.yaml equal to
// what make generate (go test ./alerts/ -update) writes from two sources:
// the input_series are what two exporter replicas serve for
// testdata/scenarios/<name>, held constant for eight hours from the
// snapshot's time; the expected alerts are scenarios/<name>.yaml's, written
// by hand (when promtool evaluates, and the alerts firing then), with a
// silent row for every other alert at each evaluation, so "nothing else
// fires" is promtool's to check and a new alert needs no hand edit.
func TestScenarioTestsAreGenerated(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(scenarioDir, "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no scenarios in %s: %v", scenarioDir, err)
	}
	var all []string
	for _, r := range alertRules(t) {
		all = append(all, r.Alert)
	}
	slices.Sort(all)
	want := map[string]bool{}
	for _, dir := range dirs {
		name := filepath.Base(dir)
		path := scenarioFile(name)
		want[path] = true
		t.Run(name, func(t *testing.T) {
			src, err := readExpect(expectFile(name), all)
			if err != nil {
				t.Fatal(err)
			}
			got, err := src.promtool(name, seriesNode(scrape(t, dir)), all)
			if err != nil {
				t.Fatal(err)
			}
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			old, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (make generate writes it)", err)
			}
			if !bytes.Equal(old, got) {
				t.Errorf("%s is not what %s and %s generate (make generate rewrites it):\n%s", path, expectFile(name), dir, staleness(old, got))
			}
		})
	}
	files, err := filepath.Glob(scenarioFile("*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !want[f] {
			t.Errorf("%s has no scenario under %s: delete it", f, scenarioDir)
		}
	}
}

// expect is the hand-written part of a scenario test.
type expect struct {
	description []string     // the leading comment, without "# "
	evalTimes   []string     // when promtool evaluates
	firing      []*yaml.Node // alert_rule_test rows, each with exp_alerts
}

// readExpect reads and checks the expectations of a scenario: every row
// at one of its eval_times, of an alert of the rules, firing, and alone.
func readExpect(path string, alerts []string) (*expect, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: write when promtool evaluates the scenario and the alerts firing then (docs/alerts.md, \"Scenario tests\")", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	e := &expect{}
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "#") {
			break
		}
		e.description = append(e.description, strings.TrimPrefix(strings.TrimPrefix(line, "#"), " "))
	}
	root := doc.Content[0]
	if times := getKey(root, "eval_times"); times != nil {
		for _, n := range times.Content {
			e.evalTimes = append(e.evalTimes, n.Value)
		}
	}
	if len(e.evalTimes) == 0 {
		return nil, fmt.Errorf("%s: no eval_times", path)
	}
	seen := map[[2]string]bool{}
	var rows []*yaml.Node
	if r := getKey(root, "alert_rule_test"); r != nil {
		rows = r.Content
	}
	for _, row := range rows {
		at, name := keyValue(row, "eval_time"), keyValue(row, "alertname")
		switch exp := getKey(row, "exp_alerts"); {
		case !slices.Contains(e.evalTimes, at):
			return nil, fmt.Errorf("%s: %s at %s: %s is not one of eval_times %v", path, name, at, at, e.evalTimes)
		case !slices.Contains(alerts, name):
			return nil, fmt.Errorf("%s: %s at %s: no such alert in the rule files", path, name, at)
		case exp == nil || len(exp.Content) == 0:
			return nil, fmt.Errorf("%s: %s at %s expects nothing: delete the row, make generate writes the silent ones", path, name, at)
		case seen[[2]string{at, name}]:
			return nil, fmt.Errorf("%s: %s at %s: two rows, want one listing every firing alert", path, name, at)
		}
		seen[[2]string{at, name}] = true
		e.firing = append(e.firing, row)
	}
	return e, nil
}

// keyValue is the scalar value of key in mapping m, or "".
func keyValue(m *yaml.Node, key string) string {
	if v := getKey(m, key); v != nil {
		return v.Value
	}
	return ""
}

// promtool writes the promtool test of scenario name: at each eval_time
// every alert, sorted, the firing ones as expected and the others silent.
func (e *expect) promtool(name string, series *yaml.Node, alerts []string) ([]byte, error) {
	rows := &yaml.Node{Kind: yaml.SequenceNode}
	for _, at := range e.evalTimes {
		for _, a := range alerts {
			i := slices.IndexFunc(e.firing, func(r *yaml.Node) bool {
				return keyValue(r, "eval_time") == at && keyValue(r, "alertname") == a
			})
			if i >= 0 {
				rows.Content = append(rows.Content, e.firing[i])
				continue
			}
			rows.Content = append(rows.Content, &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle, Content: []*yaml.Node{
				scalar("eval_time"), scalar(at), scalar("alertname"), scalar(a),
			}})
		}
	}
	group := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		scalar("name"), scalar(name),
		scalar("interval"), scalar("1m"),
		scalar("alert_rule_test"), rows,
		scalar("start_timestamp"), scalar(sourcetest.Now.Format(time.RFC3339)),
		scalar("input_series"), series,
	}}
	var b bytes.Buffer
	fmt.Fprintf(&b, scenarioHeader, name, expectFile(name))
	for _, line := range e.description {
		b.WriteString(strings.TrimRight("# "+line, " ") + "\n")
	}
	b.WriteString(PromtoolTestHeader("../*rules.yaml"))
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	tests := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{scalar("tests"), {Kind: yaml.SequenceNode, Content: []*yaml.Node{group}}}}
	if err := enc.Encode(tests); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", name, err)
	}
	return b.Bytes(), nil
}

const scenarioHeader = `# Scenario testdata/scenarios/%[1]s, generated with the alerts expected in
# alerts/%[2]s by make generate: do not edit.
#
# input_series are what two exporter replicas serve for the scenario, held
# constant for 8 hours. start_timestamp is the snapshot's time
# (sourcetest.Now), so the *_timestamp_seconds values are real and time()
# is the snapshot's time plus eval_time. At each eval_time every alert is
# named: the firing ones as expected, every other with no exp_alerts.
#
`

// staleness says how a stale scenario test differs from the generated
// one: by alert and eval_time, then by input series.
func staleness(old, want []byte) string {
	var o, w promtoolFile
	if err := yaml.Unmarshal(old, &o); err != nil || len(o.Tests) != 1 {
		return fmt.Sprintf("  unreadable: %v", err)
	}
	if err := yaml.Unmarshal(want, &w); err != nil || len(w.Tests) != 1 {
		return fmt.Sprintf("  generated unreadable: %v", err)
	}
	rows := func(f promtoolFile) map[string]string {
		out := map[string]string{}
		for _, r := range f.Tests[0].AlertRuleTest {
			out[r.Alertname+" at "+r.EvalTime] = fmt.Sprint(r.ExpAlerts)
		}
		return out
	}
	or, wr := rows(o), rows(w)
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(wr)) {
		switch got, ok := or[k]; {
		case !ok:
			fmt.Fprintf(&b, "  %s: no row\n", k)
		case got != wr[k]:
			fmt.Fprintf(&b, "  %s: other exp_alerts\n", k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(or)) {
		if _, ok := wr[k]; !ok {
			fmt.Fprintf(&b, "  %s: a row for no expectation\n", k)
		}
	}
	var od, wd yaml.Node
	if yaml.Unmarshal(old, &od) == nil && yaml.Unmarshal(want, &wd) == nil {
		b.WriteString(seriesDiff(inputSeries(&od), inputSeries(&wd)))
	}
	if b.Len() == 0 {
		b.WriteString("  comments or layout\n")
	}
	return b.String()
}

// inputSeries is the input_series node of a one-group promtool test.
func inputSeries(doc *yaml.Node) *yaml.Node {
	tests := getKey(doc.Content[0], "tests")
	if tests == nil || len(tests.Content) != 1 {
		return nil
	}
	return getKey(tests.Content[0], "input_series")
}

// seriesNode is the input_series of samples, each value constant.
func seriesNode(scraped []sample) *yaml.Node {
	seq := &yaml.Node{Kind: yaml.SequenceNode}
	for _, s := range scraped {
		seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
			scalar("series"), {Kind: yaml.ScalarNode, Value: s.series, Style: yaml.SingleQuotedStyle},
			scalar("values"), scalar(fmt.Sprintf("%sx%d", formatValue(s.value), sampleCount)),
		}})
	}
	return seq
}

// seriesDiff compares two input_series by content, not formatting.
func seriesDiff(got, want *yaml.Node) string {
	lines := func(n *yaml.Node) []string {
		var out []string
		if n == nil {
			return out
		}
		for _, item := range n.Content {
			series, values := getKey(item, "series"), getKey(item, "values")
			if series != nil && values != nil {
				out = append(out, series.Value+" "+values.Value)
			}
		}
		return out
	}
	g, w := lines(got), lines(want)
	var b strings.Builder
	for _, l := range w {
		if !slices.Contains(g, l) {
			fmt.Fprintf(&b, "  missing: %s\n", l)
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			fmt.Fprintf(&b, "  extra:   %s\n", l)
		}
	}
	return b.String()
}

func scalar(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v} }

// getKey returns the value of key in mapping m, or nil.
func getKey(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
