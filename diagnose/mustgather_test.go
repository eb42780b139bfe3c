package diagnose

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ocl-exporter/ocl_exporter/source"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
)

// mustGatherReport diagnoses the scenario at dir written as the
// must-gather of o, read as --snapshot reads it, at its capture time.
func mustGatherReport(t *testing.T, dir string, o sourcetest.MustGatherOptions) (*Report, *source.Source) {
	t.Helper()
	o.At = sourcetest.Now
	root, err := sourcetest.WriteMustGather(dir, t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	s := sourcetest.Snapshot(t, root)
	if at := s.CapturedAt(); !at.Equal(sourcetest.Now) {
		t.Fatalf("capture time %s, want the timestamp file's %s", at, sourcetest.Now)
	}
	return New(s.Cluster(s.CapturedAt()), s.Status(), Options{RunbookBase: testRunbookBase}), s
}

func jsonOf(t *testing.T, r *Report) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, r, FormatJSON, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestMustGatherAsFlat: every scenario written as a 4.19 (and later)
// must-gather, with the noise a real one carries, gives the report of the
// flat snapshot of the same objects: same verdict, checks, objects and
// classes, word for word. A scenario that is not a whole cluster (no node,
// no ClusterOperator) is compared as the must-gather reads it: those
// kinds, which no cluster has none of, not captured.
func TestMustGatherAsFlat(t *testing.T) {
	for name, dir := range fixtures(t) {
		if name == "example" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each waits on its files more than it computes
			got, s := mustGatherReport(t, dir, sourcetest.MustGatherOptions{Release: 19})
			lacks := lackedKinds(t, dir)
			for _, st := range s.Status() {
				if kind := kindOf(st.Resource); (st.Problem == snapshot.ProblemNotCaptured) != slices.Contains(lacks, kind) {
					t.Errorf("%s: %+v; the scenario lacks %v", st.Resource, st, lacks)
				}
			}
			flat := sourcetest.FlatAs(t, dir, s)
			want := New(flat.Cluster(sourcetest.Now), flat.Status(), Options{RunbookBase: testRunbookBase})
			if d := cmp.Diff(jsonOf(t, want), jsonOf(t, got)); d != "" {
				t.Errorf("the 4.19 must-gather's report differs from the flat snapshot's (-flat +must-gather):\n%s", d)
			}
		})
	}
}

// lackedKinds are the kinds no cluster has none of that the scenario at
// dir holds none of (sourcetest.Lacks).
func lackedKinds(t *testing.T, dir string) []string {
	t.Helper()
	lacks, err := sourcetest.Lacks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return lacks
}

// TestMustGatherOfOlderReleases: on 4.16 ... 4.18 every kind the
// must-gather image does not gather is not captured, never read as none:
// no pool reads healthy for want of its MachineOSConfig, and the kinds
// it does gather read as the flat snapshot's.
func TestMustGatherOfOlderReleases(t *testing.T) {
	for name, dir := range fixtures(t) {
		if name == "example" {
			continue
		}
		for _, rel := range []sourcetest.Release{17, 18} {
			t.Run(fmt.Sprintf("%s/4.%d", name, rel), func(t *testing.T) {
				t.Parallel()
				r, s := mustGatherReport(t, dir, sourcetest.MustGatherOptions{Release: rel})
				lacks := lackedKinds(t, dir)
				for _, st := range s.Status() {
					kind := kindOf(st.Resource)
					if read := rel.Gathers(kind) && !slices.Contains(lacks, kind); read == (st.Problem == snapshot.ProblemNotCaptured) {
						t.Errorf("%s: %+v; the 4.%d must-gather gathers %s: %v; the scenario lacks %v", st.Resource, st, rel, kind, rel.Gathers(kind), lacks)
					}
				}
				flat := report(t, dir, Options{})
				if flat.Verdict != Healthy && r.Verdict == Healthy {
					t.Errorf("verdict healthy, the flat snapshot's %s", flat.Verdict)
				}
				if out := jsonOf(t, r); strings.Contains(out, "does not exist") && !strings.Contains(jsonOf(t, flat), "does not exist") {
					t.Errorf("reads an object as missing that the flat snapshot has:\n%s", out)
				}
			})
		}
	}
}

func kindOf(resource string) string {
	for _, r := range snapshot.Resources() {
		if r.Name == resource {
			return r.Kind
		}
	}
	return ""
}

// TestMustGatherWithoutTheMCONamespace: a must-gather that holds no
// namespace of the MCO leaves its Secrets, pods and events unknown: it
// never says a Secret does not exist.
func TestMustGatherWithoutTheMCONamespace(t *testing.T) {
	r, s := mustGatherReport(t, "../testdata/scenarios/healthy-rollout-done", sourcetest.MustGatherOptions{
		Release: 19, WithoutNamespaces: []string{snapshot.DefaultNamespace},
	})
	for _, st := range s.Status() {
		if (st.Resource == "secrets" || st.Resource == "pods" || st.Resource == "jobs.batch") && st.Problem != snapshot.ProblemNotCaptured {
			t.Errorf("%s: %+v, want not captured", st.Resource, st)
		}
	}
	if out := jsonOf(t, r); strings.Contains(out, "does not exist") || !strings.Contains(out, `"status": "not_captured"`) {
		t.Errorf("a Secret read as missing, or nothing read as not captured:\n%s", out)
	}
}

