package collector

import (
	"bytes"
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/ocl-exporter/ocl_exporter/analysis"
	"github.com/ocl-exporter/ocl_exporter/source"
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
func (c *changing) Status() []source.ResourceStatus {
	return []source.ResourceStatus{{Resource: "nodes", Seen: true, Available: c.available.Load()}}
}

func TestRendererFollowsGeneration(t *testing.T) {
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

	value := func() float64 {
		var text bytes.Buffer
		if err := r.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		families, err := parser.TextToMetricFamilies(&text)
		if err != nil {
			t.Fatal(err)
		}
		if mf, ok := families["ocl_exporter_resource_available"]; ok {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
		return -1
	}
	waitFor := func(want float64) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for value() != want {
			if time.Now().After(deadline) {
				t.Fatalf("resource_available = %v, want %v", value(), want)
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitFor(0)
	if !r.Ready() {
		t.Error("not ready after rendering a ready source")
	}

	src.available.Store(true)
	time.Sleep(30 * time.Millisecond)
	if value() != 0 {
		t.Fatal("re-rendered although the generation did not move")
	}
	src.gen.Add(1)
	waitFor(1)
	if n := testutil.CollectAndCount(New(src, DefaultOptions), "ocl_exporter_resource_available"); n != 1 {
		t.Errorf("direct collection has %d series", n)
	}
}
