package diagnose

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/ocl-exporter/ocl_exporter/alerts"
	"github.com/ocl-exporter/ocl_exporter/alerts/rulelimits"
	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
	"github.com/ocl-exporter/ocl_exporter/test/lifecycle"
)

// TestLimitsFollowTheRuleFiles moves a threshold in a copy of the rule
// files and reads the limits from its syntax tree as the generator does:
// the report of diagnose and that of /status (Public) both follow it.
func TestLimitsFollowTheRuleFiles(t *testing.T) {
	fsys := fstest.MapFS{}
	paths, err := os.ReadDir("../alerts")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if strings.HasSuffix(p.Name(), "rules.yaml") {
			b, err := os.ReadFile("../alerts/" + p.Name())
			if err != nil {
				t.Fatal(err)
			}
			fsys[p.Name()] = &fstest.MapFile{Data: bytes.Replace(b, []byte("vector(3600)"), []byte("vector(60)"), 1)}
		}
	}
	moved, err := rulelimits.Read(fsys)
	if err != nil {
		t.Fatal(err)
	}
	s := sourcetest.Source(t, "../testdata/scenarios/seed004-build-evicted-retrying")
	c := s.Cluster(sourcetest.Now)
	for _, public := range []bool{false, true} {
		duration := func(l alerts.Limits) Check {
			r := New(c, s.Status(), Options{RunbookBase: testRunbookBase, Public: public, Limits: l})
			for _, p := range r.Pools {
				for _, st := range p.Stages {
					for _, ch := range st.Checks {
						if ch.ID == CheckBuildDuration {
							return ch
						}
					}
				}
			}
			t.Fatalf("public=%v: no %s check", public, CheckBuildDuration)
			return Check{}
		}
		if ch := duration(alerts.Limits{}); ch.Status == Failed {
			t.Fatalf("public=%v: the build fails its duration with the rules' limit: %+v", public, ch)
		}
		ch := duration(moved)
		if ch.Status != Failed || !strings.Contains(ch.Findings[0].Message, "longer than 1m0s") {
			t.Errorf("public=%v: with ocl:build_max_duration_seconds at vector(60): %+v", public, ch)
		}
	}
}

// TestRefusedBuildFailsWhenItsAlertFires: a build 4.16 will never start
// (testdata/lifecycles/v416-legacy-secret-shared) fails the duration check
// once OCLMachineOSBuildTooLong's for: has passed, as the alert pages, not
// after ocl:build_max_duration_seconds; and it follows that for:.
func TestRefusedBuildFailsWhenItsAlertFires(t *testing.T) {
	l, err := lifecycle.Load("../testdata/lifecycles/v416-legacy-secret-shared")
	if err != nil {
		t.Fatal(err)
	}
	states, err := l.States()
	if err != nil {
		t.Fatal(err)
	}
	s := sourcetest.FromUnstructured(t, states[0].Objects)
	duration := func(minute int, limits alerts.Limits) Check {
		r := New(s.Cluster(l.At(minute)), s.Status(), Options{RunbookBase: testRunbookBase, Limits: limits})
		for _, p := range r.Pools {
			for _, st := range p.Stages {
				for _, ch := range st.Checks {
					if p.Name == "layered" && ch.ID == CheckBuildDuration {
						return ch
					}
				}
			}
		}
		t.Fatalf("minute %d: pool layered has no %s check", minute, CheckBuildDuration)
		return Check{}
	}
	if ch := duration(4, alerts.Limits{}); ch.Status == Failed {
		t.Errorf("minute 4, before the alert's for: %+v", ch)
	}
	ch := duration(6, alerts.Limits{})
	if ch.Status != Failed || len(ch.Findings) != 1 {
		t.Fatalf("minute 6, after the alert's for: %+v", ch)
	}
	if fd := ch.Findings[0]; fd.Class != "secret_invalid" || fd.Runbook == nil || fd.Runbook.Alert != "OCLMachineOSBuildTooLong" ||
		!strings.Contains(fd.Excerpt, `"builder-dockercfg-7kx2p-canonical"`) {
		t.Errorf("minute 6: %+v", fd)
	}
	longer := alerts.RuleLimits
	longer.BuildRefusedAfter = 10 * time.Minute
	if ch := duration(6, longer); ch.Status == Failed {
		t.Errorf("minute 6 with a for: of 10m: %+v", ch)
	}
}
