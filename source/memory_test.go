package source

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// selected holds objects that the exporter's selectors keep and drop, in
// the MCO namespace and another one.
const selected = `apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Event, metadata: {name: warn, namespace: openshift-machine-config-operator}, type: Warning, reason: BackoffLimitExceeded, involvedObject: {apiVersion: batch/v1, kind: Job, name: build-worker}}
- {apiVersion: v1, kind: Event, metadata: {name: normal, namespace: openshift-machine-config-operator}, type: Normal, reason: SuccessfulCreate, involvedObject: {apiVersion: batch/v1, kind: Job, name: build-worker}}
- {apiVersion: v1, kind: Event, metadata: {name: pull-failed, namespace: openshift-machine-config-operator}, type: Warning, reason: Failed, involvedObject: {apiVersion: v1, kind: Pod, name: build-worker-x}}
- {apiVersion: v1, kind: Event, metadata: {name: crashloop, namespace: openshift-machine-config-operator}, type: Warning, reason: BackOff, involvedObject: {apiVersion: v1, kind: Pod, name: machine-config-daemon-x}}
- {apiVersion: v1, kind: Event, metadata: {name: probe, namespace: openshift-machine-config-operator}, type: Warning, reason: Unhealthy, involvedObject: {apiVersion: v1, kind: Pod, name: machine-config-daemon-x}}
- {apiVersion: v1, kind: Event, metadata: {name: degraded, namespace: openshift-machine-config-operator}, type: Warning, reason: "OperatorDegraded: MachineOSBuilderFailed", involvedObject: {name: machine-config}}
- {apiVersion: v1, kind: Event, metadata: {name: pool-warn, namespace: openshift-machine-config-operator}, type: Warning, reason: FailedToDrain, involvedObject: {apiVersion: machineconfiguration.openshift.io/v1, kind: MachineConfigPool, name: worker}}
- {apiVersion: v1, kind: Event, metadata: {name: elsewhere, namespace: default}, type: Warning, reason: BackoffLimitExceeded, involvedObject: {apiVersion: batch/v1, kind: Job, name: build-worker}}
- {apiVersion: v1, kind: Event, metadata: {name: mosc-warn, namespace: default}, type: Warning, reason: ConfigReconcileFailed, involvedObject: {apiVersion: machineconfiguration.openshift.io/v1, kind: MachineOSConfig, name: worker}}
- {apiVersion: v1, kind: Event, metadata: {name: mosc-normal, namespace: default}, type: Normal, reason: ConfigReconciled, involvedObject: {apiVersion: machineconfiguration.openshift.io/v1, kind: MachineOSConfig, name: worker}}
- {apiVersion: v1, kind: Event, metadata: {name: mosb-warn, namespace: default}, type: Warning, reason: BuildFailed, involvedObject: {apiVersion: machineconfiguration.openshift.io/v1, kind: MachineOSBuild, name: worker-1}}
- {apiVersion: v1, kind: Event, metadata: {name: pool-default, namespace: default}, type: Warning, reason: BuildDegraded, involvedObject: {apiVersion: machineconfiguration.openshift.io/v1, kind: MachineConfigPool, name: worker}}
- {apiVersion: v1, kind: Event, metadata: {name: node-warn, namespace: default}, type: Warning, reason: NodeNotReady, involvedObject: {apiVersion: v1, kind: Node, name: worker-0}}
- {apiVersion: v1, kind: Pod, metadata: {name: machine-os-builder-x, namespace: openshift-machine-config-operator, labels: {k8s-app: machine-os-builder}}}
- {apiVersion: v1, kind: Pod, metadata: {name: build-worker-x, namespace: openshift-machine-config-operator, labels: {job-name: build-worker}}}
- {apiVersion: v1, kind: Pod, metadata: {name: machine-os-builder-y, namespace: default, labels: {k8s-app: machine-os-builder}}}
- {apiVersion: apps/v1, kind: Deployment, metadata: {name: machine-os-builder, namespace: openshift-machine-config-operator}}
- {apiVersion: apps/v1, kind: Deployment, metadata: {name: machine-config-operator, namespace: openshift-machine-config-operator}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: layered, namespace: openshift-machine-config-operator, labels: {machineconfiguration.openshift.io/on-cluster-layering: ""}}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: other, namespace: openshift-machine-config-operator}}
- {apiVersion: config.openshift.io/v1, kind: ClusterOperator, metadata: {name: machine-config}}
- {apiVersion: config.openshift.io/v1, kind: ClusterOperator, metadata: {name: network}}
`

func resource(t *testing.T, name string) snapshot.Resource {
	t.Helper()
	i := slices.IndexFunc(snapshot.Resources(), func(r snapshot.Resource) bool { return r.Name == name })
	if i < 0 {
		t.Fatalf("no resource %s", name)
	}
	return snapshot.Resources()[i]
}

