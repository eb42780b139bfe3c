package collector

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/prometheus/client_golang/prometheus"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/ocl-exporter/ocl_exporter/analysis"
	"github.com/ocl-exporter/ocl_exporter/classify"
	"github.com/ocl-exporter/ocl_exporter/source"
	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
)

// realCase is one message of classify/testdata/real.yaml: text the
// exporter did not write, placed on the object OpenShift puts it on.
type realCase struct {
	// On (placement) is the object and field the text sits on; see
	// placements.
	On     string         `json:"placement"`
	Reason string         `json:"reason,omitempty"`
	Text   string         `json:"text"`
	Class  classify.Class `json:"class"`
	// Source is where the wording comes from: repository and path of the
	// format string, or the public page that quotes it.
	Source string `json:"source"`
	// Excerpt, when set, must be part of the excerpt the metrics quote.
	Excerpt string `json:"excerpt,omitempty"`
	// Batch is "held-out" for messages collected after the rules were
	// tuned on the others, and measured before any rule changed for them.
	Batch string `json:"batch,omitempty"`
	// Unreachable says why the exporter cannot see this object today. Such
	// a case is checked through classify alone and must read unknown from
	// the metrics: when the exporter learns to see it, the test says so.
	Unreachable string `json:"unreachable,omitempty"`
}

// The objects a real case is placed on, with the classify.Origin analysis
// reads them as, and the metric the class is read from.
var placements = map[string]struct {
	origin classify.Origin
	metric string
}{
	"build_log":                   {classify.OriginBuildLog, "mosb_failure_class"},
	"container_terminated":        {classify.OriginContainerTerminated, "mosb_failure_class"},
	"pod_waiting":                 {classify.OriginPodWaiting, "mosb_failure_class"},
	"pod_status":                  {classify.OriginPodStatus, "mosb_failure_class"},
	"pod_condition":               {classify.OriginPodStatus, "mosb_build_pod_stuck"},
	"job_condition":               {classify.OriginJobCondition, "mosb_failure_class"},
	"job_event":                   {classify.OriginEvent, "mosb_failure_class"},
	"build_condition":             {classify.OriginBuildCondition, "mosb_failure_class"},
	"node_reason":                 {classify.OriginNodeReason, "node_update_failure_class"},
	"machineconfignode_condition": {classify.OriginMCNCondition, "node_update_failure_class"},
	"pool_condition":              {classify.OriginPoolCondition, "node_update_failure_class"},
	"clusteroperator_condition":   {classify.OriginClusterOperator, "ocl_operator_degraded"},
	"operator_event":              {classify.OriginEvent, "ocl_operator_degraded_event_timestamp_seconds"},
	"build_event":                 {classify.OriginEvent, "mosb_failure_class"},
	"builder_pod_waiting":         {classify.OriginBuilderPod, "ocl_machine_os_builder_failure_info"},
	"builder_pod_crashed":         {classify.OriginBuilderPod, "ocl_machine_os_builder_failure_info"},
	"clusteroperator_upgradeable": {classify.OriginClusterOperator, "ocl_operator_upgrade_blocked"},
	"pool_updating":               {classify.OriginPoolCondition, "ocl_pool_update_stopped_info"},
}

// alone are the placements on an object a cluster has one of (the
// ClusterOperator, its events, the builder): one snapshot per case.
var alone = map[string]bool{
	"clusteroperator_condition": true, "operator_event": true,
	"builder_pod_waiting": true, "builder_pod_crashed": true, "clusteroperator_upgradeable": true,
}

