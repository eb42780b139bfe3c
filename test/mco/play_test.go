//go:build e2emco

package mco

// What the tests play of the cluster around the MCO's controllers, each
// as Kubernetes or the MCO's other components write it: the Job controller
// and the kubelet (a build Job's pod, its states, the Job's status), the
// garbage collector (a deleted Job's pods), the build pod's last container
// (the digest ConfigMap, as `machine-os-builder create-digest-configmap`
// writes it), the machine-config-daemon (a node's currentConfig,
// currentImage and state annotations) and the render controller (a pool's
// new rendered config).

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ocl-exporter/ocl_exporter/test/cluster"
)

// The resources the harness writes, as the exporter watches them.
var (
	mosbGVR       = cluster.GVR("MachineOSBuild")
	moscGVR       = cluster.GVR("MachineOSConfig")
	mcpGVR        = cluster.GVR("MachineConfigPool")
	mcGVR         = cluster.GVR("MachineConfig")
	mcnGVR        = cluster.GVR("MachineConfigNode")
	jobGVR        = cluster.GVR("Job")
	podGVR        = cluster.GVR("Pod")
	cmGVR         = cluster.GVR("ConfigMap")
	nodeGVR       = cluster.GVR("Node")
	secretGVR     = cluster.GVR("Secret")
	deploymentGVR = cluster.GVR("Deployment")
)

// MCO annotation keys (pkg/daemon/constants, pkg/controller/build/constants).
const (
	annoPrefix         = "machineconfiguration.openshift.io/"
	currentConfigAnno  = annoPrefix + "currentConfig"
	desiredConfigAnno  = annoPrefix + "desiredConfig"
	currentImageAnno   = annoPrefix + "currentImage"
	desiredImageAnno   = annoPrefix + "desiredImage"
	stateAnno          = annoPrefix + "state"
	reasonAnno         = annoPrefix + "reason"
	jobUIDAnno         = annoPrefix + "job-uid"
	currentBuildAnno   = annoPrefix + "current-machine-os-build"
	rebuildAnno        = annoPrefix + "rebuild"
	machineOSConfigKey = annoPrefix + "machine-os-config"
)

// now is a timestamp as the API server writes it.
func now() string { return time.Now().UTC().Format(time.RFC3339) }

// mergePatch sends a JSON merge patch, to the status subresource with
// status set.
func (w *world) mergePatch(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, patch map[string]any, status bool) error {
	data, err := (&unstructured.Unstructured{Object: patch}).MarshalJSON()
	if err != nil {
		return err
	}
	var sub []string
	if status {
		sub = []string{"status"}
	}
	_, err = w.resource(gvr, namespace).Patch(ctx, name, types.MergePatchType, data, metav1.PatchOptions{}, sub...)
	if err != nil {
		return fmt.Errorf("patch %s %s: %w", gvr.Resource, name, err)
	}
	return nil
}

// renderConfig plays the render controller: the new rendered config (a
// MachineConfig the test created) becomes the pool's spec.configuration,
// with its sources.
func (w *world) renderConfig(ctx context.Context, pool, rendered string, sources []string) error {
	var src []any
	for _, s := range sources {
		src = append(src, map[string]any{"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig", "name": s})
	}
	return w.mergePatch(ctx, mcpGVR, "", pool, map[string]any{"spec": map[string]any{
		"configuration": map[string]any{"name": rendered, "source": src},
	}}, false)
}

