//go:build e2emco

package mco

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ocl-exporter/ocl_exporter/test/lifecycle"
)

// step is one moment of an incident: the test plays the part of the
// cluster it names, then waits for the MCO to write what done checks. The
// cluster's state then stands for minute at of the hand-written lifecycle.
type step struct {
	at   int
	note string
	play func(ctx context.Context, w *world, in *incident) error
	// done says what the MCO has yet to write, "" once it has.
	done func(ctx context.Context, w *world, in *incident) string
}

// incident is an incident's run: what the test learned of the names the
// MCO chose, and what it recorded at each step.
type incident struct {
	l      *lifecycle.Lifecycle
	states []lifecycle.State
	mosb   string    // the build the MCO created for the incident
	seeded []string  // the builds of the seed
	begin  time.Time // minute 0
	// seedTimes are the seed's timestamps on the run's clock: those of
	// its minute 0 fall after begin, yet are the seed's, not a step's.
	seedTimes map[string]bool
	records   []record
	// names maps the MCO's names to the lifecycle's, for comparison.
	names map[string]string
}

// record is the exporter's scrape and the objects the MCO wrote, at a
// step.
type record struct {
	at      int
	when    time.Time // when the step was recorded
	note    string
	series  map[string]float64
	objects map[string]*unstructured.Unstructured // by kind/name
	pods    []unstructured.Unstructured           // the build pods the test played
}

// settleTimeout bounds each wait for the MCO: its work queues retry after
// 5 s (the build controller's UpdateDelay, the node controller's
// updateDelay) and back off up to 82 s on errors; a loaded 2-core machine
// adds its share.
const settleTimeout = 3 * time.Minute

// seedKinds are the kinds of a lifecycle's snapshot the suite creates:
// what the MCO's controllers and the exporter read. Events are history,
// not state; MachineConfigNodes are the daemon's, which does not run.
// In owners-first order.
var seedKinds = []string{"MachineConfig", "MachineConfigPool", "MachineOSConfig", "MachineOSBuild", "Job", "Pod",
	"ConfigMap", "Secret", "Node", "Deployment", "ClusterOperator"}

// runIncidentFrom replays lifecycle name with the MCO deciding: the
// stage-0 snapshot seeds the cluster (with fromState, the lifecycle's
// whole minute 0: an incident already under way), then each step plays its
// part and waits for the MCO; finally the exporter's series are judged
// against the lifecycle's expected alerts and the MCO's objects compared
// with its stages.
func runIncidentFrom(t *testing.T, name string, fromState bool, steps []step) *incident {
	t.Helper()
	l, err := lifecycle.Load(filepath.Join(repoRoot, "testdata", "lifecycles", name))
	if err != nil {
		t.Fatal(err)
	}
	in := &incident{l: l, names: map[string]string{}}
	if in.states, err = l.States(); err != nil {
		t.Fatal(err)
	}
	snapshot := in.states[0].Objects
	if !fromState {
		if snapshot, err = lifecycle.LoadSnapshot(filepath.Join(l.Dir, l.Stages[0].Snapshot)); err != nil {
			t.Fatal(err)
		}
	}
	var seed []*unstructured.Unstructured
	for _, u := range snapshot {
		if slices.Contains(seedKinds, u.GetKind()) {
			seed = append(seed, u)
		}
		if u.GetKind() == "MachineOSBuild" {
			in.seeded = append(in.seeded, u.GetName())
		}
	}
	slices.SortStableFunc(seed, func(a, b *unstructured.Unstructured) int {
		if k := slices.Index(seedKinds, a.GetKind()) - slices.Index(seedKinds, b.GetKind()); k != 0 {
			return k
		}
		return a.GetCreationTimestamp().Compare(b.GetCreationTimestamp().Time)
	})
	// The seed's times move with minute 0 to now, so that the ages the
	// rules compute from the seed's timestamps stay the lifecycle's.
	in.begin = time.Now().Truncate(time.Second)
	in.seedTimes = map[string]bool{}
	for i, u := range seed {
		seed[i] = &unstructured.Unstructured{Object: shiftTimes(u.DeepCopy().Object, in.begin.Sub(l.Start)).(map[string]any)}
		collectTimes(seed[i].Object, in.seedTimes)
	}
	w := newWorld(t, seed)
	ctx := t.Context()
	for _, s := range steps {
		if s.play != nil {
			if err := s.play(ctx, w, in); err != nil {
				t.Fatalf("minute %d (%s): playing the cluster: %v", s.at, s.note, err)
			}
		}
		w.await(ctx, s, in)
		in.records = append(in.records, w.record(ctx, s))
		t.Logf("minute %d: %s", s.at, s.note)
	}
	rules, err := filepath.Abs(filepath.Join(repoRoot, "alerts"))
	if err != nil {
		t.Fatal(err)
	}
	writeStages(t, in)
	compareWithLifecycle(t, in)
	judge(t, in, rules)
	return in
}