// names lists r the way the source does: its selectors, its namespace.
func names(t *testing.T, m *snapshot.Memory, r snapshot.Resource) []string {
	t.Helper()
	ns := r.WatchNamespace(snapshot.DefaultNamespace)
	list, err := m.List(context.Background(), r, ns, metav1.ListOptions{LabelSelector: r.LabelSelector, FieldSelector: r.FieldSelector})
	if err != nil {
		t.Fatal(err)
	}
	if rv := list.(metav1.ListInterface).GetResourceVersion(); rv == "" {
		t.Errorf("%s: list without a resourceVersion", r.Name)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, it := range items {
		out = append(out, it.(metav1.Object).GetName())
	}
	return out
}

func TestMemoryAppliesTheSelectorsAsTheAPIServerDoes(t *testing.T) {
	m := clientsFor(t, fstest.MapFS{"list.yaml": {Data: []byte(selected)}})
	for name, want := range map[string][]string{
		"events":                               {"warn"},
		"events@pods":                          {"pull-failed"},
		"events@machine-config":                {"degraded"},
		"events@default-machineosconfig":       {"mosc-warn"},
		"deployments.apps":                     {"machine-os-builder"},
		"configmaps":                           {"layered"},
		"clusteroperators.config.openshift.io": {"machine-config"},
		"pods":                                 {"build-worker-x"},
		"pods@machine-os-builder":              {"machine-os-builder-x"},
		"events@default":                       {"mosb-warn"},
	} {
		if got := names(t, m, resource(t, name)); !slices.Equal(got, want) {
			t.Errorf("%s: listed %v, want %v", name, got, want)
		}
	}
}

func TestMemoryRejectsWhatTheAPIServerRejects(t *testing.T) {
	m := clientsFor(t, fstest.MapFS{"list.yaml": {Data: []byte(selected)}})
	for _, o := range []metav1.ListOptions{
		{FieldSelector: "spec.nodeName=n1"},
		{FieldSelector: "type"},
		{LabelSelector: "a in (b"},
	} {
		_, err := m.List(context.Background(), resource(t, "events"), snapshot.DefaultNamespace, o)
		if !apierrors.IsBadRequest(err) {
			t.Errorf("%+v: err %v, want a BadRequest", o, err)
		}
	}
	_, err := m.List(context.Background(), resource(t, "events"), snapshot.DefaultNamespace, metav1.ListOptions{FieldSelector: "source=x"})
	if err == nil || !strings.Contains(err.Error(), "field label not supported: source") {
		t.Errorf("unsupported field: %v", err)
	}
}

func TestMemoryListsCopies(t *testing.T) {
	m := clientsFor(t, fstest.MapFS{"mosc.yaml": {Data: []byte(mosc)}})
	r := resource(t, "machineosconfigs.machineconfiguration.openshift.io")
	first, err := m.List(context.Background(), r, "", metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	first.(*mcfgv1.MachineOSConfigList).Items[0].Name = "changed"
	if got := names(t, m, r); !slices.Equal(got, []string{"infra"}) {
		t.Errorf("a change to a listed object reached the store: %v", got)
	}
}

func TestNewMemoryNamesObjectsItCannotServe(t *testing.T) {
	for _, tc := range []struct {
		obj  runtime.Object
		want string
	}{
		{&corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: metav1.ObjectMeta{Name: "svc"}},
			`Service "svc": no watched resource holds this kind`},
		{&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "no-kind"}}, `"no-kind": no watched resource holds this kind`},
		{&metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: "p"}},
			`Pod "p" is a *v1.PartialObjectMetadata, but pods are read as *v1.Pod`},
	} {
		_, err := snapshot.NewMemory([]runtime.Object{tc.obj})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err %v, want %q", err, tc.want)
		}
	}
}

// TestMemoryWatchSendsInitialEvents: asked for a watch-list, the watch
// sends what List returns, then the bookmark that ends the initial events.
func TestMemoryWatchSendsInitialEvents(t *testing.T) {
	m := clientsFor(t, fstest.MapFS{"list.yaml": {Data: []byte(selected)}})
	r := resource(t, "events")
	yes := true
	w, err := m.Watch(context.Background(), r, snapshot.DefaultNamespace, metav1.ListOptions{FieldSelector: r.FieldSelector, SendInitialEvents: &yes})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var got []string
	for e := range w.ResultChan() {
		om := e.Object.(metav1.Object)
		if e.Type == watch.Bookmark {
			if om.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" || om.GetResourceVersion() == "" {
				t.Errorf("bookmark %+v", om)
			}
			break
		}
		got = append(got, string(e.Type)+" "+om.GetName())
	}
	if !slices.Equal(got, []string{"ADDED warn"}) {
		t.Errorf("initial events %v", got)
	}
}

// TestOfflineSyncsWithWatchList runs the offline source in a child process
// with client-go's WatchListClient feature on (the default from client-go
// v0.35, where informers over the fake clientsets this backend replaced
// never synced): the informers must sync from the watch alone.
func TestOfflineSyncsWithWatchList(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestWatchListChild$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "KUBE_FEATURE_WatchListClient=true", "OCL_WATCHLIST_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestWatchListChild") {
		t.Fatalf("with WatchListClient on: %v\n%s", err, out)
	}
}

func TestWatchListChild(t *testing.T) {
	if os.Getenv("OCL_WATCHLIST_CHILD") == "" {
		t.Skip("run by TestOfflineSyncsWithWatchList")
	}
	s := start(t, clientsFor(t, fstest.MapFS{"list.yaml": {Data: []byte(selected)}, "mosc.yaml": {Data: []byte(mosc)}}), nil)
	waitReady(t, s)
	c := s.Cluster(time.Now())
	if len(c.MachineOSConfigs) != 1 || len(c.Events) != 3 || len(c.Deployments) != 1 {
		t.Errorf("view: %d MachineOSConfigs, %d events, %d deployments; want 1, 3 and 1", len(c.MachineOSConfigs), len(c.Events), len(c.Deployments))
	}
	for _, r := range snapshot.Resources() {
		if n := testutil.ToFloat64(s.metrics.lists.WithLabelValues(r.Name, "success")); n != 0 {
			t.Errorf("%s: %v lists: the informers did not use watch-list", r.Name, n)
		}
	}
}
