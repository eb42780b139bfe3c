package diagnose

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
)

func unseenReport(t *testing.T, dir string) *Report {
	t.Helper()
	s := sourcetest.Snapshot(t, sourcetest.Without(t, dir, sourcetest.OlderMustGather...))
	return New(s.Cluster(sourcetest.Now), s.Status(), Options{RunbookBase: testRunbookBase})
}

// TestUnseenLayering: every fixture, read without its MachineOSConfigs,
// MachineOSBuilds and MachineConfigNodes as an older must-gather holds
// it. A pool layered in the whole fixture never reads healthy nor "not
// layered": it reads layered from its signs, or, without any, unknown
// (whether it uses image mode is unknown); a failed build stays a
// problem.
func TestUnseenLayering(t *testing.T) {
	for name, dir := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			whole, r := report(t, dir, Options{}), unseenReport(t, dir)
			validate(t, compileSchema(t), r)
			if r.Verdict == Healthy {
				t.Errorf("verdict %s (%s), want problem or unknown", r.Verdict, r.Summary)
			}
			for _, wp := range whole.Pools {
				i := slices.IndexFunc(r.Pools, func(p Pool) bool { return p.Name == wp.Name })
				if !wp.Layered || i < 0 {
					continue
				}
				p := r.Pools[i]
				if strings.HasPrefix(p.Summary, "not layered") || strings.HasPrefix(p.Summary, "healthy") {
					t.Errorf("pool %s: %q", p.Name, p.Summary)
				}
				if p.Layered && p.Verdict == Healthy {
					t.Errorf("pool %s reads healthy: %q", p.Name, p.Summary)
				}
				if !p.Layered && (p.Verdict != Unknown || !strings.HasPrefix(p.Summary, "whether it uses image mode is unknown")) {
					t.Errorf("pool %s neither layered nor unknown: %s %q", p.Name, p.Verdict, p.Summary)
				}
				t.Logf("pool %s: %s: %s", p.Name, p.Verdict, p.Summary)
			}
		})
	}
}

// TestUnseenGolden renders the reports of fixtures of each release's
// shape read as an older must-gather holds them.
func TestUnseenGolden(t *testing.T) {
	for _, name := range []string{"example", "seed004-build-failed", "v416-build-pod-failed", "stage3-rollout-in-progress"} {
		t.Run(name, func(t *testing.T) {
			r := unseenReport(t, fixtures(t)[name])
			for format, ext := range map[string]string{FormatText: ".txt", FormatJSON: ".json", FormatMarkdown: ".md"} {
				var buf bytes.Buffer
				if err := Write(&buf, r, format, TextOptions{}); err != nil {
					t.Fatal(err)
				}
				golden(t, filepath.Join("testdata", "unseen", name+ext), buf.Bytes())
			}
		})
	}
}

// TestWithoutMachineConfigNodesNoPoolReadsHealthy: a 4.18 must-gather
// gathers MachineOSConfigs but no MachineConfigNode. A layered pool with
// nothing failing is then undecided, not healthy: rollout.nodes cannot
// see what only MachineConfigNodes report.
func TestWithoutMachineConfigNodesNoPoolReadsHealthy(t *testing.T) {
	dir := sourcetest.Without(t, "../testdata/scenarios/healthy-rollout-done", "machineconfignodes.yaml")
	s := sourcetest.Snapshot(t, dir)
	r := New(s.Cluster(sourcetest.Now), s.Status(), Options{RunbookBase: testRunbookBase})
	if r.Verdict != Unknown {
		t.Errorf("verdict %s (%s), want unknown", r.Verdict, r.Summary)
	}
	for _, p := range r.Pools {
		if p.Layered && (p.Verdict != Unknown || !strings.HasPrefix(p.Summary, "no failure found, but")) {
			t.Errorf("pool %s: %s: %s", p.Name, p.Verdict, p.Summary)
		}
	}
}
