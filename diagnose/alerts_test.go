package diagnose

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"sigs.k8s.io/yaml"

	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
)

// unchecked are the alerts no check links, with why: Checks[].Alerts is
// the one alert-to-check table.
var unchecked = map[string]string{
	// The exporter diagnosing the cluster is the exporter up and reading
	// it; a down exporter cannot report itself.
	"OCLExporterDown": "the report is the exporter running",
}

type rule struct {
	Alert  string            `json:"alert"`
	Record string            `json:"record"`
	Expr   string            `json:"expr"`
	For    string            `json:"for"`
	Annot  map[string]string `json:"annotations"`
}

// rules reads alerts/*rules.yaml, by alert or record name.
func rules(t *testing.T) map[string]rule {
	t.Helper()
	paths, err := filepath.Glob("../alerts/*rules.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no rule files: %v", err)
	}
	out := map[string]rule{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			Groups []struct{ Rules []rule } `json:"groups"`
		}
		if err := yaml.Unmarshal(b, &f); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, g := range f.Groups {
			for _, r := range g.Rules {
				out[r.Alert+r.Record] = r
			}
		}
	}
	return out
}

// TestEveryAlertHasACheck: every alert of alerts/*rules.yaml is linked by
// a check (Checks[].Alerts) that reports its condition, or is in
// unchecked; every alert a check links exists, with its runbook.
func TestEveryAlertHasACheck(t *testing.T) {
	rs := rules(t)
	linked := map[string]bool{}
	for _, c := range Checks {
		for _, a := range c.Alerts {
			linked[a] = true
			if _, ok := rs[a]; !ok {
				t.Errorf("check %s links alert %s, which no rule file defines", c.ID, a)
			}
			if _, err := os.Stat(filepath.Join("../runbooks", a+".md")); err != nil {
				t.Errorf("check %s links runbook %s: %v", c.ID, a, err)
			}
		}
	}
	for name, r := range rs {
		_, exempt := unchecked[name]
		switch {
		case r.Alert == "":
		case exempt && linked[name]:
			t.Errorf("alert %s is linked by a check and listed in unchecked: drop it from unchecked", name)
		case !exempt && !linked[name]:
			t.Errorf("alert %s has no diagnose check: add it to the Alerts of the check that reports its condition (diagnose.Checks)", name)
		}
	}
	for name := range unchecked {
		if _, ok := rs[name]; !ok {
			t.Errorf("unchecked names %s, which no rule file defines: drop it", name)
		}
	}
}

// TestFailuresLinkExistingRunbooks: every failed check of every fixture
// names the runbook of one of its alerts, and that runbook exists.
func TestFailuresLinkExistingRunbooks(t *testing.T) {
	for name, dir := range fixtures(t) {
		r := report(t, dir, Options{})
		visit(r, func(c Check) {
			if c.Status != Failed {
				return
			}
			for _, f := range c.Findings {
				if f.Runbook == nil {
					t.Errorf("%s: failed check %s has a finding without a runbook", name, c.ID)
					continue
				}
				if !slices.Contains(spec(c.ID).Alerts, f.Runbook.Alert) {
					t.Errorf("%s: check %s links %s, not one of its alerts", name, c.ID, f.Runbook.Alert)
				}
				if _, err := os.Stat(filepath.Join("../runbooks", f.Runbook.Alert+".md")); err != nil {
					t.Errorf("%s: %v", name, err)
				}
				if f.Runbook.URL != testRunbookBase+f.Runbook.Alert+".md" {
					t.Errorf("%s: runbook URL %s is not under the configured base", name, f.Runbook.URL)
				}
			}
		})
	}
}

func visit(r *Report, f func(Check)) {
	for _, c := range r.Cluster {
		f(c)
	}
	for _, p := range r.Pools {
		for _, s := range p.Stages {
			for _, c := range s.Checks {
				f(c)
			}
		}
	}
}

// TestAgreesWithTheAlertTests diagnoses each scenario at the last time its
// promtool test evaluates (alerts/tests/scenario-*.yaml hold the
// exporter's output for the same files constant) and compares the
// runbooks its failures link with the alerts that fire then. Diagnose may
// say more only where an alert stays silent to page once: the operator
// and the builder while a MachineOSConfig is misconfigured, which the
// report shows as failed cluster checks beside the pool's stage 1.
func TestAgreesWithTheAlertTests(t *testing.T) {
	files, err := filepath.Glob("../alerts/tests/scenario-*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario alert tests: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(file), "scenario-"), ".yaml")
		t.Run(name, func(t *testing.T) {
			at, firing := lastFiring(t, file)
			s := sourcetest.Source(t, filepath.Join("../testdata/scenarios", name))
			r := New(s.Cluster(sourcetest.Now.Add(at)), s.Status(), Options{RunbookBase: testRunbookBase})
			linked := map[string]bool{}
			configFailed := false
			visit(r, func(c Check) {
				if c.Status != Failed {
					return
				}
				if spec(c.ID).Stage == StageConfig {
					configFailed = true
				}
				for _, f := range c.Findings {
					linked[f.Runbook.Alert] = true
				}
			})
			for a := range firing {
				if !linked[a] {
					t.Errorf("at %s alert %s fires, but no failed check links its runbook", at, a)
				}
			}
			for a := range linked {
				explained := configFailed && (a == alertOperatorDegraded || a == alertBuilderNotReady)
				if !firing[a] && !explained {
					t.Errorf("at %s a failed check links %s, which does not fire", at, a)
				}
			}
		})
	}
}

// lastFiring reads a promtool scenario test: its last eval_time and the
// alerts expected to fire then.
func lastFiring(t *testing.T, file string) (time.Duration, map[string]bool) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Tests []struct {
			AlertRuleTest []struct {
				EvalTime  string `json:"eval_time"`
				Alertname string `json:"alertname"`
				ExpAlerts []any  `json:"exp_alerts"`
			} `json:"alert_rule_test"`
		} `json:"tests"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	var last time.Duration
	firing := map[time.Duration]map[string]bool{}
	for _, tc := range f.Tests {
		for _, a := range tc.AlertRuleTest {
			d, err := model.ParseDuration(a.EvalTime)
			if err != nil {
				t.Fatal(err)
			}
			at := time.Duration(d)
			last = max(last, at)
			if firing[at] == nil {
				firing[at] = map[string]bool{}
			}
			if len(a.ExpAlerts) > 0 {
				firing[at][a.Alertname] = true
			}
		}
	}
	return last, firing[last]
}