// startBuildPod plays the Job controller and the kubelet: a pod of the Job
// (its template, the Job's labels, owned by the Job; its name the Job's
// and a generated suffix), Running, and the Job's status active as the Job
// controller counts it.
func (w *world) startBuildPod(ctx context.Context, jobName, suffix string) error {
	job := w.get(ctx, jobGVR, mcoNamespace, jobName)
	if job == nil {
		return fmt.Errorf("no Job %s", jobName)
	}
	tmpl, _, _ := unstructured.NestedMap(job.Object, "spec", "template")
	pod := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod", "spec": tmpl["spec"]}}
	pod.SetName(jobName + "-" + suffix)
	pod.SetNamespace(mcoNamespace)
	labels, _, _ := unstructured.NestedStringMap(job.Object, "spec", "template", "metadata", "labels")
	pod.SetLabels(labels)
	yes := true
	pod.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: jobName, UID: job.GetUID(), Controller: &yes, BlockOwnerDeletion: &yes}})
	_ = unstructured.SetNestedField(pod.Object, "ip-10-0-17-233.us-east-2.compute.internal", "spec", "nodeName")
	if err := w.kube.Create(ctx, pod); err != nil {
		return fmt.Errorf("build pod %s: %w", pod.GetName(), err)
	}
	t := now()
	if err := w.mergePatch(ctx, podGVR, mcoNamespace, pod.GetName(), map[string]any{"status": map[string]any{
		"phase": "Running", "startTime": t,
		"conditions": []any{
			map[string]any{"type": "PodScheduled", "status": "True", "lastTransitionTime": t},
			map[string]any{"type": "Initialized", "status": "False", "reason": "ContainersNotInitialized", "message": "containers with incomplete status: [image-build]", "lastTransitionTime": t},
		},
		"initContainerStatuses": []any{containerStatus("image-build", map[string]any{"running": map[string]any{"startedAt": t}})},
	}}, true); err != nil {
		return err
	}
	status := map[string]any{"active": 1, "ready": 0, "uncountedTerminatedPods": map[string]any{}}
	if start, _, _ := unstructured.NestedString(job.Object, "status", "startTime"); start == "" {
		status["startTime"] = t // the Job controller sets it with the first pod
	}
	return w.mergePatch(ctx, jobGVR, mcoNamespace, jobName, map[string]any{"status": status}, true)
}

func containerStatus(name string, state map[string]any) map[string]any {
	return map[string]any{"name": name, "image": "registry.build06.ci.openshift.org/ci-ln-bfn63jk/stable", "imageID": "", "ready": false, "restartCount": 0, "started": state["running"] != nil, "state": state}
}

// failBuildPod plays the kubelet and the Job controller on a build pod
// whose image-build container exits 1: the pod Failed with the buildah
// output as its termination message (terminationMessagePolicy
// FallbackToLogsOnError), the Job's failed count, and, when failed passes
// backoffLimit, the Job's FailureTarget and Failed conditions
// (BackoffLimitExceeded).
func (w *world) failBuildPod(ctx context.Context, jobName, suffix string, failed int, message string) error {
	t := now()
	if err := w.mergePatch(ctx, podGVR, mcoNamespace, jobName+"-"+suffix, map[string]any{"status": map[string]any{
		"phase": "Failed",
		"initContainerStatuses": []any{containerStatus("image-build", map[string]any{"terminated": map[string]any{
			"exitCode": 1, "reason": "Error", "message": message, "startedAt": t, "finishedAt": t}})},
	}}, true); err != nil {
		return err
	}
	job := w.get(ctx, jobGVR, mcoNamespace, jobName)
	if job == nil {
		return fmt.Errorf("no Job %s", jobName)
	}
	backoff, _, _ := unstructured.NestedInt64(job.Object, "spec", "backoffLimit")
	status := map[string]any{"failed": failed, "active": 1, "ready": 0}
	if start, _, _ := unstructured.NestedString(job.Object, "status", "startTime"); start == "" {
		status["startTime"] = t // the Job controller sets it with the first pod
	}
	if int64(failed) > backoff {
		status["active"] = 0
		msg := "Job has reached the specified backoff limit"
		status["conditions"] = []any{
			map[string]any{"type": "FailureTarget", "status": "True", "reason": "BackoffLimitExceeded", "message": msg, "lastProbeTime": t, "lastTransitionTime": t},
			map[string]any{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": msg, "lastProbeTime": t, "lastTransitionTime": t},
		}
	}
	return w.mergePatch(ctx, jobGVR, mcoNamespace, jobName, map[string]any{"status": status}, true)
}

// succeedBuildPod plays the build pod's create-digest-configmap container
// (the digest ConfigMap, labelled with DIGEST_CONFIGMAP_LABELS), the
// kubelet (the pod Succeeded) and the Job controller (succeeded, with the
// SuccessCriteriaMet and Complete conditions).
func (w *world) succeedBuildPod(ctx context.Context, jobName, suffix, mosb, digest string) error {
	job := w.get(ctx, jobGVR, mcoNamespace, jobName)
	if job == nil {
		return fmt.Errorf("no Job %s", jobName)
	}
	env := jobEnv(job, "create-digest-configmap")
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"digest": digest}}}
	cm.SetName(env["DIGEST_CONFIGMAP_NAME"])
	cm.SetNamespace(mcoNamespace)
	cm.SetLabels(parseLabels(env["DIGEST_CONFIGMAP_LABELS"]))
	if err := w.kube.Create(ctx, cm); err != nil {
		return fmt.Errorf("digest ConfigMap for %s: %w", mosb, err)
	}
	t := now()
	done := map[string]any{"terminated": map[string]any{"exitCode": 0, "reason": "Completed", "startedAt": t, "finishedAt": t}}
	if err := w.mergePatch(ctx, podGVR, mcoNamespace, jobName+"-"+suffix, map[string]any{"status": map[string]any{
		"phase":                 "Succeeded",
		"initContainerStatuses": []any{containerStatus("image-build", done)},
		"containerStatuses":     []any{containerStatus("create-digest-configmap", done)},
	}}, true); err != nil {
		return err
	}
	return w.mergePatch(ctx, jobGVR, mcoNamespace, jobName, map[string]any{"status": map[string]any{
		"active": 0, "succeeded": 1, "ready": 0, "completionTime": t,
		"conditions": []any{
			map[string]any{"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached", "message": "Reached expected number of succeeded pods", "lastProbeTime": t, "lastTransitionTime": t},
			map[string]any{"type": "Complete", "status": "True", "reason": "CompletionsReached", "message": "Reached expected number of succeeded pods", "lastProbeTime": t, "lastTransitionTime": t},
		},
	}}, true)
}

