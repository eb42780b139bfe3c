package source

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/ocl-exporter/ocl_exporter/internal/wait"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot/snapshottest"
)

const (
	mosc       = snapshottest.MachineOSConfig
	secretList = snapshottest.SecretList
)

const node = `apiVersion: v1
kind: Node
metadata:
  name: n1
  labels: {node-role.kubernetes.io/worker: ""}
  annotations:
    machineconfiguration.openshift.io/state: Done
    k8s.ovn.org/node-subnets: '{"default":["10.128.2.0/23"]}'
  managedFields:
  - manager: kubelet
    operation: Update
`

func clientsFor(t *testing.T, files fstest.MapFS) *snapshot.Memory {
	t.Helper()
	objs, err := snapshot.Load(files, ".", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	m, err := snapshot.NewMemory(objs)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// faulty is a backend whose calls a test may fail or replace, resource by
// resource; nil functions, or (nil, nil) from watch, defer to Backend.
type faulty struct {
	Backend
	list  func(r snapshot.Resource) error
	watch func(r snapshot.Resource) (watch.Interface, error)
}

func (f faulty) List(ctx context.Context, r snapshot.Resource, ns string, o metav1.ListOptions) (runtime.Object, error) {
	if f.list != nil {
		if err := f.list(r); err != nil {
			return nil, err
		}
	}
	return f.Backend.List(ctx, r, ns, o)
}

func (f faulty) Watch(ctx context.Context, r snapshot.Resource, ns string, o metav1.ListOptions) (watch.Interface, error) {
	if f.watch != nil {
		if w, err := f.watch(r); w != nil || err != nil {
			return w, err
		}
	}
	return f.Backend.Watch(ctx, r, ns, o)
}

func start(t *testing.T, c Backend, reg prometheus.Registerer) *Source {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s := New(c, snapshot.DefaultNamespace, slog.New(slog.DiscardHandler), reg)
	s.Run(ctx)
	return s
}

func waitReady(t *testing.T, s *Source) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.WaitReady(ctx); err != nil {
		t.Fatalf("not ready: %v: %+v", err, s.Status())
	}
}

func TestOfflineSourceSyncsAndTrims(t *testing.T) {
	s := start(t, clientsFor(t, fstest.MapFS{
		"mosc.yaml": {Data: []byte(mosc)}, "secrets.yaml": {Data: []byte(secretList)}, "node.yaml": {Data: []byte(node)},
	}), nil)
	waitReady(t, s)
	c := s.Cluster(time.Now())
	if len(c.MachineOSConfigs) != 1 || c.MachineOSConfigs[0].Name != "infra" {
		t.Errorf("MachineOSConfigs = %v", c.MachineOSConfigs)
	}
	if len(c.Secrets) != 2 {
		t.Fatalf("Secrets = %v", c.Secrets)
	}
	for _, sec := range c.Secrets {
		if sec.Annotations != nil {
			t.Errorf("secret %s kept annotations %v: they may hold the secret's data", sec.Name, sec.Annotations)
		}
	}
	if len(c.Nodes) != 1 {
		t.Fatalf("Nodes = %v", c.Nodes)
	}
	n := c.Nodes[0]
	if len(n.ManagedFields) != 0 {
		t.Error("managedFields kept")
	}
	if _, ok := n.Annotations["k8s.ovn.org/node-subnets"]; ok || n.Annotations["machineconfiguration.openshift.io/state"] != "Done" {
		t.Errorf("node annotations = %v, want only the MCO's", n.Annotations)
	}
	for _, st := range s.Status() {
		if !st.Available || !st.Synced {
			t.Errorf("%s: %+v", st.Resource, st)
		}
	}
}

func TestMissingAndForbiddenResourcesAreReportedNotFatal(t *testing.T) {
	c := faulty{Backend: clientsFor(t, fstest.MapFS{"mosc.yaml": {Data: []byte(mosc)}}), list: func(r snapshot.Resource) error {
		switch r.Name {
		case "machineosbuilds.machineconfiguration.openshift.io":
			return apierrors.NewNotFound(schema.GroupResource{Group: "machineconfiguration.openshift.io", Resource: "machineosbuilds"}, "")
		case "pods":
			return apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("RBAC: access denied"))
		}
		return nil
	}}
	reg := prometheus.NewPedanticRegistry()
	s := start(t, c, reg)
	waitReady(t, s)

	got := map[string]snapshot.ResourceStatus{}
	for _, st := range s.Status() {
		got[st.Resource] = st
	}
	if st := got["machineosbuilds.machineconfiguration.openshift.io"]; st.Available || st.Problem != snapshot.ProblemNotServed {
		t.Errorf("machineosbuilds: %+v", st)
	}
	if st := got["pods"]; st.Available || st.Problem != snapshot.ProblemForbidden ||
		st.Reason != "forbidden: the exporter may not list and watch pods in namespace openshift-machine-config-operator; grant the verbs list and watch on it (see deploy/ for the ClusterRole)" {
		t.Errorf("pods: %+v", st)
	}
	if st := got["machineosconfigs.machineconfiguration.openshift.io"]; !st.Available || !st.Synced {
		t.Errorf("machineosconfigs: %+v", st)
	}
	if n := testutil.ToFloat64(s.metrics.lists.WithLabelValues("pods", "error")); n < 1 {
		t.Errorf("pods list errors = %v", n)
	}
	view := s.Cluster(time.Now())
	if len(view.MachineOSConfigs) != 1 {
		t.Error("the readable resources must still be served")
	}
	if view.Captured("Pod") || !view.Captured("MachineOSBuild") {
		t.Errorf("kinds not captured: %v, want the forbidden Pods only (a CRD not served holds none)", view.NotCaptured)
	}
}

