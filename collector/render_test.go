package collector

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ocl-exporter/ocl_exporter/analysis"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
)

// changing is a view whose availability flips when told to, with a
// generation that says so.
type changing struct {
	view
	gen       atomic.Uint64
	available atomic.Bool
}

func (c *changing) Generation() uint64 { return c.gen.Load() }
func (c *changing) Ready() bool        { return true }
func (c *changing) Status() []snapshot.ResourceStatus {
	return []snapshot.ResourceStatus{{Resource: "nodes", Seen: true, Available: c.available.Load()}}
}

// TestRendererFollowsGeneration runs in a synctest bubble: the renderer's
// tickers run on the bubble's clock, so "no re-render while the generation
// stands still" is checked after six intervals have really passed, however
// loaded the machine is.
func TestRendererFollowsGeneration(t *testing.T) {
	synctest.Test(t, testRendererFollowsGeneration)
}

func testRendererFollowsGeneration(t *testing.T) {
	src := &changing{view: view{cluster: &analysis.Cluster{}}}
	r, err := NewRenderer(New(src, DefaultOptions), src, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if r.Ready() {
		t.Fatal("ready before the first render")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go r.Run(ctx, 5*time.Millisecond)

	// One interval, then every goroutine of the bubble is blocked again:
	// the renderer has done what its ticks ask.
	wait := func(n int) {
		time.Sleep(time.Duration(n) * 5 * time.Millisecond)
		synctest.Wait()
	}
	wait(1)
	if v := resourceAvailable(t, r.Latest); v != 0 {
		t.Fatalf("resource_available = %v after the first render, want 0", v)
	}
	if !r.Ready() {
		t.Error("not ready after rendering a ready source")
	}

	src.available.Store(true)
	wait(6)
	if resourceAvailable(t, r.Latest) != 0 || resourceAvailable(t, scrapeBy(r, "a")) != 0 {
		t.Fatal("re-rendered although the generation did not move")
	}
	src.gen.Add(1)
	wait(6)
	if r.Renders() != 1 {
		t.Fatalf("%d renders with no scrape due, want the first alone", r.Renders())
	}
	if v := resourceAvailable(t, scrapeBy(r, "a")); v != 1 {
		t.Fatalf("resource_available = %v, scraped six intervals after the generation moved, want 1", v)
	}
	if n := testutil.CollectAndCount(New(src, DefaultOptions), "ocl_exporter_resource_available"); n != 1 {
		t.Errorf("direct collection has %d series", n)
	}
}

// scrapeBy is r's Scrape by client, as Latest is r's.
func scrapeBy(r *Renderer, client string) func() ([]byte, uint64) {
	return func() ([]byte, uint64) { return r.Scrape(client) }
}

// resourceAvailable parses a render's ocl_exporter_resource_available, -1
// when absent.
func resourceAvailable(t *testing.T, render func() ([]byte, uint64)) float64 {
	t.Helper()
	text, _ := render()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if mf, ok := families["ocl_exporter_resource_available"]; ok {
		return mf.GetMetric()[0].GetGauge().GetValue()
	}
	return -1
}

// TestFailingRenderIsReportedAndLoggedBriefly: a view that yields duplicate
// series (two copies of one MachineOSConfig) fails every render; the
// renderer says so for /readyz and logs one short line, not kilobytes on
// every retry.
func TestFailingRenderIsReportedAndLoggedBriefly(t *testing.T) {
	var cluster analysis.Cluster
	for range 200 {
		cluster.MachineOSConfigs = append(cluster.MachineOSConfigs, &mcfgv1.MachineOSConfig{
			ObjectMeta: metav1.ObjectMeta{Name: "infra"},
			Spec:       mcfgv1.MachineOSConfigSpec{MachineConfigPool: mcfgv1.MachineConfigPoolReference{Name: "infra"}},
		})
	}
	src := &changing{view: view{cluster: &cluster}}
	var logs bytes.Buffer
	r, err := NewRenderer(New(src, DefaultOptions), src, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	r.Run(ctx, 5*time.Millisecond) // retries while not ready
	if r.Ready() || r.Renders() != 0 {
		t.Errorf("ready %v, %d renders, although none succeeded", r.Ready(), r.Renders())
	}
	if f := r.Failure(); !strings.Contains(f, "was collected before with the same name and label values") {
		t.Errorf("Failure() = %.200q", f)
	}
	if n := strings.Count(logs.String(), "rendering the OCL metrics failed"); n != 1 {
		t.Errorf("%d log lines for one repeated failure, want 1", n)
	}
	if logs.Len() > 2048 {
		t.Errorf("the failure logged %d bytes", logs.Len())
	}

	cluster.MachineOSConfigs = cluster.MachineOSConfigs[:1]
	src.gen.Add(1)
	r.render()
	if f := r.Failure(); f != "" || !r.Ready() || r.Renders() != 1 {
		t.Errorf("after a good render: failure %q, ready %v, %d renders", f, r.Ready(), r.Renders())
	}
}

// starting is a view that becomes ready when told to.
type starting struct {
	changing
	ready atomic.Bool
}

func (s *starting) Ready() bool { return s.ready.Load() }

// TestRendererReadyOnceTheSourceIs: with a long render interval, the
// renderer is ready soon after the source, not an interval later.
// It runs in a synctest bubble, so "not ready yet" is checked once the
// first render has really happened, and "ready" one readyPoll later.
func TestRendererReadyOnceTheSourceIs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &starting{changing: changing{view: view{cluster: &analysis.Cluster{}}}}
		r, err := NewRenderer(New(src, DefaultOptions), src, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go r.Run(ctx, time.Hour)
		synctest.Wait() // the first render, of a source not ready
		if r.Ready() {
			t.Fatal("ready before the source")
		}
		src.ready.Store(true)
		time.Sleep(readyPoll)
		synctest.Wait()
		if !r.Ready() {
			t.Fatalf("not ready %v after the source, with a render interval of 1h", readyPoll)
		}
	})
}

// TestRenderMatchesGatherText: the renderer encodes without a registry, to the
// bytes a registry's Gather and the text encoder give (golden files and
// the scenario tests read those): on every scenario, on 2,000 synthetic
// nodes, on hostile label values, and on an empty view.
func TestRenderMatchesGatherText(t *testing.T) {
	entries, err := os.ReadDir(scenarios)
	if err != nil {
		t.Fatal(err)
	}
	views := map[string]view{"empty": {cluster: &analysis.Cluster{}}}
	for _, e := range entries {
		views[e.Name()] = scenarioView(t, filepath.Join(scenarios, e.Name()))
	}
	huge := strings.Repeat("é\"\\\n", 1<<10)
	views["hostile"] = view{cluster: &analysis.Cluster{MachineOSConfigs: []*mcfgv1.MachineOSConfig{{
		ObjectMeta: metav1.ObjectMeta{Name: huge + "a"},
		Spec:       mcfgv1.MachineOSConfigSpec{MachineConfigPool: mcfgv1.MachineConfigPoolReference{Name: "\xff" + huge}},
	}}}}
	large := synthetic(t, 2000)
	views["synthetic"] = view{cluster: large.Cluster(time.Now()), status: large.Status()}
	for name, v := range views {
		t.Run(name, func(t *testing.T) {
			src := &changing{view: v}
			c := New(src, DefaultOptions)
			r, err := NewRenderer(c, src, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			for range 2 { // the second reuses the first's size
				r.render()
				if f := r.Failure(); f != "" {
					t.Fatal(f)
				}
				got, _ := r.Latest()
				if want := exposition(t, c); !bytes.Equal(got, want) {
					t.Fatalf("the render differs from Gather's text:\n%s", firstDifference(got, want))
				}
			}
		})
	}
}

// firstDifference shows where two texts part, a line of each.
func firstDifference(got, want []byte) string {
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range min(len(gl), len(wl)) {
		if gl[i] != wl[i] {
			return fmt.Sprintf("line %d:\ngot  %.300q\nwant %.300q", i+1, gl[i], wl[i])
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(gl), len(wl))
}

// TestRenderAllocatesLittlePerSeries: what a render allocates on top of
// the view and its analysis is what the exporter's memory swings by when
// it renders, and its peak at start-up. A registry's Gather allocated
// about 1,000 bytes a series at 2,000 nodes (16 allocations), most of it
// held until the text was out. Allocation counts, not time: the bound
// holds on any machine.
func TestRenderAllocatesLittlePerSeries(t *testing.T) {
	large := synthetic(t, 2000)
	src := &changing{view: view{cluster: large.Cluster(time.Now()), status: large.Status()}}
	r, err := NewRenderer(New(src, DefaultOptions), src, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	r.render()
	text, _ := r.Latest()
	series := seriesIn(text)
	const renders = 5
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range renders {
		r.render()
	}
	runtime.ReadMemStats(&after)
	if f := r.Failure(); f != "" {
		t.Fatal(f)
	}
	perSeries := float64(after.TotalAlloc-before.TotalAlloc) / renders / float64(series)
	t.Logf("%d series: %.0f bytes allocated a series", series, perSeries)
	if perSeries > 450 {
		t.Errorf("a render allocates %.0f bytes a series of %d, want at most 450 (about 300 when written)", perSeries, series)
	}
}

// seriesIn counts the series of an exposition text.
func seriesIn(text []byte) int {
	n := 0
	for l := range bytes.Lines(text) {
		if l[0] != '#' {
			n++
		}
	}
	return n
}
