package analysis

import (
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ocl-exporter/ocl_exporter/classify"
)

const unseenNS = "openshift-machine-config-operator"

func unseenPool(edit func(p *mcfgv1.MachineConfigPool)) *mcfgv1.MachineConfigPool {
	p := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "layered"}}
	p.Spec.NodeSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"node-role.kubernetes.io/layered": ""}}
	if edit != nil {
		edit(p)
	}
	return p
}

func poolCondition(t mcfgv1.MachineConfigPoolConditionType, st corev1.ConditionStatus, reason, msg string) func(*mcfgv1.MachineConfigPool) {
	return func(p *mcfgv1.MachineConfigPool) {
		p.Status.Conditions = append(p.Status.Conditions, mcfgv1.MachineConfigPoolCondition{Type: t, Status: st, Reason: reason, Message: msg})
	}
}

func unseenNode(desired, current string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: "node-1", Labels: map[string]string{"node-role.kubernetes.io/layered": ""},
		Annotations: map[string]string{NodeAnnotationDesiredImage: desired, NodeAnnotationCurrentImage: current},
	}}
}

// TestUnseenLayeredPools: each kind of evidence, alone, on a pool of a
// view without MachineOSConfigs, and what it concludes; none when the
// view holds MachineOSConfigs (they decide) or the signs are of another
// pool or say the pool has no layered object left.
func TestUnseenLayeredPools(t *testing.T) {
	const img = "quay.io/example/os@sha256:0123"
	failedPod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: unseenNS, Name: "build-rendered-layered-1", Labels: map[string]string{LabelBuildPod416: "", LabelTargetPool416: "layered"}},
		Spec:       corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "image-build",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}}}},
	}
	failedJob := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: unseenNS, Name: "build-layered-1", Labels: map[string]string{LabelTargetPool: "layered"}},
		Status:     batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded"}}},
	}
	cm := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: unseenNS, Name: "mc-layered-1", Labels: map[string]string{LabelOnClusterLayering: "", LabelTargetPool: "layered"}}}
	otherCM := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: unseenNS, Name: "mc-infra-1", Labels: map[string]string{LabelOnClusterLayering: "", LabelTargetPool: "infra"}}}
	for _, c := range []struct {
		name  string
		c     Cluster
		want  LayeringState // 0: no sign
		sign  string
		class classify.Class
	}{
		{name: "image build failed", c: Cluster{MachineConfigPools: []*mcfgv1.MachineConfigPool{unseenPool(poolCondition(mcfgv1.MachineConfigPoolImageBuildDegraded, corev1.ConditionTrue, "BuildFailed", "Failed to build OS image for pool layered (MachineOSBuild: layered-1): manifest unknown"))}},
			want: LayeringFailing, sign: "pool ImageBuildDegraded", class: classify.ImageNotFound},
		{
			// OCPBUGS-112465: the build's Failed message quoted by
			// syncBuildFailureStatus; a refused push is the build's, not a
			// node's pull secret.
			name: "image build failed, push refused", c: Cluster{MachineConfigPools: []*mcfgv1.MachineConfigPool{unseenPool(poolCondition(mcfgv1.MachineConfigPoolImageBuildDegraded, corev1.ConditionTrue, "BuildFailed",
				`Failed to build OS image for pool layered (MachineOSBuild: layered-1): Failed: Error: pushing image "quay.io/example-org/layered-os:layered-1" to "docker://quay.io/example-org/layered-os:layered-1": writing blob: initiating layer upload to /v2/example-org/layered-os/blobs/uploads/ in quay.io: unauthorized: access to the requested resource is not authorized`))}},
			want: LayeringFailing, sign: "pool ImageBuildDegraded", class: classify.PushUnauthorized,
		},
		{name: "image building", c: Cluster{MachineConfigPools: []*mcfgv1.MachineConfigPool{unseenPool(poolCondition(mcfgv1.MachineConfigPoolImageBuildDegraded, corev1.ConditionFalse, "Building", "Build started for pool layered"))}},
			want: LayeringMoving, sign: "pool ImageBuildDegraded"},
		{name: "no layered objects left", c: Cluster{MachineConfigPools: []*mcfgv1.MachineConfigPool{unseenPool(poolCondition(mcfgv1.MachineConfigPoolImageBuildDegraded, corev1.ConditionFalse, "NoLayeredObjects", "No layered pool objects found"))}}},
		{name: "waiting for a build", c: Cluster{MachineConfigPools: []*mcfgv1.MachineConfigPool{unseenPool(poolCondition(mcfgv1.MachineConfigPoolUpdating, corev1.ConditionTrue, "", "Pool is waiting for OS image build to complete (mosb: layered-1)"))}},
			want: LayeringMoving, sign: "pool Updating"},
		{name: "stopped by a failed build", c: Cluster{MachineConfigPools: []*mcfgv1.MachineConfigPool{unseenPool(poolCondition(mcfgv1.MachineConfigPoolUpdating, corev1.ConditionFalse, "", "Pool update stopped due to OS image build failure (mosb: layered-1)"))}},
			want: LayeringFailing, sign: "pool Updating", class: classify.Unknown},
		{name: "legacy label", c: Cluster{MachineConfigPools: []*mcfgv1.MachineConfigPool{unseenPool(func(p *mcfgv1.MachineConfigPool) { p.Labels = map[string]string{LabelLayeringEnabledPool: ""} })}},
			want: LayeringSeen, sign: "pool label"},
		{name: "node on its image", c: Cluster{MachineConfigPools: []*mcfgv1.MachineConfigPool{unseenPool(nil)}, Nodes: []*metav1.PartialObjectMetadata{unseenNode(img, img)}},
			want: LayeringSeen, sign: "node image"},
		{name: "node moving", c: Cluster{MachineConfigPools: []*mcfgv1.MachineConfigPool{unseenPool(nil)}, Nodes: []*metav1.PartialObjectMetadata{unseenNode(img, "")}},
			want: LayeringMoving, sign: "node image"},
		{name: "node reverting", c: Cluster{MachineConfigPools: []*mcfgv1.MachineConfigPool{unseenPool(nil)}, Nodes: []*metav1.PartialObjectMetadata{unseenNode("", img)}}},
		{name: "4.16 build pod failed", c: Cluster{MachineConfigPools: []*mcfgv1.MachineConfigPool{unseenPool(nil)}, Pods: []*corev1.Pod{failedPod}},
			want: LayeringFailing, sign: "build pod", class: classify.OOMKilled},
		{name: "build Job failed", c: Cluster{MachineConfigPools: []*mcfgv1.MachineConfigPool{unseenPool(nil)}, Jobs: []*batchv1.Job{failedJob}},
			want: LayeringFailing, sign: "build Job", class: classify.Unknown},
		{name: "build ConfigMap", c: Cluster{MachineConfigPools: []*mcfgv1.MachineConfigPool{unseenPool(nil)}, ConfigMaps: []*metav1.PartialObjectMetadata{cm}},
			want: LayeringSeen, sign: "build ConfigMap"},
		{name: "another pool's ConfigMap", c: Cluster{MachineConfigPools: []*mcfgv1.MachineConfigPool{unseenPool(nil)}, ConfigMaps: []*metav1.PartialObjectMetadata{otherCM}}},
		{name: "MachineOSBuild without its config", c: Cluster{MachineConfigPools: []*mcfgv1.MachineConfigPool{unseenPool(nil)}, MachineOSBuilds: []*mcfgv1.MachineOSBuild{func() *mcfgv1.MachineOSBuild {
			b := buildMOSB("layered-1", 0, BuildSucceeded)
			b.Labels = map[string]string{LabelTargetPool: "layered"}
			return b
		}()}}, want: LayeringSeen, sign: "MachineOSBuild"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.c.Namespace = unseenNS
			c.c.NotCaptured = map[string]bool{KindMachineOSConfig: true}
			got := UnseenLayeredPools(&c.c)
			if c.want == 0 {
				if len(got) != 0 {
					t.Fatalf("got %+v, want no sign", got)
				}
				return
			}
			if len(got) != 1 || got[0].Pool != "layered" || got[0].State != c.want || got[0].Signs[0].Sign != c.sign {
				t.Fatalf("got %+v, want pool layered %d by %s", got, c.want, c.sign)
			}
			if s := got[0].Signs[0]; c.want == LayeringFailing && (s.Cause == nil || s.Cause.Class != c.class) {
				t.Errorf("cause %+v, want %s", s.Cause, c.class)
			}
			c.c.NotCaptured = nil // the MachineOSConfigs decide
			if got := UnseenLayeredPools(&c.c); got != nil {
				t.Errorf("with MachineOSConfigs captured: %+v", got)
			}
		})
	}
}
