//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// kube is the admin's access to the cluster, for any kind.
type kube struct {
	cs     kubernetes.Interface
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

func newKube(cfg *rest.Config) (*kube, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &kube{cs: cs, dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}, nil
}

// resource is the client for u's kind, in u's namespace ("default" when a
// namespaced object names none, as kubectl does).
func (k *kube) resource(u *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := u.GroupVersionKind()
	m, err := k.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		k.mapper.Reset() // a CRD installed since the last discovery
		m, err = k.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, err
	}
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		return k.dyn.Resource(m.Resource), nil
	}
	ns := u.GetNamespace()
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	return k.dyn.Resource(m.Resource).Namespace(ns), nil
}

// create creates u as a client would, then writes its status through the
// status subresource where the kind has one: a create drops the status of
// such kinds.
func (k *kube) create(ctx context.Context, u *unstructured.Unstructured) error {
	ri, err := k.resource(u)
	if err != nil {
		return err
	}
	obj := sanitize(u)
	created, err := ri.Create(ctx, obj, metav1.CreateOptions{FieldValidation: "Strict"})
	if err != nil {
		return err
	}
	status, ok := obj.Object["status"]
	if !ok || status == nil {
		return nil
	}
	created.Object["status"] = status
	_, err = ri.UpdateStatus(ctx, created, metav1.UpdateOptions{FieldValidation: "Strict"})
	if apierrors.IsNotFound(err) { // no status subresource: create kept it
		return nil
	}
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	return nil
}

// remove deletes u at once (no kubelet would confirm a graceful pod
// deletion) and waits until it is gone.
func (k *kube) remove(ctx context.Context, u *unstructured.Unstructured) error {
	ri, err := k.resource(u)
	if err != nil {
		return err
	}
	zero, background := int64(0), metav1.DeletePropagationBackground
	err = ri.Delete(ctx, u.GetName(), metav1.DeleteOptions{GracePeriodSeconds: &zero, PropagationPolicy: &background})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := ri.Get(ctx, u.GetName(), metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// sanitize drops what the API server assigns (identity, timestamps,
// finalizers no controller here would remove) and the Job fields its
// controller generates from the Job's new uid.
func sanitize(in *unstructured.Unstructured) *unstructured.Unstructured {
	u := in.DeepCopy()
	for _, f := range []string{"resourceVersion", "uid", "creationTimestamp", "managedFields", "generation", "selfLink", "finalizers", "deletionTimestamp", "deletionGracePeriodSeconds"} {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	if u.GetKind() == "Job" && u.GetAPIVersion() == "batch/v1" {
		unstructured.RemoveNestedField(u.Object, "spec", "selector")
		unstructured.RemoveNestedField(u.Object, "spec", "manualSelector")
		for _, l := range []string{"controller-uid", "batch.kubernetes.io/controller-uid"} {
			unstructured.RemoveNestedField(u.Object, "spec", "template", "metadata", "labels", l)
		}
	}
	return u
}

// loadDir reads every YAML or JSON file under dir: single objects, lists
// and multi-document files, as the exporter's snapshot loader does.
func loadDir(dir string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !slices.Contains([]string{".yaml", ".yml", ".json"}, filepath.Ext(path)) {
			return err
		}
		objs, err := loadFile(path)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, objs...)
		return nil
	})
	return out, err
}

func loadFile(path string) ([]*unstructured.Unstructured, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		if m == nil {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if !u.IsList() {
			out = append(out, u)
			continue
		}
		if err := u.EachListItem(func(o runtime.Object) error {
			out = append(out, o.(*unstructured.Unstructured))
			return nil
		}); err != nil {
			return nil, err
		}
	}
}

// createOrder creates prerequisites first: a MachineOSConfig's pool before
// it, a build's MachineOSConfig before the build, Jobs before their pods.
var createOrder = []string{
	"Namespace", "Secret", "ConfigMap", "Node", "MachineConfig", "MachineConfigPool", "MachineOSConfig",
	"MachineOSBuild", "Job", "Pod", "Deployment", "MachineConfigNode", "ClusterOperator", "Event",
}

// orderedByCreation are the kinds whose creation order the exporter reads
// (the newest build of a MachineOSConfig, the newest pod of a Job):
// objects of these kinds are created in their recorded order, in distinct
// seconds when their recorded times differ.
var orderedByCreation = []string{"MachineOSBuild", "Pod"}

func kindRank(kind string) int {
	if i := slices.Index(createOrder, kind); i >= 0 {
		return i
	}
	return len(createOrder)
}

// sortForCreate orders objects by kind, then by recorded creation time.
func sortForCreate(objs []*unstructured.Unstructured) {
	slices.SortStableFunc(objs, func(a, b *unstructured.Unstructured) int {
		if d := kindRank(a.GetKind()) - kindRank(b.GetKind()); d != 0 {
			return d
		}
		ta, tb := a.GetCreationTimestamp(), b.GetCreationTimestamp()
		if !ta.Equal(&tb) {
			if ta.Before(&tb) {
				return -1
			}
			return 1
		}
		return strings.Compare(a.GetName(), b.GetName())
	})
}

// applyAll creates objs in dependency and creation order. The API server
// stamps creationTimestamp to the second, so before an object of an
// ordered kind recorded later than the previous one it waits for the next
// second.
func (k *kube) applyAll(ctx context.Context, objs []*unstructured.Unstructured) error {
	objs = slices.Clone(objs)
	sortForCreate(objs)
	var prev *unstructured.Unstructured
	var prevSecond int64
	for _, u := range objs {
		if prev != nil && prev.GetKind() == u.GetKind() && slices.Contains(orderedByCreation, u.GetKind()) {
			tp, tu := prev.GetCreationTimestamp(), u.GetCreationTimestamp()
			if tp.Before(&tu) {
				for time.Now().Unix() == prevSecond {
					time.Sleep(20 * time.Millisecond)
				}
			}
		}
		if err := k.create(ctx, u); err != nil {
			return fmt.Errorf("create %s %s: %w", u.GetKind(), objectName(u), err)
		}
		prev, prevSecond = u, time.Now().Unix()
	}
	return nil
}

// removeAll deletes objs, dependents first.
func (k *kube) removeAll(ctx context.Context, objs []*unstructured.Unstructured) error {
	objs = slices.Clone(objs)
	sortForCreate(objs)
	slices.Reverse(objs)
	for _, u := range objs {
		if err := k.remove(ctx, u); err != nil {
			return fmt.Errorf("delete %s %s: %w", u.GetKind(), objectName(u), err)
		}
	}
	return nil
}

func objectName(u *unstructured.Unstructured) string {
	if u.GetNamespace() != "" {
		return u.GetNamespace() + "/" + u.GetName()
	}
	return u.GetName()
}