func loadRealCorpus(t *testing.T) []realCase {
	t.Helper()
	b, err := os.ReadFile("../classify/testdata/real.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cases []realCase
	if err := yaml.UnmarshalStrict(b, &cases); err != nil {
		t.Fatalf("classify/testdata/real.yaml: %v", err)
	}
	for i, c := range cases {
		if _, ok := placements[c.On]; !ok {
			t.Fatalf("real.yaml case %d: unknown placement %q", i, c.On)
		}
		if c.Source == "" || strings.TrimSpace(c.Text) == "" && c.Reason == "" {
			t.Fatalf("real.yaml case %d: needs text (or a reason) and a source", i)
		}
		if !slices.Contains(classify.Classes(), c.Class) {
			t.Fatalf("real.yaml case %d: class %q is not in classify.Classes()", i, c.Class)
		}
	}
	return cases
}

const mcoNS = source.DefaultNamespace

// caseName names the objects of case i.
func caseName(i int) string { return fmt.Sprintf("case-%03d", i) }

// realObjects places case i on its objects: the states the MCO, the Job
// controller and the kubelet write when that text is the cause.
func realObjects(i int, c realCase) []runtime.Object {
	name := caseName(i)
	t0 := metav1.NewTime(sourcetest.Now.Add(-time.Hour))
	switch c.On {
	case "node_reason", "machineconfignode_condition", "pool_condition":
		return nodeObjects(name, c, t0)
	case "clusteroperator_condition", "clusteroperator_upgradeable":
		cond := configv1.ClusterOperatorStatusCondition{
			Type: configv1.OperatorDegraded, Status: configv1.ConditionTrue, Reason: c.Reason, Message: c.Text, LastTransitionTime: t0,
		}
		if c.On == "clusteroperator_upgradeable" {
			cond.Type, cond.Status = configv1.OperatorUpgradeable, configv1.ConditionFalse
		}
		return []runtime.Object{&configv1.ClusterOperator{
			ObjectMeta: metav1.ObjectMeta{Name: "machine-config"},
			Status:     configv1.ClusterOperatorStatus{Conditions: []configv1.ClusterOperatorStatusCondition{cond}},
		}}
	case "builder_pod_waiting", "builder_pod_crashed":
		return []runtime.Object{builderPod(c, t0)}
	case "pool_updating":
		return []runtime.Object{&mcfgv1.MachineConfigPool{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: mcfgv1.MachineConfigPoolStatus{Conditions: []mcfgv1.MachineConfigPoolCondition{{
				Type: mcfgv1.MachineConfigPoolUpdating, Status: corev1.ConditionFalse, Message: c.Text, LastTransitionTime: t0,
			}}},
		}}
	case "operator_event":
		// The operator posts OperatorDegraded events about itself in its
		// namespace; the build controller posts the others about the
		// MachineOSConfig, in namespace default.
		if strings.HasPrefix(c.Reason, "OperatorDegraded") {
			return []runtime.Object{event(name, mcoNS, c, corev1.ObjectReference{Kind: "ClusterOperator", Name: "machine-config"}, t0)}
		}
		return []runtime.Object{event(name, "default", c, corev1.ObjectReference{Kind: "MachineOSConfig", APIVersion: mcfgv1.GroupVersion.String(), Name: "worker"}, t0)}
	}

	// Build placements: a MachineOSBuild that failed (or was interrupted),
	// its Job and, for pod placements, the Job's pod.
	phase := mcfgv1.MachineOSBuildFailed
	if c.On == "build_condition" {
		phase = mcfgv1.MachineOSBuildInterrupted
	}
	if c.On == "pod_condition" {
		phase = mcfgv1.MachineOSBuilding // a pod that cannot be scheduled never fails the Job
	}
	mosb := &mcfgv1.MachineOSBuild{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: t0},
		Spec: mcfgv1.MachineOSBuildSpec{
			MachineOSConfig: mcfgv1.MachineOSConfigReference{Name: name},
			MachineConfig:   mcfgv1.MachineConfigReference{Name: "rendered-" + name},
		},
		Status: mcfgv1.MachineOSBuildStatus{Conditions: []metav1.Condition{{
			Type: string(phase), Status: metav1.ConditionTrue, Reason: string(phase), Message: "Build " + string(phase), LastTransitionTime: t0,
		}}},
	}
	if c.On == "build_condition" {
		mosb.Status.Conditions[0].Reason, mosb.Status.Conditions[0].Message = c.Reason, c.Text
	}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{
		Name: "build-" + name, Namespace: mcoNS, CreationTimestamp: t0,
		Labels: map[string]string{analysis.LabelOnClusterLayering: "", analysis.LabelEphemeralObject: "", analysis.LabelMachineOSBuild: name},
	}}
	// The build's MachineOSConfig exists, as it does on a cluster: builds
	// of a missing one are bounded to a few in total.
	mosc := &mcfgv1.MachineOSConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: t0},
		Spec:       mcfgv1.MachineOSConfigSpec{MachineConfigPool: mcfgv1.MachineConfigPoolReference{Name: name}},
	}
	objs := []runtime.Object{mosc, mosb, job}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: "build-" + name + "-x7k2p", Namespace: mcoNS, CreationTimestamp: t0,
		Labels: map[string]string{"job-name": job.Name, "batch.kubernetes.io/job-name": job.Name},
	}}
	pod.Status.Phase = corev1.PodFailed
	switch c.On {
	case "build_log", "container_terminated":
		container, reason := "image-build", c.Reason
		if c.On == "container_terminated" {
			container = "create-digest-configmap"
		}
		if reason == "" {
			reason = "Error"
		}
		pod.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: container, State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: reason, Message: c.Text},
		}}}
		job.Status.Failed = 1
		objs = append(objs, pod)
	case "pod_waiting":
		pod.Status.Phase = corev1.PodPending
		pod.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "image-build", State: corev1.ContainerState{
			Waiting: &corev1.ContainerStateWaiting{Reason: c.Reason, Message: c.Text},
		}}}
		objs = append(objs, pod)
	case "pod_condition":
		pod.Status.Phase = corev1.PodPending
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: c.Reason, Message: c.Text}}
		objs = append(objs, pod)
	case "pod_status":
		pod.Status.Reason, pod.Status.Message = c.Reason, c.Text
		job.Status.Failed = 1
		objs = append(objs, pod)
	case "job_condition":
		job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: c.Reason, Message: c.Text}}
	case "job_event":
		objs = append(objs, event(name, mcoNS, c, corev1.ObjectReference{Kind: "Job", Namespace: mcoNS, Name: job.Name}, t0))
	case "build_event":
		// The build controller records the build's events in namespace
		// default; its Job's pods are gone.
		job.Status.Failed = 4
		objs = append(objs, event(name, "default", c, corev1.ObjectReference{Kind: "MachineOSBuild", APIVersion: mcfgv1.GroupVersion.String(), Name: name}, t0))
	}
	return objs
}

