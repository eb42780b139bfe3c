//go:build e2e

package e2e

// The exporter's replicas as pods of a Deployment: Pod objects from its
// template, each process run as its pod would, endpoints as the
// EndpointSlice controller writes them.

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ocl-exporter/ocl_exporter/test/cluster"
)

// overlayDeployment is the Deployment of deploy/overlays/<name>.
func overlayDeployment(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	objs, err := kustomizeBuild(filepath.Join(repoRoot, "deploy", "overlays", name))
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(objs, func(u *unstructured.Unstructured) bool { return u.GetKind() == "Deployment" })
	if i < 0 {
		t.Fatalf("deploy/overlays/%s has no Deployment", name)
	}
	return objs[i]
}

// openshiftPriorityClass creates the PriorityClass OpenShift ships for
// important pods outside the platform, which the bundle's pods name (the
// API server refuses a pod naming a class that does not exist).
func openshiftPriorityClass(t *testing.T) {
	t.Helper()
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "openshift-user-critical"}, Value: 1000000000,
		Description: "Used for important pods outside the platform."}
	_, err := env.kube.CS.SchedulingV1().PriorityClasses().Create(t.Context(), pc, metav1.CreateOptions{})
	switch {
	case apierrors.IsAlreadyExists(err):
	case err != nil:
		t.Fatal(err)
	default:
		t.Cleanup(func() {
			_ = env.kube.CS.SchedulingV1().PriorityClasses().Delete(context.Background(), pc.Name, metav1.DeleteOptions{})
		})
	}
}

// replica is one pod of the Deployment: its Pod object, the exporter
// running as the pod would, and the EndpointSlice naming it.
type replica struct {
	pod   *corev1.Pod
	proc  *cluster.Proc
	slice *unstructured.Unstructured
}

// startReplica runs one pod of dep as the ReplicaSet and the
// EndpointSlice controller would have it: the Pod object from the
// template, the exporter as its container runs (runPod), and its endpoint,
// not ready until /readyz answers as the readiness probe asks. Every pod
// of a cluster listens on the container port at its own address; here
// they share loopback, so the Pod's container port is the one its process
// listens on, which is what Prometheus matches the endpoint's port with.
func startReplica(t *testing.T, dir string, dep *unstructured.Unstructured, name string, client *http.Client) *replica {
	t.Helper()
	ctx := t.Context()
	e, proc := runPod(t, dir, name, dep)
	addr := e.addr
	_, port, _ := net.SplitHostPort(addr)
	var d appsv1.Deployment
	if err := runtimeConvert(dep.Object, &d); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: d.Namespace, Labels: d.Spec.Template.Labels},
		Spec: *d.Spec.Template.Spec.DeepCopy()}
	p, _ := strconv.Atoi(port)
	pod.Spec.Containers[0].Ports[0].ContainerPort = int32(p)
	pod, err := env.kube.CS.CoreV1().Pods(d.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("Pod %s from the Deployment's template: %v", name, err)
	}
	r := &replica{pod: pod, proc: proc, slice: endpointSlice(t, name, name+"."+podDomain, addr, pod, false)}
	t.Cleanup(func() { r.remove(context.Background()) })
	if err := env.kube.Create(ctx, r.slice); err != nil {
		t.Fatal(err)
	}
	if err := cluster.WaitHTTP(proc, client, "https://"+addr+"/readyz", "", time.Minute); err != nil {
		t.Fatal(err)
	}
	eps, _, _ := unstructured.NestedSlice(r.slice.Object, "endpoints")
	eps[0].(map[string]any)["conditions"] = map[string]any{"ready": true}
	_ = unstructured.SetNestedSlice(r.slice.Object, eps, "endpoints")
	if err := env.kube.Update(ctx, r.slice, false); err != nil {
		t.Fatal(err)
	}
	return r
}

// remove deletes the replica's endpoint and Pod, as the controllers do
// once the pod is gone.
func (r *replica) remove(ctx context.Context) {
	_ = env.kube.Remove(ctx, r.slice)
	zero := int64(0)
	_ = env.kube.CS.CoreV1().Pods(r.pod.Namespace).Delete(ctx, r.pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
}

// killReplica kills r as a lost node, an OOM kill or a drain's eviction
// would: Prometheus keeps scraping its endpoint and fails, which marks its
// series stale, until the endpoint goes with the pod. The ReplicaSet's
// new pod is the caller's (disruptionStack.join).
func killReplica(t *testing.T, promURL string, r *replica) {
	t.Helper()
	_ = r.proc.Cmd.Process.Kill()
	<-r.proc.Done()
	poll(t, time.Minute, "Prometheus does not see the killed replica down", func() string {
		return targetHealth(promURL, r.pod.Name, "down")
	})
	r.remove(t.Context())
}

// waitTargets waits until Prometheus scrapes every replica, each target
// named by its pod.
func waitTargets(t *testing.T, promURL string, rs []*replica) {
	t.Helper()
	poll(t, 90*time.Second, "Prometheus does not scrape every replica", func() string {
		var why []string
		for _, r := range rs {
			if s := targetHealth(promURL, r.pod.Name, "up"); s != "" {
				why = append(why, s)
			}
		}
		return strings.Join(why, "\n")
	})
}

// targetHealth says why the target of pod in the exporter's scrape pool is
// not in health, or "".
func targetHealth(promURL, pod, health string) string {
	pools, err := targets(promURL)
	if err != nil {
		return err.Error()
	}
	pool := "serviceMonitor/" + cluster.ExporterNamespace + "/ocl-exporter/0"
	for _, tg := range pools[pool] {
		if tg.Labels["pod"] == pod {
			if tg.Health != health {
				return fmt.Sprintf("%s: target of pod %s is %s (%s), want %s", pool, pod, tg.Health, tg.LastError, health)
			}
			return ""
		}
	}
	return fmt.Sprintf("%s: no target for pod %s", pool, pod)
}