func TestUnreachableIsNotReadyUntilItRecovers(t *testing.T) {
	var down atomic.Bool
	down.Store(true)
	c := faulty{Backend: clientsFor(t, fstest.MapFS{"mosc.yaml": {Data: []byte(mosc)}}), list: func(r snapshot.Resource) error {
		if r.Name == "machineosconfigs.machineconfiguration.openshift.io" && down.Load() {
			return errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")
		}
		return nil
	}}
	s := start(t, c, nil)
	// The failed list must be seen (and judged) while the server is down:
	// the recovery half proves nothing without it.
	wait.For(t, 30*time.Second, "the failed list to be seen", func() error {
		if st := s.Status()[0]; !st.Seen {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})
	if st := s.Status()[0]; st.Problem != snapshot.ProblemUnreachable || s.Ready() {
		t.Fatalf("while unreachable: status %+v ready=%v, want %s and not ready", st, s.Ready(), snapshot.ProblemUnreachable)
	}
	down.Store(false)
	waitReady(t, s)
	if st := s.Status()[0]; !st.Available {
		t.Errorf("after recovery: %+v", st)
	}
}

func TestOnlyMeaningfulUpdatesMoveTheGeneration(t *testing.T) {
	node := func(rv, state string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Name: "n1", ResourceVersion: rv, Annotations: map[string]string{"machineconfiguration.openshift.io/state": state},
		}}
	}
	for _, tc := range []struct {
		name     string
		old, cur any
		want     bool
	}{
		{"heartbeat: resourceVersion only", node("1", "Done"), node("2", "Done"), false},
		{"annotation changed", node("1", "Done"), node("2", "Working"), true},
		{"typed objects always count", &corev1.Pod{}, &corev1.Pod{}, true},
	} {
		if got := meaningful(tc.old, tc.cur); got != tc.want {
			t.Errorf("%s: meaningful = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestGenerationMovesWithTheView(t *testing.T) {
	events := watch.NewFake()
	s := start(t, faulty{Backend: clientsFor(t, fstest.MapFS{"mosc.yaml": {Data: []byte(mosc)}}), watch: func(r snapshot.Resource) (watch.Interface, error) {
		if r.Name == "machineosconfigs.machineconfiguration.openshift.io" {
			return events, nil
		}
		return nil, nil
	}}, nil)
	waitReady(t, s)
	before := s.Generation()
	if before == 0 {
		t.Fatal("loading objects did not move the generation")
	}
	events.Delete(s.Cluster(time.Now()).MachineOSConfigs[0])
	wait.For(t, 30*time.Second, "deleting an object to move the generation", func() error {
		if s.Generation() == before {
			return fmt.Errorf("generation still %d", before)
		}
		return nil
	})
}

// TestWatchRecoveryMarksAvailable: after an outage the reflector re-opens
// its watch without listing; that watch starting must mark the resource
// available again (found by the integration suite on a restarted API server).
func TestWatchRecoveryMarksAvailable(t *testing.T) {
	var down atomic.Bool
	s := start(t, faulty{Backend: clientsFor(t, fstest.MapFS{"mosc.yaml": {Data: []byte(mosc)}}), watch: func(r snapshot.Resource) (watch.Interface, error) {
		if r.Name == "machineosconfigs.machineconfiguration.openshift.io" && down.Load() {
			return nil, errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")
		}
		return nil, nil
	}}, nil)
	waitReady(t, s)
	w := s.watched[0]
	down.Store(true)
	s.observe(w, errors.New("connection refused")) // the outage, as the reflector's failed calls report it
	if s.Status()[0].Available {
		t.Fatal("still available during the outage")
	}
	down.Store(false)
	if _, err := s.listWatch(w).(*cache.ListWatch).WatchWithContext(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if st := s.Status()[0]; !st.Available {
		t.Errorf("a watch that started did not mark the resource available: %+v", st)
	}
}

// TestListsOneAtATimeAndTrimmed: the informers' first lists, the memory
// peak, never overlap, and what a list hands the informer is trimmed.
func TestListsOneAtATimeAndTrimmed(t *testing.T) {
	var inFlight, most atomic.Int32
	c := faulty{Backend: clientsFor(t, fstest.MapFS{"node.yaml": {Data: []byte(node)}, "mosc.yaml": {Data: []byte(mosc)}}), list: func(snapshot.Resource) error {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); n > m; m = most.Load() {
			if most.CompareAndSwap(m, n) {
				break
			}
		}
		// A list that takes a while, so a second one started before it
		// ends would be seen in flight; the test waits for nothing.
		time.Sleep(5 * time.Millisecond)
		return nil
	}}
	s := start(t, c, nil)
	waitReady(t, s)
	if m := most.Load(); m != 1 {
		t.Errorf("%d lists in flight at once, want 1", m)
	}
	i := slices.IndexFunc(s.watched, func(w *watched) bool { return w.Name == "nodes" })
	list, err := s.listWatch(s.watched[i]).(*cache.ListWatch).ListWithContext(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := list.(*metav1.PartialObjectMetadataList).Items[0]
	if len(n.ManagedFields) != 0 || n.Annotations["k8s.ovn.org/node-subnets"] != "" {
		t.Errorf("listed node not trimmed: %+v", n.ObjectMeta)
	}
}