// jobEnv is the environment of a container of the Job's pod template.
func jobEnv(job *unstructured.Unstructured, container string) map[string]string {
	out := map[string]string{}
	cs, _, _ := unstructured.NestedSlice(job.Object, "spec", "template", "spec", "containers")
	for _, c := range cs {
		m, _ := c.(map[string]any)
		if m["name"] != container {
			continue
		}
		env, _ := m["env"].([]any)
		for _, e := range env {
			em, _ := e.(map[string]any)
			name, _ := em["name"].(string)
			value, _ := em["value"].(string)
			out[name] = value
		}
	}
	return out
}

// parseLabels reads k=v,k2=v2 as the digest container's --labels flag does.
func parseLabels(s string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[k] = v
		}
	}
	return out
}

// collectGarbage plays the garbage collector, which runs all along in a
// cluster: an owner deleted in the foreground (a Job, a MachineOSBuild:
// deletionTimestamp and the foregroundDeletion finalizer) loses its
// dependents, then its finalizers; Jobs, pods, ConfigMaps and Secrets
// whose owner (by uid) is gone are deleted, as background propagation
// does.
func (w *world) collectGarbage(ctx context.Context) error {
	for _, gvr := range []schema.GroupVersionResource{mosbGVR, jobGVR, podGVR, cmGVR, secretGVR} {
		ns := mcoNamespace
		if gvr == mosbGVR {
			ns = ""
		}
		list, err := w.resource(gvr, ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for i := range list.Items {
			if err := w.collect(ctx, gvr, &list.Items[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// collect removes u if its owner is gone, or finishes its foreground
// deletion once its dependents are gone.
func (w *world) collect(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured) error {
	if u.GetDeletionTimestamp() != nil {
		if len(u.GetFinalizers()) == 0 || w.hasDependents(ctx, u) {
			return nil
		}
		return w.mergePatch(ctx, gvr, u.GetNamespace(), u.GetName(), map[string]any{"metadata": map[string]any{"finalizers": nil}}, false)
	}
	for _, o := range u.GetOwnerReferences() {
		owner := map[string]schema.GroupVersionResource{"Job": jobGVR, "MachineOSBuild": mosbGVR}[o.Kind]
		ns := mcoNamespace
		if o.Kind == "MachineOSBuild" {
			ns = ""
		}
		// The garbage collector goes by uid: an owner deleted and
		// recreated under the same name no longer owns u.
		if cur := w.get(ctx, owner, ns, o.Name); owner.Resource != "" && (cur == nil || cur.GetUID() != o.UID) {
			return w.kube.Remove(ctx, u)
		}
	}
	return nil
}

// hasDependents says whether a pod or Job names u as its owner.
func (w *world) hasDependents(ctx context.Context, u *unstructured.Unstructured) bool {
	for _, gvr := range []schema.GroupVersionResource{jobGVR, podGVR} {
		list, err := w.resource(gvr, mcoNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return true
		}
		for _, d := range list.Items {
			for _, o := range d.GetOwnerReferences() {
				if o.Kind == u.GetKind() && o.Name == u.GetName() {
					if d.GetDeletionTimestamp() == nil {
						_ = w.kube.Remove(ctx, &d)
					}
					return true
				}
			}
		}
	}
	return false
}

// daemonWorking plays the machine-config-daemon taking up its node's new
// target.
func (w *world) daemonWorking(ctx context.Context, node string) error {
	return w.setNodeAnnotations(ctx, node, map[string]any{stateAnno: "Working"})
}

// daemonDone plays the machine-config-daemon finishing its node's update:
// currentConfig and currentImage become the desired ones, state Done.
func (w *world) daemonDone(ctx context.Context, node string) error {
	u := w.get(ctx, nodeGVR, "", node)
	if u == nil {
		return fmt.Errorf("no node %s", node)
	}
	a := u.GetAnnotations()
	set := map[string]any{currentConfigAnno: a[desiredConfigAnno], stateAnno: "Done"}
	if img, ok := a[desiredImageAnno]; ok {
		set[currentImageAnno] = img
	} else {
		set[currentImageAnno] = nil
	}
	return w.setNodeAnnotations(ctx, node, set)
}

func (w *world) setNodeAnnotations(ctx context.Context, node string, set map[string]any) error {
	return w.mergePatch(ctx, nodeGVR, "", node, map[string]any{"metadata": map[string]any{"annotations": set}}, false)
}

// nodesTargeting are the nodes of the list whose desiredImage is image.
func (w *world) nodesTargeting(ctx context.Context, nodes []string, image string) []string {
	var out []string
	for _, n := range nodes {
		if u := w.get(ctx, nodeGVR, "", n); u != nil && u.GetAnnotations()[desiredImageAnno] == image {
			out = append(out, n)
		}
	}
	return out
}

// buildsOf are the names of the MachineOSBuilds of a MachineOSConfig.
func (w *world) buildsOf(ctx context.Context, mosc string) []string {
	list, err := w.resource(mosbGVR, "").List(ctx, metav1.ListOptions{LabelSelector: machineOSConfigKey + "=" + mosc})
	if err != nil {
		return nil
	}
	var out []string
	for _, u := range list.Items {
		out = append(out, u.GetName())
	}
	slices.Sort(out)
	return out
}

// condition is a status condition's status, reason and message.
type condition struct{ Status, Reason, Message string }

// conditions are an object's status conditions by type.
func conditions(u *unstructured.Unstructured) map[string]condition {
	out := map[string]condition{}
	if u == nil {
		return out
	}
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range list {
		m, _ := c.(map[string]any)
		s := func(k string) string { v, _ := m[k].(string); return v }
		out[s("type")] = condition{s("status"), s("reason"), s("message")}
	}
	return out
}

// hasCondition says whether u has the condition of that type at status
// and, when message is not empty, whose message contains it.
func hasCondition(u *unstructured.Unstructured, typ, status, message string) bool {
	c, ok := conditions(u)[typ]
	return ok && c.Status == status && strings.Contains(c.Message, message)
}
