package alerts

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/ocl-exporter/ocl_exporter/analysis"
	"github.com/ocl-exporter/ocl_exporter/classify"
	"github.com/ocl-exporter/ocl_exporter/docs"
	"github.com/ocl-exporter/ocl_exporter/runbooks"
)

// RunbookBase is where every alert's runbook_url points: the base written
// once per rule, followed by <AlertName>.md. The deploy bundle's generator
// pins it to a release, or rewrites it for forks.
var RunbookBase = runbooks.Main

// ruleFiles are the files promtool checks (the Makefile's test-rules).
const ruleFiles = "*rules.yaml"

// loadRules parses every rule file as Prometheus does and returns its rules
// by group.
func loadRules(t *testing.T) []rulefmt.RuleGroup {
	t.Helper()
	paths, err := filepath.Glob(ruleFiles)
	if err != nil || len(paths) == 0 {
		t.Fatalf("no rule files %s: %v", ruleFiles, err)
	}
	var groups []rulefmt.RuleGroup
	for _, p := range paths {
		rgs, errs := rulefmt.ParseFile(p, false, model.UTF8Validation)
		for _, err := range errs {
			t.Errorf("%s: %v", p, err)
		}
		if rgs != nil {
			groups = append(groups, rgs.Groups...)
		}
	}
	return groups
}

// alertRules are the alerting rules of every group.
func alertRules(t *testing.T) []rulefmt.Rule {
	t.Helper()
	var out []rulefmt.Rule
	for _, g := range loadRules(t) {
		for _, r := range g.Rules {
			if r.Alert != "" {
				out = append(out, r)
			}
		}
	}
	return out
}

var (
	alertName = regexp.MustCompile(`^OCL[A-Z][a-zA-Z0-9]*$`)
	// The mixin style guide: a summary is a static sentence.
	summaryStyle = regexp.MustCompile(`^[A-Z][^{}]*\.$`)
	recordName   = regexp.MustCompile(`^[a-z_]+:[a-z_]+(:[a-z_]+)*$`)
)

// severities are the OpenShift alerting consistency levels this bundle
// uses; critical is reserved for cluster-wide loss of service, which no OCL
// failure is (nodes keep running their current image).
var severities = []string{"warning", "info"}

// mcoAlerts are the MCO's own OCL alerts (its install/ prometheus rules):
// the same name for a different rule would confuse routing and silences.
var mcoAlerts = []string{"OCLBuildFailed", "OCLBuildDegraded", "OCLImagePushFailed"}

func TestAlertConventions(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range alertRules(t) {
		t.Run(r.Alert, func(t *testing.T) {
			if seen[r.Alert] {
				t.Errorf("alert defined twice")
			}
			seen[r.Alert] = true
			if slices.Contains(mcoAlerts, r.Alert) {
				t.Errorf("the MCO ships an alert of this name")
			}
			if !alertName.MatchString(r.Alert) || len(r.Alert) > 50 {
				t.Errorf("name must be OCL + CamelCase, at most 50 characters")
			}
			if !slices.Contains(severities, r.Labels["severity"]) {
				t.Errorf("severity %q, want one of %v", r.Labels["severity"], severities)
			}
			if r.Labels["namespace"] == "" {
				t.Errorf("no namespace label")
			}
			if r.For <= 0 {
				t.Errorf("no for: every alert waits before it fires")
			}
			if s := r.Annotations["summary"]; !summaryStyle.MatchString(s) {
				t.Errorf("summary %q: want a static sentence, capital first, final period", s)
			}
			// absent() has no labels to name: its object is in the text.
			if d := r.Annotations["description"]; !strings.Contains(d, "{{") && !strings.HasPrefix(r.Expr, "absent(") {
				t.Errorf("description %q is not templated", d)
			}
			if u := r.Annotations["runbook_url"]; u != RunbookBase+r.Alert+".md" {
				t.Errorf("runbook_url %q, want %q", u, RunbookBase+r.Alert+".md")
			}
		})
	}
	for _, g := range loadRules(t) {
		for _, r := range g.Rules {
			if r.Record != "" && !recordName.MatchString(r.Record) {
				t.Errorf("recording rule %s: want level:metric:operations", r.Record)
			}
		}
	}
}