var logFileLine = regexp.MustCompile(`(?m)^\s*"logFile": "[^"]*",\n`)

// TestMustGatherLogsGiveTheCause: where the release left the build pods
// no termination message (before FallbackToLogsOnError), the cause is
// read from the image-build container's log the must-gather holds: every
// scenario's report is the flat snapshot's, each cause read from a log
// naming its file.
func TestMustGatherLogsGiveTheCause(t *testing.T) {
	for name, dir := range fixtures(t) {
		if name == "example" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each waits on its files more than it computes
			got, s := mustGatherReport(t, dir, sourcetest.MustGatherOptions{Release: 19, NoTerminationMessages: true})
			as := sourcetest.FlatAs(t, dir, s)
			flat := jsonOf(t, New(as.Cluster(sourcetest.Now), as.Status(), Options{RunbookBase: testRunbookBase}))
			out := jsonOf(t, got)
			if d := cmp.Diff(flat, logFileLine.ReplaceAllString(out, "")); d != "" {
				t.Errorf("the report without termination messages differs from the flat snapshot's (-flat +must-gather):\n%s", d)
			}
			for _, m := range logFileLine.FindAllString(out, -1) {
				if !strings.Contains(m, "/pods/build-") || !strings.Contains(m, "/image-build/image-build/logs/current.log") {
					t.Errorf("a cause names %s, not an image-build log", strings.TrimSpace(m))
				}
			}
		})
	}
	t.Run("seed004-build-failed names its log", func(t *testing.T) {
		r, _ := mustGatherReport(t, "../testdata/scenarios/seed004-build-failed", sourcetest.MustGatherOptions{Release: 18, NoTerminationMessages: true})
		if out := jsonOf(t, r); !strings.Contains(out, `"class": "containerfile_command_failed"`) || !logFileLine.MatchString(out) {
			t.Errorf("want the Containerfile's failure read from the image-build log, named:\n%s", out)
		}
	})
}

// builderPod is a ready machine-os-builder pod, as its Deployment makes
// it (k8s-app=machine-os-builder, container machine-os-builder).
const builderPod = `apiVersion: v1
kind: Pod
metadata:
  name: machine-os-builder-7d9f6c5b8-x2kqp
  namespace: openshift-machine-config-operator
  labels: {k8s-app: machine-os-builder, pod-template-hash: 7d9f6c5b8}
  creationTimestamp: "2025-10-17T12:31:10Z"
spec:
  containers:
  - name: machine-os-builder
    image: quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:0c1e
status:
  phase: Running
  containerStatuses:
  - name: machine-os-builder
    ready: true
    restartCount: 0
    state: {running: {startedAt: "2025-10-17T12:31:12Z"}}
`

// TestMustGatherBuilderLogSaysWhyNoBuildStarted: a build that never
// started writes its cause only in the machine-os-builder's log (the
// build controller's queue logs each failed sync, pkg/controller/common
// wrappedqueue.go); read from a must-gather, build.created quotes it and
// names the log, where the objects alone leave it unknown.
func TestMustGatherBuilderLogSaysWhyNoBuildStarted(t *testing.T) {
	const dir = "../testdata/scenarios/stage1-operator-recovered"
	const cause = `could not create or reuse existing MachineOSBuild for MachineConfigPool "infra" change: ` +
		`could not get rendered containerfile: could not execute containerfile template: template: containerfile:9:2: ` +
		`executing "containerfile" at <.MachineOSConfig.Spec.Containerfile>: error calling index: index out of range: 1`
	o := sourcetest.MustGatherOptions{Release: 19, Extra: builderPod, Logs: map[string]string{
		"machine-os-builder-7d9f6c5b8-x2kqp/machine-os-builder": "I1017 12:31:12.004512       1 start.go:61] Version: 4.19.0 (Raw: v4.19.0-202510140932.p0, Hash: 3a1c7e2)\n" +
			"I1017 12:31:15.118235       1 wrappedqueue.go:249] Error executing \"addMachineOSConfig infra\" in queue osbuildcontroller: " + cause + "\n" +
			"I1017 12:31:15.220001       1 osbuildcontroller.go:212] Started MachineOSBuild controller\n",
	}}
	finding := func(r *Report) *Finding {
		for _, p := range r.Pools {
			for _, s := range p.Stages {
				for _, c := range s.Checks {
					if c.ID == CheckBuildCreated && c.Status == Failed && len(c.Findings) > 0 {
						return &c.Findings[0]
					}
				}
			}
		}
		t.Fatalf("build.created does not fail")
		return nil
	}
	r, _ := mustGatherReport(t, dir, o)
	if f := finding(r); !strings.Contains(f.Excerpt, "could not execute containerfile template") ||
		!strings.HasSuffix(f.LogFile, "/pods/machine-os-builder-7d9f6c5b8-x2kqp/machine-os-builder/machine-os-builder/logs/current.log") {
		t.Errorf("build.created: %+v, want the builder log's error and its file", *f)
	}
	o.Logs = nil
	r, _ = mustGatherReport(t, dir, o)
	if f := finding(r); f.LogFile != "" || f.Class != "unknown" {
		t.Errorf("without the error in the log: %+v", *f)
	}
}
