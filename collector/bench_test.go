package collector

import (
	"compress/gzip"
	"fmt"
	"log/slog"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/ocl-exporter/ocl_exporter/source"
	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
	"github.com/ocl-exporter/ocl_exporter/test/synth"
)

type countingWriter int

func (w *countingWriter) Write(p []byte) (int, error) {
	*w += countingWriter(len(p))
	return len(p), nil
}

func encode(b *testing.B, families []*dto.MetricFamily) countingWriter {
	var w countingWriter
	enc := expfmt.NewEncoder(&w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range families {
		if err := enc.Encode(mf); err != nil {
			b.Fatal(err)
		}
	}
	return w
}

// sizes are the node counts benchmarks run at, with synth.Target's 10
// pools and 500 MachineOSBuilds.
var sizes = []int{100, 500, 2000, 5000}

func synthetic(b *testing.B, nodes int) *source.Source {
	size := synth.Target
	size.Nodes = nodes
	return sourcetest.FromObjects(b, synth.Objects(size))
}

// BenchmarkScrapeRendered is what a Prometheus scrape costs the exporter:
// copying the latest render into a gzip.BestSpeed stream, as the server
// does when the scraper accepts gzip (Prometheus always does).
func BenchmarkScrapeRendered(b *testing.B) {
	for _, nodes := range sizes {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			src := synthetic(b, nodes)
			r, err := NewRenderer(New(src, DefaultOptions), src, slog.New(slog.DiscardHandler))
			if err != nil {
				b.Fatal(err)
			}
			r.render()
			var written countingWriter
			gz, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed) // reused, as the server pools them
			b.ReportAllocs()
			for b.Loop() {
				written = 0
				gz.Reset(&written)
				if err := r.WriteText(gz); err != nil {
					b.Fatal(err)
				}
				if err := gz.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(written), "gzipped-bytes/scrape")
		})
	}
}

// BenchmarkRender is one render: the view, the analysis, the samples,
// Gather's checks and sorting, and the text. The Renderer pays it in the
// background, at most once per render interval, and only after a change.
func BenchmarkRender(b *testing.B) {
	for _, nodes := range sizes {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			reg := prometheus.NewRegistry()
			reg.MustRegister(New(synthetic(b, nodes), DefaultOptions))
			var written countingWriter
			b.ReportAllocs()
			for b.Loop() {
				families, err := reg.Gather()
				if err != nil {
					b.Fatal(err)
				}
				written = encode(b, families)
			}
			b.ReportMetric(float64(written), "bytes/scrape")
		})
	}
}