// runbookSections are the openshift/runbooks template's sections, in order,
// and ours: how to review the incident from history.
var runbookSections = []string{"## Meaning", "## Impact", "## Diagnosis", "## Mitigation", "## After the incident"}

func TestEveryAlertHasARunbookAndEveryRunbookAnAlert(t *testing.T) {
	alerts := map[string]bool{}
	for _, r := range alertRules(t) {
		alerts[r.Alert] = true
	}
	files, err := filepath.Glob("../runbooks/*.md")
	if err != nil {
		t.Fatal(err)
	}
	runbooks := map[string]bool{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".md")
		runbooks[name] = true
		if !alerts[name] {
			t.Errorf("runbooks/%s.md: no alert %s", name, name)
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		if !strings.HasPrefix(text, "# "+name+"\n") {
			t.Errorf("runbooks/%s.md: must start with # %s", name, name)
		}
		last := -1
		for _, s := range runbookSections {
			i := strings.Index(text, "\n"+s+"\n")
			if i <= last {
				t.Errorf("runbooks/%s.md: section %q missing or out of order", name, s)
			}
			last = i
		}
	}
	for a := range alerts {
		if !runbooks[a] {
			t.Errorf("alert %s has no runbooks/%s.md", a, a)
		}
	}
}

// readMetricsDoc reads the metric tables of docs/metrics.md, which a test
// in cmd/ocl_exporter keeps equal to a real scrape.
func readMetricsDoc(t *testing.T) map[string]docs.Metric {
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
	return metrics
}

// documentedMetrics are the metric names of docs/metrics.md.
func documentedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for name := range readMetricsDoc(t) {
		out[name] = true
	}
	return out
}

// knownNames are what an expression may select: the exporter's metrics, the
// recording rules, and Prometheus' own up, ALERTS and ALERTS_FOR_STATE.
func knownNames(t *testing.T) map[string]bool {
	t.Helper()
	names := documentedMetrics(t)
	names["up"], names["ALERTS"], names[forState] = true, true, true
	for _, g := range loadRules(t) {
		for _, r := range g.Rules {
			if r.Record != "" {
				names[r.Record] = true
			}
		}
	}
	return names
}

// labelValues are the closed sets of label values expressions match on:
// a matcher on any other value could never match.
func labelValues() map[string][]string {
	classes := []string{""} // ocl_operator_degraded while not Degraded
	for _, c := range classify.Classes() {
		classes = append(classes, string(c))
	}
	var phases []string
	for _, p := range analysis.BuildPhases {
		phases = append(phases, string(p))
	}
	var conditions []string
	for _, c := range analysis.PoolConditionTypes {
		conditions = append(conditions, string(c))
	}
	return map[string][]string{
		"class":     classes,
		"phase":     append(phases, analysis.UpdatePhases...),
		"condition": conditions,
		"status":    analysis.ConditionStatuses,
	}
}

// plainAlternation is a matcher value the check can read: a value, or a
// regexp that is an alternation of values.
var plainAlternation = regexp.MustCompile(`^[A-Za-z_|]*$`)