// builderPod is the machine-os-builder's pod in CrashLoopBackOff, or
// waiting for the reason of a builder_pod_waiting case; a crashed case's
// text is its last crash's log tail.
func builderPod(c realCase, t metav1.Time) *corev1.Pod {
	st := corev1.ContainerStatus{Name: "machine-os-builder", RestartCount: 7, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
		Reason: "CrashLoopBackOff", Message: "back-off 5m0s restarting failed container=machine-os-builder pod=machine-os-builder-7c9d8f6b5d-x2kqp_openshift-machine-config-operator(0d3f6a9e-2b7c-4e1a-9f5d-8c6b4a2e0f13)",
	}}}
	if c.On == "builder_pod_waiting" {
		st.State.Waiting = &corev1.ContainerStateWaiting{Reason: c.Reason, Message: c.Text}
	} else {
		st.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 255, Reason: c.Reason, Message: c.Text, FinishedAt: t}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "machine-os-builder-7c9d8f6b5d-x2kqp", Namespace: mcoNS, CreationTimestamp: t,
			Labels: map[string]string{"k8s-app": "machine-os-builder"},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{st}},
	}
}

func event(name, namespace string, c realCase, about corev1.ObjectReference, t metav1.Time) *corev1.Event {
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: name + ".18a2b3c4d5e6f708", Namespace: namespace, CreationTimestamp: t},
		InvolvedObject: about, Type: corev1.EventTypeWarning, Reason: c.Reason, Message: c.Text,
		FirstTimestamp: t, LastTimestamp: t, Count: 3,
	}
}

