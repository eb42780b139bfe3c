package source

import (
	"container/heap"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/ocl-exporter/ocl_exporter/analysis"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
)

// held is what one capped watch holds: at most max objects, the newest by
// lastSeen, kept as the informer's store keeps them. The first list fills
// it and the watch that follows keeps it current, evicting the oldest.
type held struct {
	mu    sync.Mutex
	max   int
	byKey map[string]*heldObject
	order oldestFirst
}

type heldObject struct {
	key   string
	at    time.Time
	obj   runtime.Object
	index int
}

func newHeld(limit int) *held { return &held{max: limit, byKey: map[string]*heldObject{}} }

// admit records an added or changed object. It reports whether the
// object is held and which held object, if any, it displaced; an object
// older than every held one when the set is full is not held.
func (h *held) admit(obj runtime.Object) (keep bool, evicted runtime.Object) {
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return true, nil // the store will refuse it as well
	}
	at := lastSeen(obj)
	h.mu.Lock()
	defer h.mu.Unlock()
	if o, ok := h.byKey[key]; ok {
		o.at, o.obj = at, obj
		heap.Fix(&h.order, o.index)
		return true, nil
	}
	if len(h.byKey) < h.max {
		o := &heldObject{key: key, at: at, obj: obj}
		h.byKey[key] = o
		heap.Push(&h.order, o)
		return true, nil
	}
	oldest := h.order[0]
	if !at.After(oldest.at) {
		return false, nil
	}
	delete(h.byKey, oldest.key)
	evicted = oldest.obj
	oldest.key, oldest.at, oldest.obj = key, at, obj
	h.byKey[key] = oldest
	heap.Fix(&h.order, 0)
	return true, evicted
}

// forget removes a deleted object.
func (h *held) forget(obj runtime.Object) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if o, ok := h.byKey[key]; ok {
		delete(h.byKey, key)
		heap.Remove(&h.order, o.index)
	}
}

// objects are the held objects, in no order.
func (h *held) objects() []runtime.Object {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]runtime.Object, 0, len(h.order))
	for _, o := range h.order {
		out = append(out, o.obj)
	}
	return out
}

// lastSeen orders held objects: an event by when it last happened,
// anything else by its creation.
func lastSeen(obj runtime.Object) time.Time {
	if e, ok := obj.(*corev1.Event); ok {
		return analysis.EventLastSeen(e)
	}
	if m, err := meta.Accessor(obj); err == nil {
		return m.GetCreationTimestamp().Time
	}
	return time.Time{}
}

// oldestFirst is a min-heap of held objects by lastSeen.
type oldestFirst []*heldObject

func (q oldestFirst) Len() int           { return len(q) }
func (q oldestFirst) Less(i, j int) bool { return q[i].at.Before(q[j].at) }
func (q oldestFirst) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}
func (q *oldestFirst) Push(x any) {
	o := x.(*heldObject)
	o.index = len(*q)
	*q = append(*q, o)
}
func (q *oldestFirst) Pop() any {
	old := *q
	o := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	return o
}

// cappedWatch passes a watch's events on to the informer through h: an
// object h does not hold becomes a bookmark (its resourceVersion still
// counts), and one it evicts is deleted from the store first. dropped
// counts both.
type cappedWatch struct {
	inner   watch.Interface
	out     chan watch.Event
	stop    chan struct{}
	once    sync.Once
	h       *held
	r       snapshot.Resource
	dropped func()
}

func newCappedWatch(inner watch.Interface, h *held, r snapshot.Resource, dropped func()) watch.Interface {
	c := &cappedWatch{inner: inner, out: make(chan watch.Event), stop: make(chan struct{}), h: h, r: r, dropped: dropped}
	go c.run()
	return c
}

func (c *cappedWatch) ResultChan() <-chan watch.Event { return c.out }

func (c *cappedWatch) Stop() {
	c.once.Do(func() {
		close(c.stop)
		c.inner.Stop()
	})
}

func (c *cappedWatch) run() {
	defer close(c.out)
	for e := range c.inner.ResultChan() {
		for _, o := range c.apply(e) {
			select {
			case c.out <- o:
			case <-c.stop:
				return
			}
		}
	}
}

// apply is what the informer receives for e.
func (c *cappedWatch) apply(e watch.Event) []watch.Event {
	switch e.Type {
	case watch.Added, watch.Modified:
	case watch.Deleted:
		c.h.forget(e.Object)
		return []watch.Event{e}
	default:
		return []watch.Event{e}
	}
	keep, evicted := c.h.admit(e.Object)
	if !keep {
		c.dropped()
		return []watch.Event{{Type: watch.Bookmark, Object: c.stub(nil, e.Object)}}
	}
	if evicted == nil {
		return []watch.Event{e}
	}
	c.dropped()
	return []watch.Event{{Type: watch.Deleted, Object: c.stub(evicted, e.Object)}, e}
}

// stub is a new object with the name of named (none for nil) and the
// resourceVersion of at: the store deletes by name, and the informer's
// resourceVersion must never go back.
func (c *cappedWatch) stub(named, at runtime.Object) runtime.Object {
	obj := c.r.NewObject()
	m, _ := meta.Accessor(obj)
	if n, err := meta.Accessor(named); named != nil && err == nil {
		m.SetNamespace(n.GetNamespace())
		m.SetName(n.GetName())
	}
	if a, err := meta.Accessor(at); err == nil {
		m.SetResourceVersion(a.GetResourceVersion())
	}
	return obj
}
