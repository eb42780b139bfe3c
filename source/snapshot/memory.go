package snapshot

import (
	"context"
	"fmt"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// memoryVersion is the resourceVersion of every list and bookmark: a
// snapshot never changes.
const memoryVersion = "1"

// Memory is the offline source.Backend: a snapshot's objects, served to
// the informers as the API server serves the exporter's requests (per
// resource and namespace, label and field selectors applied, a fresh copy
// on every list) with a watch that never sends a change, since a snapshot
// has none.
type Memory struct {
	// byKind: two watches of one resource (Resource.Part) list
	// the same objects through their own namespace and selectors.
	byKind map[schema.GroupKind][]runtime.Object
	// notCaptured holds, by resource name, the error for each resource a
	// snapshot did not capture: listing it fails as an unreadable resource
	// does live, so that nothing reads its absence as "none".
	notCaptured map[string]error
	// capturedAt is when the snapshot was taken, zero when it does not
	// say (its capture records' time).
	capturedAt time.Time
}

// CapturedAt is when the snapshot was taken, zero when it does not say.
func (m *Memory) CapturedAt() time.Time { return m.capturedAt }

// NewMemory holds objs, each with its apiVersion and kind set, as Load
// returns them. An object no watched resource holds is an error naming it.
func NewMemory(objs []runtime.Object) (*Memory, error) {
	resources := map[schema.GroupKind]Resource{}
	for _, r := range Resources() {
		if r.Part == "" {
			resources[schema.GroupKind{Group: r.GVR.Group, Kind: r.Kind}] = r
		}
	}
	m := &Memory{byKind: map[schema.GroupKind][]runtime.Object{}}
	for _, o := range objs {
		gk := o.GetObjectKind().GroupVersionKind().GroupKind()
		r, ok := resources[gk]
		if !ok {
			return nil, fmt.Errorf("%s %q: no watched resource holds this kind; set its apiVersion and kind to one of snapshot.Resources()", gk, name(o))
		}
		if got, want := reflect.TypeOf(o), reflect.TypeOf(r.newObject()); got != want {
			return nil, fmt.Errorf("%s %q is a %v, but %s are read as %v", gk, name(o), got, r.Name, want)
		}
		m.byKind[gk] = append(m.byKind[gk], o)
	}
	return m, nil
}

// NotCaptured returns a *NotCapturedError when the snapshot did not
// capture r. Its List and Watch still succeed, empty, so the informer
// syncs; the Source reports r as not captured rather than empty.
func (m *Memory) NotCaptured(r Resource) error { return m.notCaptured[r.Name] }

func name(o runtime.Object) string {
	if m, ok := o.(metav1.Object); ok {
		return m.GetName()
	}
	return ""
}

// List returns copies of r's objects in namespace ("" for all) that match
// o's selectors.
func (m *Memory) List(_ context.Context, r Resource, namespace string, o metav1.ListOptions) (runtime.Object, error) {
	items, err := m.matching(r, namespace, o)
	if err != nil {
		return nil, err
	}
	list := r.newList()
	if err := meta.SetList(list, items); err != nil {
		return nil, fmt.Errorf("listing %s: %w", r.Name, err)
	}
	list.(metav1.ListInterface).SetResourceVersion(memoryVersion)
	return list, nil
}

// Watch never sends a change. Asked for the initial events (the
// WatchListClient feature of client-go, on by default from v0.35), it sends
// the objects List would return and the bookmark that ends them, as the API
// server does, so the informers sync either way.
func (m *Memory) Watch(_ context.Context, r Resource, namespace string, o metav1.ListOptions) (watch.Interface, error) {
	var events []watch.Event
	if o.SendInitialEvents != nil && *o.SendInitialEvents {
		items, err := m.matching(r, namespace, o)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			events = append(events, watch.Event{Type: watch.Added, Object: it})
		}
		end := r.newObject()
		em := end.(metav1.Object)
		em.SetResourceVersion(memoryVersion)
		em.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
		events = append(events, watch.Event{Type: watch.Bookmark, Object: end})
	}
	ch := make(chan watch.Event, len(events))
	for _, e := range events {
		ch <- e
	}
	return watch.NewProxyWatcher(ch), nil
}

func (m *Memory) matching(r Resource, namespace string, o metav1.ListOptions) ([]runtime.Object, error) {
	ls, err := labels.Parse(o.LabelSelector)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("listing %s: label selector %q: %v", r.Name, o.LabelSelector, err))
	}
	fs, err := fields.ParseSelector(o.FieldSelector)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("listing %s: field selector %q: %v", r.Name, o.FieldSelector, err))
	}
	known := selectableFields(r.newObject())
	for _, req := range fs.Requirements() {
		if _, ok := known[req.Field]; !ok {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("listing %s: field label not supported: %s", r.Name, req.Field))
		}
	}
	var out []runtime.Object
	for _, obj := range m.byKind[schema.GroupKind{Group: r.GVR.Group, Kind: r.Kind}] {
		om := obj.(metav1.Object)
		if namespace != "" && om.GetNamespace() != namespace {
			continue
		}
		if ls.Matches(labels.Set(om.GetLabels())) && fs.Matches(selectableFields(obj)) {
			out = append(out, obj.DeepCopyObject())
		}
	}
	return out, nil
}

// selectableFields are the fields of o a field selector may name: those the
// API server offers for every kind, and for Events the ones the exporter
// selects on (k8s.io/kubernetes pkg/registry/core/event ToSelectableFields,
// which offers source, reportingComponent and the rest of involvedObject
// too).
func selectableFields(o runtime.Object) fields.Set {
	om := o.(metav1.Object)
	f := fields.Set{"metadata.name": om.GetName(), "metadata.namespace": om.GetNamespace()}
	if e, ok := o.(*corev1.Event); ok {
		f["type"], f["reason"] = e.Type, e.Reason
		f["involvedObject.apiVersion"], f["involvedObject.kind"] = e.InvolvedObject.APIVersion, e.InvolvedObject.Kind
		f["involvedObject.name"] = e.InvolvedObject.Name
	}
	return f
}
