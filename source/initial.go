package source

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// The first list of a resource is read as it arrives, never whole: a list
// decoded in one piece holds every object untrimmed (managedFields, every
// annotation, whole messages) until the informer trims it, and that was
// the exporter's memory peak (2.3 times its steady memory at 10,000
// nodes). The API server streams it where it serves WatchList (on by
// default in Kubernetes 1.32 and from 1.34, k8s.io/apiserver
// pkg/features: OpenShift 4.19 and from 4.21): a watch that sends the
// current objects one by one and a bookmark after the last. Otherwise the
// list is read in pages of pageSize. Either way each object is trimmed
// (and events capped) as it is decoded.

// pageSize is the objects of one page when the API server cannot stream:
// what exists untrimmed at once.
const pageSize = 250

// streamTimeout bounds a stream: one that ends without its closing
// bookmark (a server that ignores sendInitialEvents) makes the source read
// pages from then on.
const streamTimeout = 5 * time.Minute

// streamer is a backend that reaches an API server, which may stream.
// Offline, a list costs nothing more than the snapshot already holds.
type streamer interface{ streams() bool }

func (c *Clients) streams() bool { return true }

// refusal is an API server's answer that it does not stream lists: 422
// when WatchList is off (Kubernetes before 1.32, and 1.33), an error
// event when it cannot (its etcd does not request watch progress: etcd
// 3.4), or a stream without its closing bookmark.
type refusal struct{ err error }

func (r refusal) Error() string { return r.err.Error() }
func (r refusal) Unwrap() error { return r.err }

// gather feeds add every object of w's first list, streamed when the
// backend can, else in pages, and returns the list's resourceVersion.
// Objects a failed stream fed are forgotten (reset) before the pages.
func (s *Source) gather(ctx context.Context, w *watched, ns string, o metav1.ListOptions, add func(runtime.Object) error, reset func()) (string, error) {
	if _, ok := s.backend.(streamer); ok && !s.paged.Load() {
		rv, err := s.stream(ctx, w, ns, o, add)
		if err == nil {
			return rv, nil
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		var r refusal
		if (errors.As(err, &r) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err)) && s.paged.CompareAndSwap(false, true) {
			s.logger.Info("the API server does not stream lists (WatchList): reading first lists in pages", "resource", w.Name, "reason", err)
		}
		// Any failure falls back to pages, as client-go's reflector does:
		// a list answers what a stream may not (a resource not found in
		// this version but served in an older one, olderlive.go).
		reset()
	}
	return s.pages(ctx, w, ns, o, add)
}

// stream reads the initial events of a watch-list (KEP-3157) up to the
// bookmark that ends them, and returns its resourceVersion.
func (s *Source) stream(ctx context.Context, w *watched, ns string, o metav1.ListOptions, add func(runtime.Object) error) (string, error) {
	yes, timeout := true, int64(streamTimeout/time.Second)
	rv := o.ResourceVersion
	if rv == "0" { // "any": a stream starts at the most recent state instead
		rv = ""
	}
	wi, err := s.backend.Watch(ctx, w.Resource, ns, metav1.ListOptions{
		LabelSelector: o.LabelSelector, FieldSelector: o.FieldSelector,
		ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		SendInitialEvents: &yes, AllowWatchBookmarks: true, TimeoutSeconds: &timeout,
	})
	if err != nil {
		return "", err
	}
	defer wi.Stop()
	for e := range wi.ResultChan() {
		switch e.Type {
		case watch.Added:
			if err := add(e.Object); err != nil {
				return "", err
			}
		case watch.Bookmark:
			m, err := meta.Accessor(e.Object)
			if err != nil {
				return "", fmt.Errorf("streaming %s: %w", w.Name, err)
			}
			if m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
				return m.GetResourceVersion(), nil
			}
		case watch.Error:
			return "", refusal{apierrors.FromObject(e.Object)}
		default:
			return "", fmt.Errorf("streaming %s: a %s event before the end of the initial events", w.Name, e.Type)
		}
	}
	return "", refusal{fmt.Errorf("streaming %s: the API server ended the stream before its initial-events-end bookmark", w.Name)}
}

// pages reads w's list in pages of pageSize at the most recent state, each
// item copied out of its page so that no page outlives its decoding.
func (s *Source) pages(ctx context.Context, w *watched, ns string, o metav1.ListOptions, add func(runtime.Object) error) (string, error) {
	// The watch cache answers resourceVersion "0" whole, whatever the
	// limit: only a read at the most recent state is paged.
	po := metav1.ListOptions{LabelSelector: o.LabelSelector, FieldSelector: o.FieldSelector, Limit: pageSize}
	for {
		page, err := s.backend.List(ctx, w.Resource, ns, po)
		if err != nil {
			return "", err
		}
		if err := meta.EachListItemWithAlloc(page, add); err != nil {
			return "", fmt.Errorf("listing %s: %w", w.Name, err)
		}
		lm, err := meta.ListAccessor(page)
		if err != nil {
			return "", fmt.Errorf("listing %s: %w", w.Name, err)
		}
		if lm.GetContinue() == "" {
			return lm.GetResourceVersion(), nil
		}
		po.Continue = lm.GetContinue()
	}
}
