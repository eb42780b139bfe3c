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
// build-<mosb> with the ephemeral objects' labels and no Job: its failed
// container decides the cause, as a Job's pod does.
func TestBareBuildPod(t *testing.T) {
	const name = "layered-0123456789abcdef0123456789abcdef"
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "build-" + name, Namespace: buildNS, CreationTimestamp: buildAt(1),
			Labels: map[string]string{
				LabelOnClusterLayering: "", "machineconfiguration.openshift.io/ephemeral-build-object": "",
				"machineconfiguration.openshift.io/rendered-machine-config":    "rendered-" + name,
				"machineconfiguration.openshift.io/target-machine-config-pool": "layered",
			},
		},
		Status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{Name: "image-build", State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error",
				Message: "STEP 12/13: RUN unknown-command\n/bin/sh: line 1: unknown-command: command not found\nerror building at STEP \"RUN unknown-command\": while running runtime: exit status 127"},
		}}}},
	}
	other := pod.DeepCopy()
	other.Name = "build-" + name + "-other" // not this build's pod
	c := &Cluster{
		Namespace:        buildNS,
		MachineOSConfigs: []*mcfgv1.MachineOSConfig{buildMOSC("layered")},
		MachineOSBuilds:  []*mcfgv1.MachineOSBuild{buildMOSB(name, 0, BuildFailed)},
		Pods:             []*corev1.Pod{pod, other},
	}
	b := c.build(c.MachineOSBuilds[0])
	if b.Failure == nil || b.Failure.Class != classify.ContainerfileCommandFailed {
		t.Fatalf("failure %+v, want %s from the bare build pod", b.Failure, classify.ContainerfileCommandFailed)
	}
	if b.PodFailures != 1 {
		t.Errorf("pod failures %d, want 1: the bare pod only", b.PodFailures)
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
