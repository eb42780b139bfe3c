package collector

import (
	"fmt"
	"log/slog"
	"runtime"
	"testing"

	"github.com/ocl-exporter/ocl_exporter/source"
	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
	"github.com/ocl-exporter/ocl_exporter/test/synth"
)

// sizes are the node counts benchmarks run at, with synth.Target's 10
// pools and 500 MachineOSBuilds.
var sizes = []int{100, 500, 2000, 5000}

func synthetic(b testing.TB, nodes int) *source.Source {
	size := synth.Target
	size.Nodes = nodes
	return sourcetest.FromObjects(b, synth.Objects(size))
}

// BenchmarkRender is one render: the view, the analysis, the samples,
// their checks and sorting, and the text. The Renderer pays it after a
// change, once before each scrape (or in one);
// its allocations are the transient memory of a render, on top of the
// caches, so they set the exporter's peak (the first render, at start-up)
// and how far the heap swings in a cluster that changes. alloc-B/series
// is what a regression in them shows as.
func BenchmarkRender(b *testing.B) {
	for _, nodes := range append(sizes, 10000) {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			src := synthetic(b, nodes)
			r, err := NewRenderer(New(src, DefaultOptions), src, slog.New(slog.DiscardHandler))
			if err != nil {
				b.Fatal(err)
			}
			r.render()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			b.ReportAllocs()
			for b.Loop() {
				r.render()
			}
			runtime.ReadMemStats(&after)
			if f := r.Failure(); f != "" {
				b.Fatal(f)
			}
			text, _ := r.Latest()
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(seriesIn(text)), "alloc-B/series")
			b.ReportMetric(float64(len(text)), "bytes/scrape")
		})
	}
}
