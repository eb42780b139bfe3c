package analysis

import (
	"slices"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ocl-exporter/ocl_exporter/classify"
)

// TestBareBuildPod: OpenShift 4.16 and 4.17 ran the build as a bare pod
// build-<rendered config>, no Job (ImageBuildRequest.getBuildName), with
// 4.16's buildPod label or 4.17's ephemeral labels and MachineOSBuild
// annotation. Its failed container decides the cause and counts as a
// failed pod of its build only, even while the pod still runs its
// wait-for-done container.
func TestBareBuildPod(t *testing.T) {
	const name = "layered-rendered-layered-0123456789abcdef-builder" // <pool>-<rendered>-builder
	const rendered = "rendered-layered-0123456789abcdef"
	failed := corev1.ContainerStatus{Name: "image-build", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error",
		Message: "STEP 12/13: RUN unknown-command\n/bin/sh: line 1: unknown-command: command not found\nerror building at STEP \"RUN unknown-command\": while running runtime: exit status 127"}}}
	waiting := corev1.ContainerStatus{Name: "wait-for-done", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	pod := func(podName string, labels, annotations map[string]string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: podName, Namespace: buildNS, CreationTimestamp: buildAt(1), Labels: labels, Annotations: annotations},
			Spec:       corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever},
			Status:     corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{failed, waiting}},
		}
	}
	v416 := map[string]string{LabelBuildPod416: "", "machineconfiguration.openshift.io/targetMachineConfigPool": "layered", "machineconfiguration.openshift.io/desiredConfig": rendered}
	v417 := map[string]string{LabelOnClusterLayering: "", LabelEphemeralObject: "", LabelRenderedConfig: rendered, LabelTargetPool: "layered"}
	for _, tc := range []struct {
		name  string
		pod   *corev1.Pod
		yours bool
	}{
		{"4.16", pod("build-"+rendered, v416, map[string]string{"machineconfiguration.openshift.io/pool": ""}), true},
		{"4.17", pod("build-"+rendered, v417, map[string]string{LabelMachineOSBuild: name, LabelMachineOSConfig: "layered"}), true},
		{"4.17 pod of another build", pod("build-"+rendered, v417, map[string]string{LabelMachineOSBuild: "other"}), false},
		{"named after the build, not its config", pod("build-"+name, v417, nil), false},
		{"no MCO label", pod("build-"+rendered, nil, nil), false},
		{"a Job's pod", pod("build-"+rendered, map[string]string{labelJobName: "build-other"}, nil), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := buildMOSB(name, 0, BuildFailed)
			b.Spec.MachineConfig.Name = rendered
			c := &Cluster{
				Namespace:        buildNS,
				MachineOSConfigs: []*mcfgv1.MachineOSConfig{buildMOSC("layered")},
				MachineOSBuilds:  []*mcfgv1.MachineOSBuild{b},
				Pods:             []*corev1.Pod{tc.pod},
			}
			got := c.build(b)
			linked := got.PodFailures == 1 && got.Failure != nil && got.Failure.Class == classify.ContainerfileCommandFailed
			if linked != tc.yours {
				t.Errorf("pod failures %d, failure %+v: linked %v, want %v", got.PodFailures, got.Failure, linked, tc.yours)
			}
		})
	}
}

// TestEphemeralObjectsOfAKindNotCaptured: a kind the snapshot did not
// capture is not counted as 0.
func TestEphemeralObjectsOfAKindNotCaptured(t *testing.T) {
	c := &Cluster{
		Namespace:   buildNS,
		ConfigMaps:  []*metav1.PartialObjectMetadata{{ObjectMeta: metav1.ObjectMeta{Name: "containerfile-b1", Namespace: buildNS, Labels: map[string]string{LabelOnClusterLayering: "", LabelMachineOSBuild: "b1"}}}},
		NotCaptured: map[string]bool{KindSecret: true},
	}
	var kinds []string
	for _, e := range c.EphemeralObjects() {
		kinds = append(kinds, e.Kind)
	}
	if want := []string{KindConfigMap, KindJob}; !slices.Equal(kinds, want) {
		t.Errorf("kinds counted %v, want %v", kinds, want)
	}
}
