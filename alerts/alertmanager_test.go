package alerts

import (
	"bytes"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	sigsyaml "sigs.k8s.io/yaml"
)

const alertmanagerFragment = "../deploy/alertmanager/alertmanager.yaml"

// TestAlertmanagerFragmentNamesRealAlerts keeps the shipped routing and
// inhibition in step with the rules: every alert name a matcher spells out
// exists, and the labels it groups and compares by are labels the alerts
// carry (or cluster, which a fleet adds). The integration suite loads the
// fragment into a real Alertmanager and counts its notifications.
func TestAlertmanagerFragmentNamesRealAlerts(t *testing.T) {
	b, err := os.ReadFile(alertmanagerFragment)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Route        route `json:"route"`
		InhibitRules []struct {
			SourceMatchers []string `json:"source_matchers"`
			TargetMatchers []string `json:"target_matchers"`
			Equal          []string `json:"equal"`
		} `json:"inhibit_rules"`
		Receivers []struct {
			Name string `json:"name"`
		} `json:"receivers"`
	}
	if err := sigsyaml.UnmarshalStrict(b, &cfg); err != nil {
		t.Fatalf("%s: %v", alertmanagerFragment, err)
	}
	// The MCO's own alerts (install/0000_90_machine-config_01_prometheus-rules.yaml)
	// the fragment may inhibit or spare by name.
	alerts := map[string]bool{"OCLBuildFailed": true, "OCLBuildDegraded": true, "OCLImagePushFailed": true}
	known := map[string]bool{"cluster": true, "alertname": true}
	for _, r := range alertRules(t) {
		alerts[r.Alert] = true
		for k := range r.Labels {
			known[k] = true
		}
		for _, l := range exprLabels(r.Expr) {
			known[l] = true
		}
	}
	var matchers []string
	var walk func(r route)
	walk = func(r route) {
		matchers = append(matchers, r.Matchers...)
		for _, l := range r.GroupBy {
			if !known[l] {
				t.Errorf("route groups by %s, which no alert carries", l)
			}
		}
		for _, c := range r.Routes {
			walk(c)
		}
	}
	walk(cfg.Route)
	for _, ir := range cfg.InhibitRules {
		matchers = append(append(matchers, ir.SourceMatchers...), ir.TargetMatchers...)
		for _, l := range ir.Equal {
			if !known[l] {
				t.Errorf("inhibit rule compares %s, which no alert carries", l)
			}
		}
	}
	for _, m := range matchers {
		ms, err := parser.ParseMetricSelector("{" + m + "}")
		if err != nil {
			t.Errorf("matcher %s: %v", m, err)
			continue
		}
		for _, lm := range ms {
			if lm.Name != "alertname" || lm.Type == labels.MatchNotRegexp {
				continue
			}
			for _, name := range strings.Split(lm.Value, "|") {
				if plainName.MatchString(name) && !alerts[name] {
					t.Errorf("matcher %s names %s, which is no alert of alerts/*rules.yaml", m, name)
				}
			}
		}
	}
}

// route is one node of Alertmanager's routing tree, as far as the test
// reads it.
type route struct {
	Receiver       string   `json:"receiver"`
	Matchers       []string `json:"matchers"`
	GroupBy        []string `json:"group_by"`
	GroupWait      string   `json:"group_wait"`
	GroupInterval  string   `json:"group_interval"`
	RepeatInterval string   `json:"repeat_interval"`
	Routes         []route  `json:"routes"`
}

// plainName is an alert name, not a pattern such as OCL.+.
var plainName = regexp.MustCompile(`^[A-Za-z0-9]+$`)

// exprLabels are the labels an alert expression can yield: those its
// selectors match on or aggregate by. Good enough to tell a grouping
// label that no alert has.
func exprLabels(expr string) []string {
	e, err := parser.ParseExpr(expr)
	if err != nil {
		return nil
	}
	var out []string
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		switch n := n.(type) {
		case *parser.AggregateExpr:
			out = append(out, n.Grouping...)
		case *parser.VectorSelector:
			for _, m := range n.LabelMatchers {
				out = append(out, m.Name)
			}
		}
		return nil
	})
	return out
}

// exporterDownTargets is the target_matchers line of the inhibition whose
// source is OCLExporterDown, the one generated line of the fragment.
var exporterDownTargets = regexp.MustCompile(`(?m)(^  - source_matchers: \['alertname="OCLExporterDown"'\]\n    target_matchers: \['alertname=~")([^"]*)("'\]$)`)

// TestExporterDownInhibitsEveryOtherAlert: without the exporter every other
// alert of the bundle is blind, so the inhibition whose source is
// OCLExporterDown names each of them, and nothing else: make generate
// (go test ./alerts/ -update) writes the list from the rule files, and a
// new alert needs no edit there.
func TestExporterDownInhibitsEveryOtherAlert(t *testing.T) {
	b, err := os.ReadFile(alertmanagerFragment)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(exporterDownTargets.FindAll(b, -1)); n != 1 {
		t.Fatalf("%s: want one inhibit rule with source_matchers ['alertname=\"OCLExporterDown\"'] followed by one target_matchers ['alertname=~\"...\"'], found %d", alertmanagerFragment, n)
	}
	var others []string
	for _, r := range alertRules(t) {
		if r.Alert != "OCLExporterDown" {
			others = append(others, r.Alert)
		}
	}
	slices.Sort(others)
	want := exporterDownTargets.ReplaceAll(b, []byte("${1}"+strings.Join(others, "|")+"${3}"))
	if *update {
		if err := os.WriteFile(alertmanagerFragment, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	named := strings.Split(string(exporterDownTargets.FindSubmatch(b)[2]), "|")
	for _, a := range others {
		if !slices.Contains(named, a) {
			t.Errorf("%s: the OCLExporterDown inhibition does not name %s, which is blind without the exporter too (make generate)", alertmanagerFragment, a)
		}
	}
	for _, a := range named {
		if !slices.Contains(others, a) {
			t.Errorf("%s: the OCLExporterDown inhibition names %s, which is no other alert of alerts/*rules.yaml (make generate)", alertmanagerFragment, a)
		}
	}
	if !bytes.Equal(b, want) && !t.Failed() {
		t.Errorf("%s: the OCLExporterDown inhibition is not in the order make generate writes", alertmanagerFragment)
	}
}
