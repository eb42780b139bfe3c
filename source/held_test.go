package source

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/ocl-exporter/ocl_exporter/internal/wait"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
)

var stormStart = time.Date(2025, 10, 1, 0, 0, 0, 0, time.UTC)

// stormEvent is a Warning about the build Job, last seen i seconds into
// the storm, as the Job controller posts it.
func stormEvent(i int) *corev1.Event {
	return &corev1.Event{
		TypeMeta:       metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
		ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("build-worker.%06d", i), Namespace: snapshot.DefaultNamespace, ResourceVersion: strconv.Itoa(100 + i)},
		InvolvedObject: corev1.ObjectReference{APIVersion: "batch/v1", Kind: "Job", Name: "build-worker"},
		Type:           corev1.EventTypeWarning, Reason: "FailedCreate", Message: "pods \"build-worker-x\" is forbidden: exceeded quota",
		LastTimestamp: metav1.NewTime(stormStart.Add(time.Duration(i) * time.Second)),
	}
}

// heldNames are the names of the events the source holds of the MCO
// namespace.
func heldNames(s *Source) []string {
	var out []string
	for _, e := range s.Cluster(time.Now()).Events {
		out = append(out, e.Name)
	}
	slices.Sort(out)
	return out
}

// TestEventsAreCappedNewestFirst: of an event storm a watch keeps the
// newest MaxEvents, from the first list and then from its watch, and
// ocl_exporter_events_dropped_total counts every event it did not keep.
func TestEventsAreCappedNewestFirst(t *testing.T) {
	const storm = snapshot.MaxEvents + 500
	var objs []runtime.Object
	for i := range storm {
		objs = append(objs, stormEvent(i))
	}
	mem, err := snapshot.NewMemory(objs)
	if err != nil {
		t.Fatal(err)
	}
	later := watch.NewFake()
	reg := prometheus.NewRegistry()
	s := start(t, faulty{Backend: mem, watch: func(r snapshot.Resource) (watch.Interface, error) {
		if r.Name == "events" {
			return later, nil
		}
		return nil, nil
	}}, reg)
	waitReady(t, s)

	var want []string
	for i := storm - snapshot.MaxEvents; i < storm; i++ {
		want = append(want, stormEvent(i).Name)
	}
	if got := heldNames(s); !slices.Equal(got, want) {
		t.Fatalf("after the first list %d events held, from %s: want the newest %d, from %s", len(got), got[0], len(want), want[0])
	}
	dropped := s.metrics.capped.WithLabelValues("events")
	if n := testutil.ToFloat64(dropped); n != storm-snapshot.MaxEvents {
		t.Errorf("ocl_exporter_events_dropped_total after the first list = %v, want %d", n, storm-snapshot.MaxEvents)
	}

	// The watch: an event older than every held one is not kept, a newer
	// one takes the oldest's place. Events arrive in order, so once the
	// newest is held the older one has been turned away.
	later.Add(stormEvent(-1))
	later.Add(stormEvent(storm))
	want = append(want[1:], stormEvent(storm).Name)
	wait.For(t, 30*time.Second, "the newest event to be held", func() error {
		if got := heldNames(s); !slices.Contains(got, stormEvent(storm).Name) {
			return fmt.Errorf("%d events held, from %s to %s", len(got), got[0], got[len(got)-1])
		}
		return nil
	})
	if got := heldNames(s); !slices.Equal(got, want) {
		t.Errorf("after the watch %d events held, from %s to %s: want %d, from %s to %s", len(got), got[0], got[len(got)-1], len(want), want[0], want[len(want)-1])
	}
	if n := testutil.ToFloat64(dropped); n != storm-snapshot.MaxEvents+2 {
		t.Errorf("ocl_exporter_events_dropped_total after the watch = %v, want %d", n, storm-snapshot.MaxEvents+2)
	}
	capped := 0
	for _, r := range snapshot.Resources() {
		if r.Max > 0 {
			capped++
		}
	}
	if n := testutil.CollectAndCount(reg, "ocl_exporter_events_dropped_total"); n != capped || capped < 5 {
		t.Errorf("%d series of ocl_exporter_events_dropped_total, want one per capped watch of events (%d)", n, capped)
	}
}
