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

var update = flag.Bool("update", false, "rewrite the input_series of tests/scenario-*.yaml from the exporter's output")

const (
	scenarioDir = "../testdata/scenarios"
	// sampleCount is how many one-minute samples each scenario series holds
	// after the first: eight hours, past every alert's for (6h at most).
	sampleCount = 480
)

// scenarioFile is the promtool test of a scenario directory.
func scenarioFile(name string) string { return filepath.Join("tests", "scenario-"+name+".yaml") }

// TestScenarioInputSeriesAreTheExportersOutput keeps the promtool scenario
// tests honest: the input_series of tests/scenario-<name>.yaml are exactly
// what two exporter replicas serve for testdata/scenarios/<name>, held
// constant for eight hours from the snapshot's time. The expected alerts
// are written by hand; go test -update rewrites only the input series.
func TestScenarioInputSeriesAreTheExportersOutput(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(scenarioDir, "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no scenarios in %s: %v", scenarioDir, err)
	}
	for _, dir := range dirs {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			path := scenarioFile(name)
			doc, err := readScenario(path, name)
			if err != nil {
				t.Fatal(err)
			}
			group := testGroup(t, doc)
			want := seriesNode(scrape(t, dir))
			if *update {
				setKey(group, "start_timestamp", scalar(sourcetest.Now.Format(time.RFC3339)))
				setKey(group, "input_series", want)
				if err := writeYAML(path, doc); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got := getKey(group, "start_timestamp"); got == nil || got.Value != sourcetest.Now.Format(time.RFC3339) {
				t.Errorf("%s: start_timestamp must be %s, sourcetest.Now, so timestamps are real", path, sourcetest.Now.Format(time.RFC3339))
			}
			if diff := seriesDiff(getKey(group, "input_series"), want); diff != "" {
				t.Errorf("%s: input_series differ from the exporter's output (go test ./alerts/ -update rewrites them; then review the expected alerts):\n%s", path, diff)
			}
		})
	}
}

// TestScenarioTestsCoverEveryAlert makes "every other alert does not fire"
// explicit: at each eval_time a scenario test names every alert, with the
// expected firing ones and an empty exp_alerts for the rest.
func TestScenarioTestsCoverEveryAlert(t *testing.T) {
	var all []string
	for _, r := range alertRules(t) {
		all = append(all, r.Alert)
	}
	slices.Sort(all)
	files, err := filepath.Glob(filepath.Join("tests", "scenario-*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Tests []struct {
				AlertRuleTest []struct {
					EvalTime  string `yaml:"eval_time"`
					Alertname string `yaml:"alertname"`
				} `yaml:"alert_rule_test"`
			} `yaml:"tests"`
		}
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, tg := range doc.Tests {
			named := map[string][]string{}
			for _, a := range tg.AlertRuleTest {
				named[a.EvalTime] = append(named[a.EvalTime], a.Alertname)
			}
			if len(named) == 0 {
				t.Errorf("%s: no alert_rule_test", f)
			}
			for _, at := range slices.Sorted(maps.Keys(named)) {
				got := slices.Sorted(slices.Values(named[at]))
				if !slices.Equal(got, all) {
					t.Errorf("%s at %s: names %v, want each alert exactly once: %v", f, at, got, all)
				}
			}
		}
	}
}

// readScenario parses a scenario test, or returns a new one to fill in.
func readScenario(path, name string) (*yaml.Node, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) && *update {
		b = fmt.Appendf(nil, "%stests:\n  - name: %s\n    interval: 1m\n    alert_rule_test: []\n", PromtoolTestHeader("../*rules.yaml"), name)
	} else if err != nil {
		return nil, fmt.Errorf("%w (go test ./alerts/ -update creates it)", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &doc, nil
}

// testGroup is the first (only) test group of a scenario test.
func testGroup(t *testing.T, doc *yaml.Node) *yaml.Node {
	t.Helper()
	tests := getKey(doc.Content[0], "tests")
	if tests == nil || tests.Kind != yaml.SequenceNode || len(tests.Content) != 1 {
		t.Fatal("want exactly one test group under tests")
	}
	return tests.Content[0]
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

// setKey sets key in mapping m, appending it when absent.
func setKey(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, scalar(key), v)
}

func writeYAML(path string, doc *yaml.Node) error {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
