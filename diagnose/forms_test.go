package diagnose

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ocl-exporter/ocl_exporter/source"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
)

// The forms of testdata/must-gathers beyond the releases (README.md there
// cites the code each copies), each read as --snapshot reads it.

const committed = "../testdata/must-gathers/"

// snapshotReport diagnoses the snapshot at p at its capture time.
func snapshotReport(t *testing.T, p string) (*Report, *source.Source) {
	t.Helper()
	s := sourcetest.Snapshot(t, p)
	return New(s.Cluster(s.CapturedAt()), s.Status(), Options{RunbookBase: testRunbookBase}), s
}

// statusOf is the status of resource in s.
func statusOf(t *testing.T, s *source.Source, resource string) snapshot.ResourceStatus {
	t.Helper()
	for _, st := range s.Status() {
		if st.Resource == resource {
			return st
		}
	}
	t.Fatalf("no resource %s", resource)
	return snapshot.ResourceStatus{}
}

// TestMacOSForms: a must-gather archived on macOS (an AppleDouble "._"
// entry before each file and directory, pax xattr records, .DS_Store),
// and the tree another tar extracts from it, read as the must-gather
// itself: the same report, word for word.
func TestMacOSForms(t *testing.T) {
	want, _ := snapshotReport(t, committed+"4.19-macos-extracted-healthy-rollout-done")
	plain, err := sourcetest.Committed{Scenario: "healthy-rollout-done", Options: sourcetest.MustGatherOptions{Release: 19}}.Write("../testdata/scenarios", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	flat, _ := snapshotReport(t, plain)
	for _, p := range []string{"4.19-macos-extracted-healthy-rollout-done", "4.19-macos-healthy-rollout-done.tar.gz"} {
		got, _ := snapshotReport(t, committed+p)
		if d := cmp.Diff(jsonOf(t, flat), jsonOf(t, got)); d != "" {
			t.Errorf("%s reads otherwise than the must-gather (-must-gather +macOS):\n%s", p, d)
		}
	}
	if want.Verdict != Healthy {
		t.Errorf("verdict %s: %s", want.Verdict, want.Summary)
	}
}

// TestVolumeCutForm: a gather stopped at --volume-percentage in the middle
// of the MCO's Secrets, before MachineOSBuilds and MachineConfigNodes:
// the report goes on; the cut Secrets and the kinds never written read
// not captured, naming gather.logs; nothing reads missing; what was
// written is read (the pool's failed build fails the pool).
func TestVolumeCutForm(t *testing.T) {
	r, s := snapshotReport(t, committed+"4.19-volume-cut-seed004-build-failed")
	for _, res := range []string{"secrets", resourceMachineOSBuilds, resourceMachineConfigNodes} {
		if st := statusOf(t, s, res); st.Problem != snapshot.ProblemNotCaptured || !strings.Contains(st.Reason, "volume limit") || !strings.Contains(st.Reason, "gather.logs") {
			t.Errorf("%s: %+v, want not captured for the volume limit, naming gather.logs", res, st)
		}
	}
	for _, res := range []string{resourceMachineOSConfigs, "pods", "nodes"} {
		if st := statusOf(t, s, res); !st.Available {
			t.Errorf("%s: %+v, want read", res, st)
		}
	}
	if out := jsonOf(t, r); strings.Contains(out, "does not exist") || r.Verdict != Problem {
		t.Errorf("verdict %s (%s), or an object read as missing:\n%s", r.Verdict, r.Summary, out)
	}
}

// TestVolumeCutFiles: whatever file the checker's kill cuts, and wherever
// in it, its kind reads not captured and the rest is read: a List cut
// between items (its kind, written after them, missing) or inside a
// line, an object cut inside a line, a file created and never written.
func TestVolumeCutFiles(t *testing.T) {
	for _, c := range []sourcetest.VolumeCut{
		{File: "namespaces/openshift-machine-config-operator/core/secrets.yaml", CutAfter: "type: ", Occurrence: 1},
		{File: "namespaces/openshift-machine-config-operator/core/pods.yaml", CutAfter: "  kind: Pod\n", Occurrence: 1},
		{File: "cluster-scoped-resources/machineconfiguration.openshift.io/machineconfigpools/layered.yaml", CutAfter: "name: lay", Occurrence: 1},
		{File: "cluster-scoped-resources/core/nodes/ip-10-0-17-233.us-east-2.compute.internal.yaml", CutAfter: "apiVersion", Occurrence: 0},
	} {
		t.Run(filepath.Base(c.File), func(t *testing.T) {
			dir := t.TempDir()
			root, err := sourcetest.WriteMustGather("../testdata/scenarios/healthy-rollout-done", dir, sourcetest.MustGatherOptions{Release: 19, At: sourcetest.Now})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Apply(root, sourcetest.Now); err != nil {
				t.Fatal(err)
			}
			r, s := snapshotReport(t, dir)
			var cut []string
			for _, st := range s.Status() {
				if st.Problem == snapshot.ProblemNotCaptured {
					cut = append(cut, st.Resource)
					if !strings.Contains(st.Reason, filepath.Base(c.File)) {
						t.Errorf("%s: %s, want the cut file named", st.Resource, st.Reason)
					}
				}
			}
			if len(cut) == 0 || strings.Contains(jsonOf(t, r), "does not exist") {
				t.Errorf("not captured: %v, want the cut file's kind; verdict %s: %s", cut, r.Verdict, r.Summary)
			}
		})
	}
}

// TestCleanedForm: must-gather-clean's output (files holding Secrets,
// ConfigMaps, MachineConfigs removed, IPs obfuscated) of a healthy pool
// on a pre-built image: never "the component MachineConfig ... does not
// exist"; the MachineConfigs and Secrets read not captured, named by
// report.yaml, by watermark.txt without it, and by the release's gather
// without either (a cluster always has MachineConfigs).
func TestCleanedForm(t *testing.T) {
	for _, c := range []struct {
		drop []string
		why  string
	}{
		{nil, "report.yaml lists it"},
		{[]string{"report.yaml"}, "watermark.txt"},
		{[]string{"report.yaml", "watermark.txt"}, "a cluster always has some"},
	} {
		t.Run(strings.Join(append([]string{"without"}, c.drop...), " "), func(t *testing.T) {
			dir := sourcetest.Without(t, committed+"4.19-cleaned-seed003-prebuilt-seeded", c.drop...)
			r, s := snapshotReport(t, dir)
			if st := statusOf(t, s, "machineconfigs.machineconfiguration.openshift.io"); st.Problem != snapshot.ProblemNotCaptured || !strings.Contains(st.Reason, c.why) {
				t.Errorf("MachineConfigs: %+v, want not captured, saying %q", st, c.why)
			}
			if out := jsonOf(t, r); strings.Contains(out, "does not exist") || r.Verdict != Unknown || r.Verdict.ExitCode() != 2 {
				t.Errorf("verdict %s (%s), or an object read as missing:\n%s", r.Verdict, r.Summary, out)
			}
		})
	}
}

// TestInsecureLogForm: inspect fell back to current.insecure.log for every
// container (the kubelet's certificate not trusted), leaving current.log
// empty: the build's cause is read from the insecure log, and named.
func TestInsecureLogForm(t *testing.T) {
	r, _ := snapshotReport(t, committed+"4.18-insecure-log-seed004-build-failed")
	out := jsonOf(t, r)
	if !strings.Contains(out, `"class": "containerfile_command_failed"`) || !strings.Contains(out, "/image-build/image-build/logs/current.insecure.log") {
		t.Errorf("want the Containerfile's failure read from current.insecure.log:\n%s", out)
	}
}

// TestInspectNamespaceForm: oc adm inspect of the MCO's namespace alone,
// as a directory and as a .tar.gz: ClusterOperators not captured, so
// operator.degraded is not captured, never passed; nothing is healthy.
func TestInspectNamespaceForm(t *testing.T) {
	tree := committed + "4.19-inspect-ns-seed004-build-failed"
	archive := filepath.Join(t.TempDir(), "inspect.tar.gz")
	entries, err := os.ReadDir(tree)
	if err != nil || len(entries) != 1 {
		t.Fatalf("%s: %v %v", tree, entries, err)
	}
	if err := sourcetest.WriteTarGz(filepath.Join(tree, entries[0].Name()), archive); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{tree, archive} {
		r, _ := snapshotReport(t, p)
		i := slices.IndexFunc(r.Cluster, func(c Check) bool { return c.ID == CheckOperator })
		if r.Cluster[i].Status != NotCaptured || r.Verdict == Healthy {
			t.Errorf("%s: %s %+v; verdict %s", p, CheckOperator, r.Cluster[i], r.Verdict)
		}
	}
}

// TestLayeringUnknownForms: a pool layered with nothing gathered to show
// it (its first build not started: no build object, no image on a node or
// in the pool's messages) read from a 4.16 or 4.17 must-gather and from
// oc adm inspect co/machine-config of 4.17 and 4.19: unknown (exit 2),
// never healthy, never "not layered".
func TestLayeringUnknownForms(t *testing.T) {
	forms := map[string]string{"4.17 inspect co/machine-config": committed + "4.17-inspect-co-first-build-not-started"}
	for name, o := range map[string]sourcetest.MustGatherOptions{
		"4.16 must-gather":               {Release: 16},
		"4.17 must-gather":               {Release: 17},
		"4.19 inspect co/machine-config": {Release: 19, Inspect: sourcetest.InspectClusterOperator},
	} {
		o.Edit = sourcetest.FirstBuildNotStarted
		p, err := sourcetest.Committed{Scenario: "stage2-builder-crashloop", Options: o}.Write("../testdata/scenarios", t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		forms[name] = p
	}
	for name, p := range forms {
		t.Run(name, func(t *testing.T) {
			r, _ := snapshotReport(t, p)
			i := slices.IndexFunc(r.Pools, func(p Pool) bool { return p.Name == "layered" })
			if i < 0 {
				t.Fatalf("no pool layered: %+v", r.Pools)
			}
			pool := r.Pools[i]
			if pool.Verdict != Unknown || len(pool.Stages) == 0 || strings.HasPrefix(pool.Summary, "not layered") || strings.Contains(pool.Summary, "no sign") || r.Verdict.ExitCode() != 2 {
				t.Errorf("pool %+v; verdict %s: %s", pool, r.Verdict, r.Summary)
			}
		})
	}
}
