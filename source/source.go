// Package source keeps one read-only, continuously updated view of the OCL
// objects: one client-go informer per row of snapshot.Resources(), fed
// live through the API clients (kubeapi, the kubeconfig and its
// credentials, the older versions 4.16 and 4.17 serve), or offline from a
// snapshot held in memory (snapshot.Memory), so that everything downstream
// runs the same code either way. It makes no API call when the view is
// read. It lists one resource at a time, trims what the caches keep, keeps
// only the newest events, and says of each resource whether it could be
// read and why not. Package snapshot is the offline side: it reads and
// writes snapshots and needs no client-go.
package source

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/ocl-exporter/ocl_exporter/analysis"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
)

// Source runs one informer per watched resource.
type Source struct {
	namespace string
	logger    *slog.Logger
	backend   Backend
	watched   []*watched
	metrics   *metrics
	// listing holds a token while a list is in flight.
	listing chan struct{}
	// generation counts changes to the view: object events and changes of
	// a resource's availability. Readers re-render only when it moves.
	generation atomic.Uint64
	outage     outage
	// paged is set once the API server refused to stream a list: first
	// lists are read in pages from then on.
	paged atomic.Bool
}

type watched struct {
	snapshot.Resource
	informer cache.SharedIndexInformer
	status   status
	// held is what a capped resource's informer holds
	// (snapshot.Resource.Max), from its last list on.
	held atomic.Pointer[held]
}

// New prepares informers for every resource in snapshot.Resources(),
// listed and watched through backend. Nothing is listed until Run. Its
// list and watch counters go to reg.
func New(backend Backend, namespace string, logger *slog.Logger, reg prometheus.Registerer) *Source {
	s := &Source{namespace: namespace, logger: logger, backend: backend, metrics: newMetrics(reg), listing: make(chan struct{}, 1)}
	for _, r := range snapshot.Resources() {
		w := &watched{Resource: r}
		w.informer = cache.NewSharedIndexInformerWithOptions(s.listWatch(w), r.NewObject(), cache.SharedIndexInformerOptions{
			ObjectDescription: r.Name,
		})
		if err := w.informer.SetTransform(transformFor(r)); err != nil {
			panic(err) // only fails once the informer runs
		}
		if _, err := w.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { s.generation.Add(1) },
			DeleteFunc: func(any) { s.generation.Add(1) },
			UpdateFunc: func(old, cur any) {
				if meaningful(old, cur) {
					s.generation.Add(1)
				}
			},
		}); err != nil {
			panic(err) // only fails once the informer has stopped
		}
		s.watched = append(s.watched, w)
	}
	return s
}

// Run starts the informers and returns at once. They retry with backoff by
// themselves until ctx ends, so a resource that is missing or forbidden now
// is picked up when it appears.
func (s *Source) Run(ctx context.Context) {
	for _, w := range s.watched {
		go w.informer.RunWithContext(ctx)
	}
}

// listWatch lists and watches one resource, counting results and keeping
// its availability, so the rest of the exporter can tell "no objects" from
// "cannot see the objects".
func (s *Source) listWatch(w *watched) cache.ListerWatcher {
	ns := w.WatchNamespace(s.namespace)
	narrow := func(o metav1.ListOptions) metav1.ListOptions {
		o.LabelSelector, o.FieldSelector = w.LabelSelector, w.FieldSelector
		return o
	}
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			obj, err := s.list(ctx, w, ns, narrow(o))
			s.metrics.count(s.metrics.lists, w.Name, err)
			s.observe(w, s.notCaptured(w, err))
			return obj, err
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			wi, err := s.backend.Watch(ctx, w.Resource, ns, narrow(o))
			s.metrics.count(s.metrics.watches, w.Name, err)
			if h := w.held.Load(); err == nil && h != nil {
				wi = newCappedWatch(wi, h, w.Resource, s.metrics.dropped(w.Name))
			}
			// After an outage the reflector resumes its watch from the last
			// resourceVersion without listing again: a watch that starts is
			// what tells the resource is readable again.
			s.observe(w, s.notCaptured(w, err))
			return wi, err
		},
	}
}

