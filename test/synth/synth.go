// Package synth generates synthetic OCL clusters of a given size, shaped
// like the objects the MCO writes, for benchmarks with fake clientsets and
// for scale runs against a real API server.
package synth

import (
	"crypto/md5"
	"fmt"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ocl-exporter/ocl_exporter/analysis"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
)

// Size says how big a cluster to make.
type Size struct {
	// Nodes in all; three are masters, the rest spread over the pools.
	Nodes int
	// LayeredPools are custom pools with a MachineOSConfig, besides master
	// and worker.
	LayeredPools int
	// Builds is the number of MachineOSBuilds, spread over the layered
	// pools: the MCO never prunes successful ones, so they accumulate.
	Builds int
}

// Target is the size the performance targets are set at.
var Target = Size{Nodes: 2000, LayeredPools: 8, Builds: 500}

const ns = snapshot.DefaultNamespace

var start = time.Date(2025, 10, 1, 0, 0, 0, 0, time.UTC)

func meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, UID: uid(name), CreationTimestamp: metav1.NewTime(start)}
}

func uid(name string) types.UID {
	h := md5.Sum([]byte(name))
	return types.UID(fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16]))
}

func hash(s string) string { return fmt.Sprintf("%x", md5.Sum([]byte(s))) }

func digest(s string) string { return "sha256:" + hash(s) + hash(s+"2") }

// Objects returns the cluster: pools, nodes with MachineConfigNodes, one
// MachineOSConfig per layered pool with its build history, a failed build
// with its Job, pods and leftovers, secrets, events and the operator.
func Objects(s Size) []runtime.Object {
	var out []runtime.Object
	add := func(o ...runtime.Object) { out = append(out, o...) }

	pools := []string{"master", "worker"}
	for i := 0; i < s.LayeredPools; i++ {
		pools = append(pools, fmt.Sprintf("layered%d", i))
	}
	images := map[string]string{}
	byName := map[string]*mcfgv1.MachineConfigPool{}
	for _, p := range pools {
		rendered := "rendered-" + p + "-" + hash(p)
		byName[p] = pool(p, rendered)
		add(byName[p])
		if p == "master" || p == "worker" {
			continue
		}
		images[p] = "quay.io/example/os@" + digest(p)
		add(machineOSConfig(p, images[p]))
		add(secret(p + "-push-secret"))
	}
	add(secret(analysis.DefaultBasePullSecret))
	add(builds(s, pools[2:], images)...)

	for i := 0; i < s.Nodes; i++ {
		p := "master"
		if i >= 3 {
			p = pools[1+(i-3)%(len(pools)-1)]
		}
		n, m := node(i, p, images[p])
		add(n, m)
		count(&byName[p].Status, n.Annotations[analysis.NodeAnnotationState])
	}
	add(operator(), builder())
	for i := 0; i < 50; i++ {
		add(event(i))
	}
	return out
}

func pool(name, rendered string) *mcfgv1.MachineConfigPool {
	return &mcfgv1.MachineConfigPool{
		TypeMeta:   metav1.TypeMeta{APIVersion: "machineconfiguration.openshift.io/v1", Kind: "MachineConfigPool"},
		ObjectMeta: meta(name),
		Spec: mcfgv1.MachineConfigPoolSpec{
			NodeSelector:  &metav1.LabelSelector{MatchLabels: map[string]string{"node-role.kubernetes.io/" + name: ""}},
			Configuration: mcfgv1.MachineConfigPoolStatusConfiguration{ObjectReference: corev1.ObjectReference{Name: rendered}},
		},
		Status: mcfgv1.MachineConfigPoolStatus{
			Configuration: mcfgv1.MachineConfigPoolStatusConfiguration{ObjectReference: corev1.ObjectReference{Name: rendered}},
			Conditions: []mcfgv1.MachineConfigPoolCondition{
				{Type: mcfgv1.MachineConfigPoolUpdated, Status: corev1.ConditionFalse},
				{Type: mcfgv1.MachineConfigPoolUpdating, Status: corev1.ConditionTrue},
				{Type: mcfgv1.MachineConfigPoolDegraded, Status: corev1.ConditionFalse},
				{Type: mcfgv1.MachineConfigPoolNodeDegraded, Status: corev1.ConditionFalse},
				{Type: mcfgv1.MachineConfigPoolRenderDegraded, Status: corev1.ConditionFalse},
				{Type: mcfgv1.MachineConfigPoolImageBuildDegraded, Status: corev1.ConditionFalse, Reason: "BuildSuccess"},
			},
		},
	}
}

