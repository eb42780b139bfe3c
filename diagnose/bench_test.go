package diagnose

import (
	"fmt"
	"io"
	"testing"

	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
	"github.com/ocl-exporter/ocl_exporter/test/synth"
)

// BenchmarkStatusPage is what one /status request costs: the view, the
// report and the HTML, on synthetic clusters of synth.Target's 10 pools
// and 500 MachineOSBuilds.
func BenchmarkStatusPage(b *testing.B) {
	for _, nodes := range []int{100, 2000, 5000} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			size := synth.Target
			size.Nodes = nodes
			src := sourcetest.FromObjects(b, synth.Objects(size))
			b.ReportAllocs()
			for b.Loop() {
				r := New(src.Cluster(sourcetest.Now), src.Status(), Options{RunbookBase: testRunbookBase})
				if err := WriteHTML(io.Discard, r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
