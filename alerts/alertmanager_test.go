package alerts

import (
	"os"
	"regexp"
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

// TestExporterDownInhibitsEveryOtherAlert: without the exporter every other
// alert of the bundle is blind, so the inhibition whose source is
// OCLExporterDown names each of them, and nothing else. A new alert that
// is not added there pages through an exporter outage; this names it.
func TestExporterDownInhibitsEveryOtherAlert(t *testing.T) {
	b, err := os.ReadFile(alertmanagerFragment)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		InhibitRules []struct {
			SourceMatchers []string `json:"source_matchers"`
			TargetMatchers []string `json:"target_matchers"`
		} `json:"inhibit_rules"`
	}
	if err := sigsyaml.Unmarshal(b, &cfg); err != nil {
		t.Fatalf("%s: %v", alertmanagerFragment, err)
	}
	const source = `alertname="OCLExporterDown"`
	var targets []string
	for _, ir := range cfg.InhibitRules {
		if len(ir.SourceMatchers) == 1 && ir.SourceMatchers[0] == source {
			targets = append(targets, ir.TargetMatchers...)
		}
	}
	if len(targets) != 1 {
		t.Fatalf("%s: want one inhibit rule with source_matchers [%s] and one target matcher, found target matchers %q", alertmanagerFragment, source, targets)
	}
	named := map[string]bool{}
	for _, lm := range mustMatchers(t, targets[0]) {
		if lm.Name == "alertname" && lm.Type == labels.MatchRegexp {
			for _, name := range strings.Split(lm.Value, "|") {
				named[name] = true
			}
		}
	}
	for _, r := range alertRules(t) {
		switch {
		case r.Alert == "OCLExporterDown" && named[r.Alert]:
			t.Errorf("%s: OCLExporterDown inhibits itself", alertmanagerFragment)
		case r.Alert != "OCLExporterDown" && !named[r.Alert]:
			t.Errorf("%s: add %s to the target_matchers of the OCLExporterDown inhibition: it is blind without the exporter too", alertmanagerFragment, r.Alert)
		}
		delete(named, r.Alert)
	}
	for name := range named {
		t.Errorf("%s: the OCLExporterDown inhibition names %s, which is no alert of alerts/*rules.yaml", alertmanagerFragment, name)
	}
}

// mustMatchers parses one Alertmanager matcher as PromQL label matchers.
func mustMatchers(t *testing.T, m string) []*labels.Matcher {
	t.Helper()
	ms, err := parser.ParseMetricSelector("{" + m + "}")
	if err != nil {
		t.Fatalf("matcher %s: %v", m, err)
	}
	return ms
}