// nodeObjects is a Degraded node of pool worker whose cause is the text,
// on the node's reason annotation, its MachineConfigNode, or in the pool's
// NodeDegraded message (added by realCluster, which sees every node).
func nodeObjects(name string, c realCase, t metav1.Time) []runtime.Object {
	ann := map[string]string{
		analysis.NodeAnnotationState:         analysis.MCDStateDegraded,
		analysis.NodeAnnotationCurrentConfig: "rendered-worker-0b1c2d",
		analysis.NodeAnnotationDesiredConfig: "rendered-worker-3e4f5a",
	}
	if c.On == "node_reason" {
		ann[analysis.NodeAnnotationReason] = c.Text
	}
	node := &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"node-role.kubernetes.io/worker": ""}, Annotations: ann},
	}
	if c.On != "machineconfignode_condition" {
		return []runtime.Object{node}
	}
	cond := metav1.Condition{
		Type: string(mcfgv1.MachineConfigNodeNodeDegraded), Status: metav1.ConditionTrue, Reason: c.Reason, Message: c.Text, LastTransitionTime: t,
	}
	switch {
	case strings.HasPrefix(c.Text, "Failed to pull"):
		cond.Type, cond.Status = string(mcfgv1.MachineConfigNodeImagePulledFromRegistry), metav1.ConditionFalse
	case strings.HasPrefix(c.Text, "Error: Failed to Cordon node"):
		cond.Type, cond.Status = string(mcfgv1.MachineConfigNodeUpdateCordoned), metav1.ConditionUnknown
	}
	mcn := &mcfgv1.MachineConfigNode{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       mcfgv1.MachineConfigNodeSpec{Node: mcfgv1.MCOObjectReference{Name: name}, Pool: mcfgv1.MCOObjectReference{Name: "worker"}},
		Status:     mcfgv1.MachineConfigNodeStatus{Conditions: []metav1.Condition{cond}},
	}
	return []runtime.Object{node, mcn}
}

// workerPool is the pool of every node case; its NodeDegraded message
// quotes the pool_condition cases the way the node controller does.
func workerPool(cases []realCase, idx []int) *mcfgv1.MachineConfigPool {
	var reports []string
	for _, i := range idx {
		if cases[i].On == "pool_condition" {
			reports = append(reports, fmt.Sprintf("Node %s is reporting: %q", caseName(i), cases[i].Text))
		}
	}
	p := &mcfgv1.MachineConfigPool{
		ObjectMeta: metav1.ObjectMeta{Name: "worker"},
		Spec: mcfgv1.MachineConfigPoolSpec{
			NodeSelector:  &metav1.LabelSelector{MatchLabels: map[string]string{"node-role.kubernetes.io/worker": ""}},
			Configuration: mcfgv1.MachineConfigPoolStatusConfiguration{ObjectReference: corev1.ObjectReference{Name: "rendered-worker-3e4f5a"}},
		},
	}
	if len(reports) > 0 {
		p.Status.Conditions = []mcfgv1.MachineConfigPoolCondition{{
			Type: mcfgv1.MachineConfigPoolNodeDegraded, Status: corev1.ConditionTrue, Reason: fmt.Sprintf("%d nodes are reporting degraded status on sync", len(reports)),
			Message: strings.Join(reports, ", "),
		}}
	}
	return p
}