// count adds a node in state to the pool's machine counts, as the node
// controller counts them: updated when Done on the pool's config, ready
// when not updating, degraded when Degraded.
func count(s *mcfgv1.MachineConfigPoolStatus, state string) {
	s.MachineCount++
	switch state {
	case "Done":
		s.UpdatedMachineCount++
		s.ReadyMachineCount++
	case "Degraded":
		s.DegradedMachineCount++
		s.UnavailableMachineCount++
	default:
		s.UnavailableMachineCount++
	}
}

func machineOSConfig(p, image string) *mcfgv1.MachineOSConfig {
	m := &mcfgv1.MachineOSConfig{
		TypeMeta:   metav1.TypeMeta{APIVersion: "machineconfiguration.openshift.io/v1", Kind: "MachineOSConfig"},
		ObjectMeta: meta(p),
		Spec: mcfgv1.MachineOSConfigSpec{
			MachineConfigPool:       mcfgv1.MachineConfigPoolReference{Name: p},
			ImageBuilder:            mcfgv1.MachineOSImageBuilder{ImageBuilderType: mcfgv1.JobBuilder},
			RenderedImagePushSecret: mcfgv1.ImageSecretObjectReference{Name: p + "-push-secret"},
			RenderedImagePushSpec:   mcfgv1.ImageTagFormat("quay.io/example/os:" + p),
		},
		Status: mcfgv1.MachineOSConfigStatus{CurrentImagePullSpec: mcfgv1.ImageDigestFormat(image)},
	}
	m.Annotations = map[string]string{analysis.AnnotationCurrentBuild: buildName(p, 0)}
	return m
}

func buildName(p string, i int) string { return fmt.Sprintf("%s-%s", p, hash(fmt.Sprint(p, i))) }

// builds spreads s.Builds over the layered pools, newest first; the newest
// build of the first pool failed and left its Job, pods and objects.
func builds(s Size, pools []string, images map[string]string) []runtime.Object {
	var out []runtime.Object
	if len(pools) == 0 {
		return nil
	}
	for i := 0; i < s.Builds; i++ {
		p, n := pools[i%len(pools)], i/len(pools)
		name := buildName(p, n)
		created := start.Add(-time.Duration(n) * time.Hour)
		b := &mcfgv1.MachineOSBuild{
			TypeMeta:   metav1.TypeMeta{APIVersion: "machineconfiguration.openshift.io/v1", Kind: "MachineOSBuild"},
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: uid(name), CreationTimestamp: metav1.NewTime(created)},
			Spec: mcfgv1.MachineOSBuildSpec{
				MachineConfig:         mcfgv1.MachineConfigReference{Name: fmt.Sprintf("rendered-%s-%s", p, hash(fmt.Sprint(p, n, "mc")))},
				MachineOSConfig:       mcfgv1.MachineOSConfigReference{Name: p},
				RenderedImagePushSpec: mcfgv1.ImageTagFormat("quay.io/example/os:" + name),
			},
		}
		b.Labels = map[string]string{analysis.LabelTargetPool: p, analysis.LabelMachineOSConfig: p, analysis.LabelRenderedConfig: b.Spec.MachineConfig.Name}
		startT, endT := metav1.NewTime(created.Add(time.Minute)), metav1.NewTime(created.Add(20*time.Minute))
		b.Status.BuildStart, b.Status.BuildEnd = &startT, &endT
		state := mcfgv1.MachineOSBuildSucceeded
		if i == 0 {
			state = mcfgv1.MachineOSBuildFailed
			out = append(out, failedBuild(name, p)...)
		} else {
			b.Status.DigestedImagePushSpec = mcfgv1.ImageDigestFormat("quay.io/example/os@" + digest(name))
		}
		if n == 0 && i != 0 {
			b.Status.DigestedImagePushSpec = mcfgv1.ImageDigestFormat(images[p])
		}
		for _, t := range []mcfgv1.BuildProgress{mcfgv1.MachineOSBuildPrepared, mcfgv1.MachineOSBuilding, mcfgv1.MachineOSBuildFailed, mcfgv1.MachineOSBuildInterrupted, mcfgv1.MachineOSBuildSucceeded} {
			status := metav1.ConditionFalse
			if t == state {
				status = metav1.ConditionTrue
			}
			b.Status.Conditions = append(b.Status.Conditions, metav1.Condition{Type: string(t), Status: status, Reason: string(t), LastTransitionTime: endT})
		}
		out = append(out, b)
	}
	return out
}

