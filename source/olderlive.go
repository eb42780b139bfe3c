package source

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	restwatch "k8s.io/client-go/rest/watch"

	"github.com/ocl-exporter/ocl_exporter/kubeapi"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
)

// A live OpenShift 4.16 or 4.17 cluster serves MachineOSConfigs and
// MachineOSBuilds only in v1alpha1, and 4.16 to 4.18 MachineConfigNodes:
// the v1 list answers 404. Such a resource is then listed and watched in
// the older version, decoded as unstructured objects (the scheme holds no
// v1alpha1 kind), and each object rewritten
// into v1 by the same upgrades a snapshot's objects go through, so the
// informers, the analysis and the metrics see v1 objects either way. No
// discovery call and no other permission: RBAC grants a resource in every
// version of its group.

// olderServed remembers, per resource, the older version the API server
// serves instead of the exporter's.
type olderServed struct {
	mu       sync.Mutex
	versions map[string]schema.GroupVersionResource
}

func (o *olderServed) get(r snapshot.Resource) (schema.GroupVersionResource, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	gvr, ok := o.versions[r.Name]
	return gvr, ok
}

func (o *olderServed) set(r snapshot.Resource, gvr schema.GroupVersionResource) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.versions == nil {
		o.versions = map[string]schema.GroupVersionResource{}
	}
	o.versions[r.Name] = gvr
}

func (o *olderServed) forget(r snapshot.Resource) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.versions, r.Name)
}

// listOlderIfNotServed lists r in its older version when the list of its
// own version failed as not served; it returns listErr otherwise.
func (c *Clients) listOlderIfNotServed(ctx context.Context, r snapshot.Resource, namespace string, o metav1.ListOptions, listErr error) (runtime.Object, error) {
	old, ok := snapshot.OlderVersion(r)
	if !ok || !apierrors.IsNotFound(listErr) {
		return nil, listErr
	}
	list, err := c.listOlder(ctx, r, old, namespace, o)
	if err != nil {
		return nil, errors.Join(listErr, err)
	}
	c.older.set(r, old)
	c.logger.Info("the API server serves this resource only in an older version: reading it there as the current one",
		"resource", r.Name, "version", old.Version, "as", r.GVR.Version)
	return list, nil
}

func (c *Clients) listOlder(ctx context.Context, r snapshot.Resource, old schema.GroupVersionResource, namespace string, o metav1.ListOptions) (runtime.Object, error) {
	body, err := c.olderRequest(r, old, namespace, &o).DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing %s in %s: %w", r.Name, old.Version, err)
	}
	var ul unstructured.UnstructuredList
	if err := ul.UnmarshalJSON(body); err != nil {
		return nil, fmt.Errorf("listing %s in %s: %w", r.Name, old.Version, err)
	}
	if want := old.GroupVersion().WithKind(r.Kind + "List"); ul.GroupVersionKind() != want {
		return nil, fmt.Errorf("listing %s in %s: the API server answered a %s of %s, not a %s of %s; nothing of it is read",
			r.Name, old.Version, ul.GetKind(), ul.GetAPIVersion(), want.Kind, want.GroupVersion())
	}
	items := make([]runtime.Object, 0, len(ul.Items))
	for i := range ul.Items {
		if obj, ok := c.upgradeLive(r, old, "list", &ul.Items[i]); ok {
			items = append(items, obj)
		}
	}
	list := r.NewList()
	if err := meta.SetList(list, items); err != nil {
		return nil, fmt.Errorf("listing %s: %w", r.Name, err)
	}
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", r.Name, err)
	}
	lm.SetResourceVersion(ul.GetResourceVersion())
	lm.SetContinue(ul.GetContinue())
	return list, nil
}

func (c *Clients) watchOlder(ctx context.Context, r snapshot.Resource, old schema.GroupVersionResource, namespace string, o metav1.ListOptions) (watch.Interface, error) {
	o.Watch = true
	body, err := c.olderRequest(r, old, namespace, &o).Stream(ctx)
	if err != nil {
		return nil, fmt.Errorf("watching %s in %s: %w", r.Name, old.Version, err)
	}
	// A frame is a metav1.WatchEvent, which has no kind of its own: it is
	// decoded as rest.Request.Watch does, by the scheme's JSON stream
	// serializer; only the object it carries is unstructured.
	info, _ := runtime.SerializerInfoForMediaType(kubeapi.Codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	stream := info.StreamSerializer
	frames := streaming.NewDecoder(stream.NewFrameReader(body), stream.Serializer)
	w := watch.NewStreamWatcher(restwatch.NewDecoder(frames, unstructured.UnstructuredJSONScheme),
		apierrors.NewClientErrorReporter(http.StatusInternalServerError, http.MethodGet, "ClientWatchDecoding"))
	return watch.Filter(w, func(e watch.Event) (watch.Event, bool) {
		u, isObject := e.Object.(*unstructured.Unstructured)
		switch {
		case !isObject || e.Type == watch.Error:
			return e, true
		case e.Type == watch.Bookmark:
			// A bookmark carries only a resourceVersion (and the
			// initial-events annotation): nothing to upgrade.
			obj := r.NewObject()
			m, _ := meta.Accessor(obj)
			m.SetResourceVersion(u.GetResourceVersion())
			m.SetAnnotations(u.GetAnnotations())
			e.Object = obj
			return e, true
		}
		obj, ok := c.upgradeLive(r, old, "watch", u)
		e.Object = obj
		return e, ok
	}), nil
}

// olderRequest is the GET of r in its older version, answered in JSON
// (custom resources have no protobuf), on the client of r's own group.
func (c *Clients) olderRequest(r snapshot.Resource, old schema.GroupVersionResource, namespace string, o *metav1.ListOptions) *rest.Request {
	return c.api.REST(r.GVR.GroupVersion()).Get().
		AbsPath("/apis", old.Group, old.Version).
		NamespaceIfScoped(namespace, namespace != "").
		Resource(old.Resource).
		SetHeader("Accept", "application/json").
		VersionedParams(o, kubeapi.ParameterCodec)
}

// upgradeLive rewrites an object of r's older version old, met in a list
// or a watch (where), into r's typed object; one whose fields do not map
// is left out, as a snapshot's is. So is one of another kind or version:
// the typed path's reflector refuses those, and an upgrade would read a
// MachineOSBuild as a MachineOSConfig without a pool.
func (c *Clients) upgradeLive(r snapshot.Resource, old schema.GroupVersionResource, where string, u *unstructured.Unstructured) (runtime.Object, bool) {
	if want := old.GroupVersion().WithKind(r.Kind); u.GroupVersionKind() != want {
		c.logger.Warn("the API server sent an object of another kind or version: left out",
			"resource", r.Name, "in", where, "want", want.Kind+" "+want.GroupVersion().String(),
			"got", u.GetKind()+" "+u.GetAPIVersion(), "name", u.GetName())
		return nil, false
	}
	if err := snapshot.Upgrade(u); err != nil {
		c.logger.Debug("skipping an older object whose fields do not map onto the current version",
			"resource", r.Name, "name", u.GetName(), "reason", err)
		return nil, false
	}
	u.SetAPIVersion(r.GVR.GroupVersion().String())
	obj := r.NewObject()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
		c.logger.Debug("skipping an older object that does not match the current schema", "resource", r.Name, "name", u.GetName(), "reason", err)
		return nil, false
	}
	return obj, true
}