// await polls until the MCO has written what the step waits for.
func (w *world) await(ctx context.Context, s step, in *incident) {
	w.t.Helper()
	deadline := time.Now().Add(settleTimeout)
	for {
		w.checkRunning()
		if err := w.collectGarbage(ctx); err != nil {
			w.t.Fatalf("minute %d: playing the garbage collector: %v", s.at, err)
		}
		missing := s.done(ctx, w, in)
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("minute %d (%s): after %s the MCO has not written %s\n--- machine-os-builder:\n%s\n--- node controller:\n%s",
				s.at, s.note, settleTimeout, missing, w.logTail("machine-os-builder", 25), w.logTail("node-controller", 25))
		}
		select {
		case <-ctx.Done():
			w.t.Fatal(ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// record waits until the exporter's series stop changing (its informers
// have caught up with the MCO's last writes), then keeps them and the
// objects the comparison reads.
func (w *world) record(ctx context.Context, s step) record {
	w.t.Helper()
	series, err := w.settledScrape(ctx)
	if err != nil {
		w.t.Fatalf("minute %d: %v", s.at, err)
	}
	pods, err := w.resource(podGVR, mcoNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		w.t.Fatalf("minute %d: list pods: %v", s.at, err)
	}
	return record{at: s.at, when: time.Now(), note: s.note, series: series, objects: w.objects(ctx), pods: pods.Items}
}

// settledScrape scrapes until three scrapes half a second apart agree.
func (w *world) settledScrape(ctx context.Context) (map[string]float64, error) {
	deadline := time.Now().Add(time.Minute)
	var last map[string]float64
	same := 0
	for {
		s, err := w.scrape(ctx)
		if err != nil {
			return nil, err
		}
		if equalSeries(s, last) {
			same++
		} else {
			same = 0
		}
		if same == 2 {
			return s, nil
		}
		last = s
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the exporter's series did not settle within a minute")
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// shiftTimes moves every RFC 3339 timestamp in v by d.
func shiftTimes(v any, d time.Duration) any {
	return mapTimes(v, func(t time.Time, _ string) string { return t.Add(d).UTC().Format(time.RFC3339) })
}

// collectTimes adds the RFC 3339 timestamps in v to into.
func collectTimes(v any, into map[string]bool) {
	mapTimes(v, func(_ time.Time, s string) string { into[s] = true; return s })
}

// mapTimes replaces, in place, every RFC 3339 timestamp s in v (t parsed)
// by f(t, s), and returns v.
func mapTimes(v any, f func(t time.Time, s string) string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = mapTimes(e, f)
		}
	case []any:
		for i, e := range x {
			x[i] = mapTimes(e, f)
		}
	case string:
		if t, err := time.Parse(time.RFC3339, x); err == nil {
			return f(t, x)
		}
	}
	return v
}