const buildLog = `STEP 10/12: FROM configs AS final
STEP 11/12: RUN dnf install -y cowsay
Updating Subscription Management repositories.
No match for argument: cowsay
Error: Unable to find a match: cowsay
error building at STEP "RUN dnf install -y cowsay": error while running runtime: exit status 1
`

func failedBuild(mosb, p string) []runtime.Object {
	job := "build-" + mosb
	labels := map[string]string{analysis.LabelOnClusterLayering: "", analysis.LabelEphemeralObject: "", analysis.LabelMachineOSBuild: mosb, analysis.LabelMachineOSConfig: p, analysis.LabelTargetPool: p}
	var out []runtime.Object
	j := &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}, ObjectMeta: meta(job)}
	j.Namespace, j.Labels = ns, labels
	j.Status.Failed = 4
	j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"}}
	out = append(out, j)
	for i := 0; i < 4; i++ {
		pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: meta(fmt.Sprintf("%s-%05d", job, i))}
		pod.Namespace, pod.Labels = ns, map[string]string{"job-name": job, "batch.kubernetes.io/job-name": job}
		pod.Status.Phase = corev1.PodFailed
		pod.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "image-build", State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", Message: buildLog},
		}}}
		out = append(out, pod)
	}
	for _, kind := range []string{"containerfile", "mc", "additionaltrustbundle"} {
		out = append(out, metadata("ConfigMap", kind+"-"+mosb, labels))
	}
	for _, kind := range []string{"base", "final"} {
		out = append(out, metadata("Secret", kind+"-"+mosb, labels))
	}
	return out
}

func metadata(kind, name string, labels map[string]string) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: kind}, ObjectMeta: meta(name)}
	m.Namespace, m.Labels = ns, labels
	return m
}

func secret(name string) *metav1.PartialObjectMetadata { return metadata("Secret", name, nil) }

