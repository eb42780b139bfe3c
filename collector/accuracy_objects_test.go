package collector

// The objects of the real-world corpus's cases, as the MCO, the Job
// controller and the kubelet write them when a case's text is the cause
// (TestRealWorldAccuracy).

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ocl-exporter/ocl_exporter/analysis"
	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
)

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
