package collector

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
	"github.com/ocl-exporter/ocl_exporter/test/synth"
)

type countingWriter int

func (w *countingWriter) Write(p []byte) (int, error) {
	*w += countingWriter(len(p))
	return len(p), nil
}

// BenchmarkScrape is one full scrape of the OCL collector (view, analysis,
// samples, text encoding) on synthetic clusters of growing size, 10 pools
// and 500 MachineOSBuilds.
func BenchmarkScrape(b *testing.B) {
	for _, nodes := range []int{100, 500, 2000, 5000} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			size := synth.Target
			size.Nodes = nodes
			reg := prometheus.NewRegistry()
			reg.MustRegister(New(sourcetest.FromObjects(b, synth.Objects(size)), DefaultOptions))
			var written countingWriter
			b.ReportAllocs()
			for b.Loop() {
				families, err := reg.Gather()
				if err != nil {
					b.Fatal(err)
				}
				var w countingWriter
				enc := expfmt.NewEncoder(&w, expfmt.NewFormat(expfmt.TypeTextPlain))
				for _, mf := range families {
					if err := enc.Encode(mf); err != nil {
						b.Fatal(err)
					}
				}
				written = w
			}
			b.ReportMetric(float64(written), "bytes/scrape")
		})
	}
}