// nameAlternation is a __name__ matcher value naming metrics outright.
var nameAlternation = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*(\|[a-zA-Z_:][a-zA-Z0-9_:]*)*$`)

// selectorNames are the metrics a selector reads: its name, or the names
// a __name__ matcher lists ({__name__=~"a|b"} reads both with one index
// lookup, where "a or b" takes two).
func selectorNames(vs *parser.VectorSelector) ([]string, error) {
	if vs.Name != "" {
		return []string{vs.Name}, nil
	}
	for _, m := range vs.LabelMatchers {
		if m.Name == model.MetricNameLabel && (m.Type == labels.MatchEqual || m.Type == labels.MatchRegexp) && nameAlternation.MatchString(m.Value) {
			return strings.Split(m.Value, "|"), nil
		}
	}
	return nil, fmt.Errorf("%s: name the metrics it reads, by name or with __name__=~\"a|b\"", vs)
}

// exprProblems parses expr and checks every selector: the metric is known
// and every closed-set label value it matches exists.
func exprProblems(expr string, names map[string]bool) []string {
	e, err := parser.ParseExpr(expr)
	if err != nil {
		return []string{err.Error()}
	}
	values := labelValues()
	var out []string
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		read, err := selectorNames(vs)
		if err != nil {
			out = append(out, err.Error())
		}
		for _, name := range read {
			if !names[name] {
				out = append(out, name+" is not a metric the exporter emits (docs/metrics.md), a recording rule, up, ALERTS or ALERTS_FOR_STATE")
			}
		}
		for _, m := range vs.LabelMatchers {
			allowed, closed := values[m.Name]
			if !closed {
				continue
			}
			if !plainAlternation.MatchString(m.Value) {
				out = append(out, fmt.Sprintf("%s matcher %q is not a plain alternation of values", m.Name, m.Value))
				continue
			}
			for _, v := range strings.Split(m.Value, "|") {
				if !slices.Contains(allowed, v) {
					out = append(out, fmt.Sprintf("%s=%q is not a value the exporter reports", m.Name, v))
				}
			}
		}
		return nil
	})
	return out
}

func TestExpressionsNameEmittedMetricsAndKnownValues(t *testing.T) {
	names := knownNames(t)
	for _, g := range loadRules(t) {
		for _, r := range g.Rules {
			for _, p := range exprProblems(r.Expr, names) {
				t.Errorf("%s/%s%s: %s", g.Name, r.Alert, r.Record, p)
			}
		}
	}
	for i, q := range docQueries(t) {
		for _, p := range exprProblems(q, names) {
			t.Errorf("docs/queries.md query %d: %s", i+1, p)
		}
	}
}

// TestExprProblemsRejects makes sure the check above can fail.
func TestExprProblemsRejects(t *testing.T) {
	names := knownNames(t)
	for _, expr := range []string{
		`mosb_build_phase_typo == 1`,
		`mosb_failure_class{class="no_such_class"} == 1`,
		`mosb_failure_class{class=~"oom_killed|oomkilled"} == 1`,
		`mosb_build_phase{phase="Running"} == 1`,
		`{__name__=~"mosb_info|mosb_build_phase_typo"} == 1`,
		`{__name__=~"mosb_.*"} == 1`,
	} {
		if len(exprProblems(expr, names)) == 0 {
			t.Errorf("%s passed the check", expr)
		}
	}
}

// TestEveryAlertFiresInATest: a rule no promtool test sees firing could be
// dead (a typo in a metric name, a condition that cannot hold) and every
// test would pass. Each alert fires in at least one test: an alert_rule_test
// with exp_alerts, or an ALERTS sample of a lifecycle.
func TestEveryAlertFiresInATest(t *testing.T) {
	fired := map[string]bool{}
	for p, f := range promtoolTests(t) {
		for _, tg := range f.Tests {
			for _, a := range tg.AlertRuleTest {
				if len(a.ExpAlerts) > 0 {
					fired[a.Alertname] = true
				}
			}
			for _, e := range tg.PromqlExprTest {
				for _, s := range e.ExpSamples {
					ms, err := parser.ParseMetricSelector(s.Labels)
					if err != nil {
						t.Fatalf("%s: exp_samples labels %s: %v", p, s.Labels, err)
					}
					var name, state string
					for _, m := range ms {
						switch m.Name {
						case "alertname":
							name = m.Value
						case "alertstate":
							state = m.Value
						}
					}
					if state == "firing" {
						fired[name] = true
					}
				}
			}
		}
	}
	for _, r := range alertRules(t) {
		if !fired[r.Alert] {
			t.Errorf("no promtool test in tests/ sees %s fire: add one (docs/alerts.md, \"Scenario tests\")", r.Alert)
		}
	}
}
