package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// Kube is the admin's access to the cluster, for any kind.
type Kube struct {
	CS     kubernetes.Interface
	Dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

// NewKube builds clients for cfg.
func NewKube(cfg *rest.Config) (*Kube, error) {
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
	return &Kube{CS: cs, Dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}, nil
}

// Resource is the client for u's kind, in u's namespace ("default" when a
// namespaced object names none, as kubectl does).
func (k *Kube) Resource(u *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
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
		return k.Dyn.Resource(m.Resource), nil
	}
	ns := u.GetNamespace()
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	return k.Dyn.Resource(m.Resource).Namespace(ns), nil
}

// Create creates u as a client would, then writes its status through the
// status subresource where the kind has one: a create drops the status of
// such kinds.
func (k *Kube) Create(ctx context.Context, u *unstructured.Unstructured) error {
	ri, err := k.Resource(u)
	if err != nil {
		return err
	}
	obj := Sanitize(u)
	created, err := ri.Create(ctx, obj, metav1.CreateOptions{FieldValidation: "Strict"})
	if err != nil {
		return err
	}
	return writeStatus(ctx, ri, created, obj, true)
}

// writeStatus writes want's status, if it has one, onto cur through the
// status subresource. withObject: the object was just written with that
// status, so a kind without the subresource has it already.
func writeStatus(ctx context.Context, ri dynamic.ResourceInterface, cur, want *unstructured.Unstructured, withObject bool) error {
	status, ok := want.Object["status"]
	if !ok || status == nil {
		return nil
	}
	cur.Object["status"] = status
	_, err := ri.UpdateStatus(ctx, cur, metav1.UpdateOptions{FieldValidation: "Strict"})
	if apierrors.IsNotFound(err) && withObject {
		return nil
	}
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	return nil
}

// Update replaces the existing object of u's kind and name with u, as a
// client that read it first would, then its status where the kind has a
// status subresource. With statusOnly the object itself is left alone:
// pods and Jobs refuse most changes to their spec.
func (k *Kube) Update(ctx context.Context, u *unstructured.Unstructured, statusOnly bool) error {
	ri, err := k.Resource(u)
	if err != nil {
		return err
	}
	cur, err := ri.Get(ctx, u.GetName(), metav1.GetOptions{})
	if err != nil {
		return err
	}
	obj := Sanitize(u)
	if !statusOnly {
		obj.SetResourceVersion(cur.GetResourceVersion())
		if u.GetKind() == "Job" { // the selector the API server generated is immutable
			for _, f := range [][]string{{"spec", "selector"}, {"spec", "template", "metadata", "labels"}} {
				if v, ok, _ := unstructured.NestedFieldCopy(cur.Object, f...); ok {
					_ = unstructured.SetNestedField(obj.Object, v, f...)
				}
			}
		}
		if cur, err = ri.Update(ctx, obj, metav1.UpdateOptions{FieldValidation: "Strict"}); err != nil {
			return err
		}
	}
	return writeStatus(ctx, ri, cur, obj, !statusOnly)
}

// Remove deletes u at once (no kubelet would confirm a graceful pod
// deletion) and waits until it is gone.
func (k *Kube) Remove(ctx context.Context, u *unstructured.Unstructured) error {
	ri, err := k.Resource(u)
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

// Sanitize drops what the API server assigns (identity, timestamps,
// finalizers no controller here would remove) and the Job fields its
// controller generates from the Job's new uid.
func Sanitize(in *unstructured.Unstructured) *unstructured.Unstructured {
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

// LoadDir reads every YAML or JSON file of path, a file or a directory
// tree, as the exporter's snapshot loader does.
func LoadDir(path string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !slices.Contains([]string{".yaml", ".yml", ".json"}, filepath.Ext(p)) {
			return err
		}
		objs, err := LoadFile(p)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, objs...)
		return nil
	})
	return out, err
}

// LoadFile reads a YAML or JSON file: single objects, lists and
// multi-document files, as the exporter's snapshot loader does.
func LoadFile(path string) ([]*unstructured.Unstructured, error) {
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
		if m == nil || m["apiVersion"] == snapshot.CaptureRecordAPIVersion {
			continue // a capture record is the exporter's, not the cluster's
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

// CRDFiles are the CRDs the exporter reads (snapshot.Resource.CRD), from
// the openshift/api module the exporter is built with.
func CRDFiles() []string {
	var out []string
	for _, r := range snapshot.Resources() {
		if r.CRD != "" {
			out = append(out, r.CRD)
		}
	}
	return out
}

// GVR is the resource of kind the exporter watches (snapshot.Resources()),
// for the harnesses that write such objects as the MCO does.
func GVR(kind string) schema.GroupVersionResource {
	for _, r := range snapshot.Resources() {
		if r.Kind == kind {
			return r.GVR
		}
	}
	panic("the exporter watches no kind " + kind)
}

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// OpenshiftAPIDir is the openshift/api module of the Go module at repoRoot.
func OpenshiftAPIDir(repoRoot string) (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/openshift/api")
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list -m github.com/openshift/api: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// InstallCRDs creates CRDFiles and waits until they are Established; it
// returns them by resource name, e.g. machineosbuilds.machineconfiguration.openshift.io.
func (k *Kube) InstallCRDs(ctx context.Context, repoRoot string) (map[string]*unstructured.Unstructured, error) {
	dir, err := OpenshiftAPIDir(repoRoot)
	if err != nil {
		return nil, err
	}
	crds := map[string]*unstructured.Unstructured{}
	for _, f := range CRDFiles() {
		objs, err := LoadFile(filepath.Join(dir, f))
		if err != nil {
			return nil, err
		}
		for _, crd := range objs {
			crds[crd.GetName()] = crd
			if err := k.CreateCRD(ctx, crd); err != nil {
				return nil, err
			}
		}
	}
	return crds, nil
}

// CreateCRD creates a CRD and waits until it is Established.
func (k *Kube) CreateCRD(ctx context.Context, crd *unstructured.Unstructured) error {
	if err := k.Create(ctx, crd); err != nil {
		return fmt.Errorf("CRD %s: %w", crd.GetName(), err)
	}
	return k.WaitEstablished(ctx, crd)
}

// Apply applies u server-side under strict field validation, as `kubectl
// apply --server-side` does (the way to install CRDs too large for the
// last-applied annotation); with dryRun the API server validates and
// admits u but stores nothing.
func (k *Kube) Apply(ctx context.Context, u *unstructured.Unstructured, dryRun bool) error {
	ri, err := k.Resource(u)
	if err != nil {
		return err
	}
	data, err := Sanitize(u).MarshalJSON()
	if err != nil {
		return err
	}
	force := true
	opts := metav1.PatchOptions{FieldManager: "ocl-exporter-e2e", Force: &force, FieldValidation: "Strict"}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	_, err = ri.Patch(ctx, u.GetName(), types.ApplyPatchType, data, opts)
	return err
}

// WaitEstablished waits until the API server serves a CRD.
func (k *Kube) WaitEstablished(ctx context.Context, crd *unstructured.Unstructured) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := k.Dyn.Resource(crdResource).Get(ctx, crd.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
}