// capturer is an offline backend that knows what its snapshot did not
// capture.
type capturer interface{ NotCaptured(snapshot.Resource) error }

// CapturedAt is when the snapshot the source reads was taken; zero live,
// or when the snapshot does not say.
func (s *Source) CapturedAt() time.Time {
	if c, ok := s.backend.(interface{ CapturedAt() time.Time }); ok {
		return c.CapturedAt()
	}
	return time.Time{}
}

// notCaptured turns a successful list or watch of a resource the snapshot
// did not capture into its snapshot.NotCapturedError: the informer syncs
// empty, without retrying, and the status says "not captured", not
// "none".
func (s *Source) notCaptured(w *watched, err error) error {
	if c, ok := s.backend.(capturer); ok && err == nil {
		return c.NotCaptured(w.Resource)
	}
	return err
}

// listWait bounds how long a list waits for another to finish.
const listWait = 10 * time.Second

// list reads one resource's first list (initial.go), trimming each object
// as it arrives and keeping at most snapshot.Resource.Max of a capped one, one list
// at a time: all informers start together, and one list's objects in
// flight at a time keep the start-up peak low. The informer trims again;
// trimming is idempotent. A list that waited listWait for its turn goes
// ahead anyway, so a list the API server is slow to answer cannot hold up
// the others.
func (s *Source) list(ctx context.Context, w *watched, ns string, o metav1.ListOptions) (runtime.Object, error) {
	wait := time.NewTimer(listWait)
	defer wait.Stop()
	select {
	case s.listing <- struct{}{}:
		defer func() { <-s.listing }()
	case <-wait.C:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	trim := transformFor(w.Resource)
	var items []runtime.Object
	var h *held
	offered := 0
	reset := func() {
		items, offered = nil, 0
		if w.Max > 0 {
			h = newHeld(w.Max)
		}
	}
	reset()
	rv, err := s.gather(ctx, w, ns, o, func(obj runtime.Object) error {
		if _, err := trim(obj); err != nil {
			return err
		}
		offered++
		if h == nil {
			items = append(items, obj)
		} else {
			h.admit(obj)
		}
		return nil
	}, reset)
	if err != nil {
		return nil, err
	}
	if h != nil {
		items = h.objects()
		s.metrics.drop(w.Name, offered-len(items))
	}
	list := w.NewList()
	if err := meta.SetList(list, items); err != nil {
		return nil, fmt.Errorf("listing %s: %w", w.Name, err)
	}
	list.(metav1.ListInterface).SetResourceVersion(rv)
	w.held.Store(h)
	return list, nil
}

// Generation moves whenever the view or a resource's availability changes.
func (s *Source) Generation() uint64 { return s.generation.Load() }

// MetricsGeneration moves after every change of the source's own metrics
// (ocl_exporter_list_total, _watch_total, _events_dropped_total).
func (s *Source) MetricsGeneration() uint64 { return s.metrics.changes.Load() }

// meaningful reports whether an update matters. Nodes change their
// resourceVersion with every status heartbeat although the metadata the
// exporter keeps is the same: such updates are not changes.
func meaningful(old, cur any) bool {
	o, ok := old.(*metav1.PartialObjectMetadata)
	c, ok2 := cur.(*metav1.PartialObjectMetadata)
	if !ok || !ok2 {
		return true
	}
	a, b := o.ObjectMeta, c.ObjectMeta
	a.ResourceVersion, b.ResourceVersion = "", ""
	return !equality.Semantic.DeepEqual(a, b)
}

// observe records the outcome of a list or watch and logs state changes
// once, not on every retry. A failure whose cause another resource already
// logged (the API server gone away fails them all alike) is logged at
// debug level: one line per cause, not one per resource.
func (s *Source) observe(w *watched, err error) {
	changed, st := w.status.set(err, w.Name, w.WatchNamespace(s.namespace))
	var f failure
	if st.Problem == snapshot.ProblemUnreachable {
		f.cause, f.hint = cause(err)
	}
	newCause := s.outage.set(w.Name, f)
	if st.Available {
		s.outage.readable()
	}
	if !changed && !newCause {
		return
	}
	if changed {
		s.generation.Add(1)
	}
	switch {
	case st.Available:
		s.logger.Info("resource available", "resource", w.Name)
		return
	case st.Problem == snapshot.ProblemNotCaptured:
		s.logger.Warn("resource not captured by the snapshot: its objects are unknown, not absent", "resource", w.Name, "reason", st.Reason)
		return
	case st.Problem == snapshot.ProblemUnreachable && !newCause:
		s.logger.Debug("resource unavailable, as others; retrying in the background", "resource", w.Name, "cause", f.cause)
		return
	}
	attrs := []any{"resource", w.Name, "reason", st.Reason}
	if st.Problem != snapshot.ProblemUnreachable { // its reason quotes the error already
		attrs = append(attrs, "err", err)
	}
	s.logger.Warn("resource unavailable; retrying in the background", attrs...)
}

// Status reports each watched resource.
func (s *Source) Status() []snapshot.ResourceStatus {
	out := make([]snapshot.ResourceStatus, 0, len(s.watched))
	for _, w := range s.watched {
		st := w.status.get()
		st.Resource = w.Name
		st.Synced = w.informer.HasSynced()
		out = append(out, st)
	}
	return out
}

// Ready is true once every resource has synced or has been reported
// unavailable (not served, or forbidden). It does not go back to false when
// the API server goes away later: the exporter keeps serving what it knows,
// and ocl_exporter_resource_available says what is stale.
func (s *Source) Ready() bool {
	for _, st := range s.Status() {
		if !st.Synced && !st.Settled() {
			return false
		}
	}
	return true
}

// WaitReady blocks until Ready (nil), until ctx ends (its error), or until
// the first list of every resource has failed in a way waiting does not
// fix (an *UnreachableError naming each cause): a cluster that refuses
// the connection or the credentials fails at once, not at the timeout.
func (s *Source) WaitReady(ctx context.Context) error {
	names := make([]string, len(s.watched))
	for i, w := range s.watched {
		names[i] = w.Name
	}
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for !s.Ready() {
		if err := s.outage.unreachable(names); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// Pending says which resources are neither synced nor settled, grouped
// by the cause of their last failure: what WaitReady still waits for.
func (s *Source) Pending() *PendingError {
	var names []string
	for _, st := range s.Status() {
		if !st.Synced && !st.Settled() {
			names = append(names, st.Resource)
		}
	}
	return s.outage.pending(names)
}

// Cluster returns the current view. It only reads the informer caches.
func (s *Source) Cluster(now time.Time) *analysis.Cluster {
	c := &analysis.Cluster{Namespace: s.namespace, Now: now}
	for _, w := range s.watched {
		w.Store(c, w.informer.GetStore().List())
		// A kind the view may not list is unknown too, never empty: a
		// human with cluster-reader cannot list Secrets.
		if p := w.status.get().Problem; w.Part == "" && (p == snapshot.ProblemNotCaptured || p == snapshot.ProblemForbidden) {
			if c.NotCaptured == nil {
				c.NotCaptured = map[string]bool{}
			}
			c.NotCaptured[w.Kind] = true
		}
	}
	return c
}

// status is the last known outcome of listing one resource.
type status struct {
	mu sync.Mutex
	st snapshot.ResourceStatus
}

func (s *status) get() snapshot.ResourceStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st
}

func (s *status) set(err error, name, namespace string) (changed bool, st snapshot.ResourceStatus) {
	next := snapshot.ResourceStatus{Available: err == nil, Seen: true}
	if err != nil {
		next.Problem, next.Reason = explain(err, name, namespace)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	changed = !s.st.Seen || s.st.Available != next.Available || s.st.Problem != next.Problem
	s.st = next
	return changed, next
}