// setKind gives a typed object built in Go the apiVersion and kind a
// snapshot document carries, which the offline source files it under.
func setKind(o runtime.Object) {
	var gv schema.GroupVersion
	switch o.(type) {
	case *configv1.ClusterOperator:
		gv = configv1.GroupVersion
	case *mcfgv1.MachineOSBuild, *mcfgv1.MachineConfigNode, *mcfgv1.MachineConfigPool, *mcfgv1.MachineOSConfig:
		gv = mcfgv1.GroupVersion
	case *batchv1.Job:
		gv = batchv1.SchemeGroupVersion
	case *corev1.Pod, *corev1.Event:
		gv = corev1.SchemeGroupVersion
	default:
		return // set where it is built
	}
	o.GetObjectKind().SetGroupVersionKind(gv.WithKind(reflect.TypeOf(o).Elem().Name()))
}

// measured is what the metrics say of one case.
type measured struct {
	class   classify.Class
	excerpt string
}

// scrapeCases runs the exporter's offline source and collector on objs and
// reads, per case, the class and excerpt its metric reports. A case with
// no series reads unknown.
func scrapeCases(t *testing.T, objs []runtime.Object, cases []realCase, idx []int) map[int]measured {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	for _, o := range objs {
		setKind(o)
	}
	reg.MustRegister(New(sourcetest.FromObjects(t, objs), DefaultOptions))
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	// by metric name and case name: class, then excerpt from the info family
	classes := map[string]map[string]string{}
	excerpts := map[string]string{}
	for _, mf := range families {
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, lp := range m.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			key := l["machineosbuild"] + l["node"]
			if mf.GetName() == "ocl_pool_update_stopped_info" {
				key = l["pool"]
			}
			switch mf.GetName() {
			case "mosb_failure_class", "mosb_build_pod_stuck", "node_update_failure_class", "ocl_operator_degraded_event_timestamp_seconds",
				"ocl_pool_update_stopped_info", "ocl_machine_os_builder_failure_info":
				if classes[mf.GetName()] == nil {
					classes[mf.GetName()] = map[string]string{}
				}
				classes[mf.GetName()][key] = l["class"]
			case "ocl_operator_degraded", "ocl_operator_upgrade_blocked":
				if m.GetGauge().GetValue() == 1 {
					classes[mf.GetName()] = map[string]string{"": l["class"]}
				}
			case "mosb_failure_info", "node_update_failure_info", "ocl_operator_degraded_info":
				excerpts[key] = l["excerpt"]
			}
			if e, ok := l["excerpt"]; ok && (mf.GetName() == "ocl_pool_update_stopped_info" || mf.GetName() == "ocl_machine_os_builder_failure_info") {
				excerpts[key] = e
			}
		}
	}
	out := map[int]measured{}
	for _, i := range idx {
		p := placements[cases[i].On]
		key := caseName(i)
		if alone[cases[i].On] {
			key = ""
		}
		got := measured{class: classify.Unknown, excerpt: excerpts[key]}
		if c, ok := classes[p.metric][key]; ok {
			got.class = classify.Class(c)
		}
		out[i] = got
	}
	return out
}

// measureRealCorpus places every case and reads its class from the metrics.
// Build and node cases share one snapshot; the ClusterOperator and its
// events are one per cluster, so each of those cases gets its own.
func measureRealCorpus(t *testing.T, cases []realCase) map[int]measured {
	t.Helper()
	var shared, single []int
	for i, c := range cases {
		if alone[c.On] {
			single = append(single, i)
		} else {
			shared = append(shared, i)
		}
	}
	objs := []runtime.Object{workerPool(cases, shared)}
	for _, i := range shared {
		objs = append(objs, realObjects(i, cases[i])...)
	}
	out := scrapeCases(t, objs, cases, shared)
	for _, i := range single {
		maps.Copy(out, scrapeCases(t, realObjects(i, cases[i]), cases, []int{i}))
	}
	return out
}

// tally counts right answers per key.
type tally map[string]*[2]int // right, total

func (ta tally) add(key string, right bool) {
	if ta[key] == nil {
		ta[key] = &[2]int{}
	}
	ta[key][1]++
	if right {
		ta[key][0]++
	}
}