// node returns a node, with the annotations a real one carries besides the
// MCO's, and its MachineConfigNode. One in a hundred is degraded pulling
// its image, one in fifty is still updating.
func node(i int, p, image string) (*metav1.PartialObjectMetadata, *mcfgv1.MachineConfigNode) {
	name := fmt.Sprintf("ip-10-0-%d-%d.us-east-2.compute.internal", i/250, i%250)
	rendered := "rendered-" + p + "-" + hash(p)
	n := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"}, ObjectMeta: meta(name)}
	n.Labels = map[string]string{
		"node-role.kubernetes.io/" + p: "", "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
		"node.kubernetes.io/instance-type": "m6i.xlarge", "topology.kubernetes.io/zone": "us-east-2a",
	}
	state, current, currentConfig, reason := "Done", image, rendered, ""
	switch {
	case image != "" && i%100 == 7:
		state, current = "Degraded", "quay.io/example/os@"+digest("old")
		reason = "failed to update OS to " + image + " after retries: error: Creating importer: failed to invoke method OpenImage: reading manifest in quay.io/example/os: manifest unknown"
	case i%50 == 9:
		// Mid-update: targeted to the pool's config and image, still on
		// the previous ones.
		state, currentConfig = "Working", "rendered-"+p+"-"+hash(p+"old")
		if image != "" {
			current = "quay.io/example/os@" + digest("old")
		}
	}
	n.Annotations = map[string]string{
		analysis.NodeAnnotationCurrentConfig: currentConfig, analysis.NodeAnnotationDesiredConfig: rendered,
		analysis.NodeAnnotationState: state, analysis.NodeAnnotationReason: reason,
		"k8s.ovn.org/node-subnets":                               `{"default":["10.128.2.0/23"]}`,
		"k8s.ovn.org/host-cidrs":                                 `["10.0.1.1/24"]`,
		"csi.volume.kubernetes.io/nodeid":                        `{"ebs.csi.aws.com":"i-0123456789abcdef0"}`,
		"volumes.kubernetes.io/controller-managed-attach-detach": "true",
	}
	if image != "" {
		n.Annotations[analysis.NodeAnnotationDesiredImage] = image
		n.Annotations[analysis.NodeAnnotationCurrentImage] = current
	}
	m := &mcfgv1.MachineConfigNode{
		TypeMeta:   metav1.TypeMeta{APIVersion: "machineconfiguration.openshift.io/v1", Kind: "MachineConfigNode"},
		ObjectMeta: meta(name),
		Spec: mcfgv1.MachineConfigNodeSpec{
			Node: mcfgv1.MCOObjectReference{Name: name}, Pool: mcfgv1.MCOObjectReference{Name: p},
			ConfigVersion: mcfgv1.MachineConfigNodeSpecMachineConfigVersion{Desired: rendered},
		},
	}
	updated := metav1.ConditionTrue
	if state != "Done" {
		updated = metav1.ConditionFalse
	}
	for _, t := range []mcfgv1.StateProgress{mcfgv1.MachineConfigNodeUpdatePrepared, mcfgv1.MachineConfigNodeUpdateExecuted,
		mcfgv1.MachineConfigNodeUpdatePostActionComplete, mcfgv1.MachineConfigNodeUpdateComplete, mcfgv1.MachineConfigNodeResumed,
		mcfgv1.MachineConfigNodeUpdated, mcfgv1.MachineConfigNodeNodeDegraded} {
		status := metav1.ConditionFalse
		if t == mcfgv1.MachineConfigNodeUpdated {
			status = updated
		}
		m.Status.Conditions = append(m.Status.Conditions, metav1.Condition{Type: string(t), Status: status, Reason: "NotYetOccurred", Message: "This node has not yet entered the " + string(t) + " phase"})
	}
	return n, m
}

func operator() *configv1.ClusterOperator {
	return &configv1.ClusterOperator{
		TypeMeta:   metav1.TypeMeta{APIVersion: "config.openshift.io/v1", Kind: "ClusterOperator"},
		ObjectMeta: meta(snapshot.ClusterOperatorName),
		Status: configv1.ClusterOperatorStatus{Conditions: []configv1.ClusterOperatorStatusCondition{
			{Type: configv1.OperatorAvailable, Status: configv1.ConditionTrue},
			{Type: configv1.OperatorDegraded, Status: configv1.ConditionFalse},
		}},
	}
}

func builder() *appsv1.Deployment {
	d := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: meta(snapshot.BuilderDeploymentName)}
	d.Namespace = ns
	d.Status.Replicas, d.Status.ReadyReplicas = 1, 1
	return d
}

func event(i int) *corev1.Event {
	e := &corev1.Event{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Event"}, ObjectMeta: meta(fmt.Sprintf("machine-config.%x", i))}
	e.Namespace, e.Type, e.Reason = ns, corev1.EventTypeWarning, "BackOff"
	e.Message = "Back-off restarting failed container"
	e.LastTimestamp = metav1.NewTime(start)
	return e
}
