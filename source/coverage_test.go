package source

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSnapshotCoverage: a kind is captured by an object, a List of it
// (typed, or untyped in a file named after it) or a capture record; a
// kind the snapshot holds nothing of, or that a record says could not be
// read, is not captured, with the reason.
func TestSnapshotCoverage(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"mosc.yaml":         mosc,
		"secrets.yaml":      "apiVersion: v1\nkind: List\nitems: []\n",
		"x/deployments.yml": "apiVersion: v1\nkind: List\nitems: []\n",
		"jobs.json":         `{"apiVersion":"batch/v1","kind":"JobList","items":[]}`,
		"cms.yaml":          "apiVersion: ocl-exporter.io/v1\nkind: CaptureRecord\nresource: configmaps\ncaptured: true\n",
		"pods.yaml": "apiVersion: ocl-exporter.io/v1\nkind: CaptureRecord\nresource: pods\ncaptured: false\n" +
			"problem: forbidden\nreason: may not list pods\n",
		"other.yaml": "apiVersion: v1\nkind: List\nitems: []\n",
		// an earlier capture's file of a resource with no object
		"old/events.yaml": "# ocl_exporter capture of events at 2025-10-17T13:00:00Z from x: 0 object(s),\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	m, err := snapshot.OpenSnapshot(t.Context(), dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{ // resource -> substring of the error, "" captured
		"machineosconfigs.machineconfiguration.openshift.io": "",
		"secrets":          "",
		"deployments.apps": "",
		"jobs.batch":       "",
		"configmaps":       "",
		"pods":             "forbidden: may not list pods",
		"nodes":            "holds no nodes",
		"events":           "",
		"machineosbuilds.machineconfiguration.openshift.io": "holds no machineosbuilds",
		// A part is captured with its kind in its namespace, or by its
		// own record.
		"events@default": "",
		// pods.yaml is a record that pods were not read: it says nothing
		// of the builder's
		"pods@machine-os-builder": "holds no pods@machine-os-builder",
	}
	byName := make(map[string]snapshot.Resource, len(snapshot.Resources()))
	for _, r := range snapshot.Resources() {
		byName[r.Name] = r
	}
	for name, w := range want {
		r, ok := byName[name]
		if !ok {
			t.Errorf("%s: no such resource in snapshot.Resources()", name)
			continue
		}
		err := m.NotCaptured(r)
		var nc *snapshot.NotCapturedError
		switch {
		case w == "" && err != nil:
			t.Errorf("%s: %v, want captured", r.Name, err)
		case w != "" && (!errors.As(err, &nc) || !strings.Contains(err.Error(), w)):
			t.Errorf("%s: %v, want not captured: %q", r.Name, err, w)
		}
	}
	if p, _ := explain(&snapshot.NotCapturedError{Resource: "pods"}, "pods", "ns"); p != snapshot.ProblemNotCaptured {
		t.Errorf("explain: %q, want %q", p, snapshot.ProblemNotCaptured)
	}
}

// TestBuildPodsEachOnce: the watches of build pods (the Jobs' by job-name,
// the bare pods of 4.16 by buildPod and of 4.17 by on-cluster-layering)
// serve every build pod once and no other pod, a Job's pod that carries
// the on-cluster-layering label too included.
func TestBuildPodsEachOnce(t *testing.T) {
	m := clientsFor(t, fstest.MapFS{"pods.yaml": {Data: []byte(`apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata:
    name: build-rendered-layered-1
    namespace: openshift-machine-config-operator
    labels: {machineconfiguration.openshift.io/on-cluster-layering: "", machineconfiguration.openshift.io/ephemeral-build-object: ""}
- apiVersion: v1
  kind: Pod
  metadata:
    name: build-rendered-layered-0
    namespace: openshift-machine-config-operator
    labels: {machineconfiguration.openshift.io/buildPod: "", machineconfiguration.openshift.io/desiredConfig: rendered-layered-0}
- apiVersion: v1
  kind: Pod
  metadata: {name: build-layered-2-abcde, namespace: openshift-machine-config-operator, labels: {job-name: build-layered-2}}
- apiVersion: v1
  kind: Pod
  metadata:
    name: build-layered-3-fghij
    namespace: openshift-machine-config-operator
    labels: {job-name: build-layered-3, machineconfiguration.openshift.io/on-cluster-layering: ""}
- apiVersion: v1
  kind: Pod
  metadata: {name: machine-config-daemon-x, namespace: openshift-machine-config-operator, labels: {k8s-app: machine-config-daemon}}
`)}})
	var names []string
	for _, r := range snapshot.Resources() {
		if r.GVR.Resource != "pods" || r.Kind != "Pod" || r.Name == "pods@machine-os-builder" {
			continue
		}
		list, err := m.List(context.Background(), r, "openshift-machine-config-operator", metav1.ListOptions{LabelSelector: r.LabelSelector})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range list.(*corev1.PodList).Items {
			names = append(names, p.Name)
		}
	}
	slices.Sort(names)
	if got := strings.Join(names, ","); got != "build-layered-2-abcde,build-layered-3-fghij,build-rendered-layered-0,build-rendered-layered-1" {
		t.Errorf("build pods served: %v", got)
	}
}

// TestPartNotCapturedLeavesItsKindKnown: a second watch of a resource adds
// evidence. When a snapshot did not capture it, the view still holds the
// kind's other objects as complete: the build pods are known, the
// builder's are not.
func TestPartNotCapturedLeavesItsKindKnown(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"pods.yaml": "apiVersion: v1\nkind: List\nitems: []\n",
		"builder.yaml": "apiVersion: ocl-exporter.io/v1\nkind: CaptureRecord\nresource: pods@machine-os-builder\n" +
			"captured: false\nproblem: forbidden\nreason: may not list pods\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	m, err := snapshot.OpenSnapshot(t.Context(), dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	s := New(m, snapshot.DefaultNamespace, slog.New(slog.DiscardHandler), nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.Run(ctx)
	if err := s.WaitReady(ctx); err != nil {
		t.Fatal("not ready:", err)
	}
	c := s.Cluster(time.Now())
	if !c.Captured("Pod") {
		t.Error("the builder's pods not captured made every pod unknown")
	}
	for _, st := range s.Status() {
		if st.Resource == "pods@machine-os-builder" && st.Problem != snapshot.ProblemNotCaptured {
			t.Errorf("pods@machine-os-builder: %+v, want not captured", st)
		}
	}
}