func (ta tally) table(title string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| %s | right | cases | accuracy |\n|---|---:|---:|---:|\n", title)
	for _, k := range slices.Sorted(maps.Keys(ta)) {
		r := ta[k]
		fmt.Fprintf(&b, "| %s | %d | %d | %s%% |\n", k, r[0], r[1], strconv.FormatFloat(100*float64(r[0])/float64(r[1]), 'f', 1, 64))
	}
	return b.String()
}

// TestRealWorldAccuracy measures the classifier the way users meet it: each
// real message on the object OpenShift puts it on, through the offline
// source and the collector, read back from the metrics. go test -v prints
// the accuracy per class, per placement and the confusion pairs.
func TestRealWorldAccuracy(t *testing.T) {
	cases := loadRealCorpus(t)
	got := measureRealCorpus(t, cases)

	perClass, perOn, perBatch := tally{}, tally{}, tally{}
	confusion := map[string]int{}
	right, reachable, unreachable := 0, 0, 0
	for i, c := range cases {
		g := got[i]
		if c.Unreachable != "" {
			unreachable++
			if g.class != classify.Unknown {
				t.Errorf("%s (%s) is marked unreachable but the metrics say %s: drop the marker", caseName(i), c.On, g.class)
			}
			m := classify.Message{Origin: placements[c.On].origin, Reason: c.Reason, Text: c.Text}
			if r := classify.Classify(m); r.Class != c.Class {
				t.Errorf("%s (%s, unreachable): classify says %s, want %s", caseName(i), c.On, r.Class, c.Class)
			}
			continue
		}
		reachable++
		ok := g.class == c.Class
		if ok {
			right++
		} else {
			confusion[fmt.Sprintf("%s -> %s", c.Class, g.class)]++
			t.Logf("miss %s (%s, %s): want %s, got %s; excerpt %q", caseName(i), c.On, c.Source, c.Class, g.class, g.excerpt)
		}
		perClass.add(string(c.Class), ok)
		perOn.add(c.On, ok)
		perBatch.add(cmp.Or(c.Batch, "tuning"), ok)
		if c.Excerpt != "" && !strings.Contains(g.excerpt, c.Excerpt) {
			t.Errorf("%s (%s): excerpt %q does not quote %q", caseName(i), c.On, g.excerpt, c.Excerpt)
		}
		if c.Class == classify.Unknown && g.class != classify.Unknown {
			t.Errorf("%s (%s, %s): cause outside the set guessed as %s", caseName(i), c.On, c.Source, g.class)
		}
	}
	accuracy := float64(right) / float64(reachable)
	t.Logf("real corpus: %d of %d right through the metrics (%.1f%%); %d more the exporter cannot see, checked through classify\n%s\n%s\n%s",
		right, reachable, 100*accuracy, unreachable, perClass.table("class"), perOn.table("placement"), perBatch.table("batch"))
	for _, k := range slices.Sorted(maps.Keys(confusion)) {
		t.Logf("confusion %s: %d", k, confusion[k])
	}

	if len(cases) < 300 {
		t.Errorf("real corpus has %d cases, want at least 300", len(cases))
	}
	perClassAll := map[classify.Class]int{}
	for _, c := range cases {
		perClassAll[c.Class]++
	}
	for _, c := range classify.Classes() {
		if perClassAll[c] < 10 {
			t.Errorf("class %s has %d real cases, want at least 10", c, perClassAll[c])
		}
		if r := perClass[string(c)]; r != nil && float64(r[0]) < 0.9*float64(r[1]) {
			t.Errorf("class %s: %d of %d right, want at least 90%%", c, r[0], r[1])
		}
	}
	for on := range placements {
		if perOn[on] == nil {
			t.Errorf("no real case is placed on %s", on)
		}
	}
	if accuracy < 0.97 {
		t.Errorf("accuracy %.1f%%, want at least 97%%", 100*accuracy)
	}
	if h := perBatch["held-out"]; h == nil || float64(h[0]) < 0.97*float64(h[1]) {
		t.Errorf("held-out batch: %v (right, cases), want at least 97%% right", h)
	}
}
