package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/ocl-exporter/ocl_exporter/collector"
	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
	"github.com/ocl-exporter/ocl_exporter/test/synth"
)

// discard is a ResponseWriter that keeps nothing but the byte count.
type discard struct {
	header http.Header
	n      int
}

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) WriteHeader(int)             {}
func (d *discard) Write(p []byte) (int, error) { d.n += len(p); return len(p), nil }

// BenchmarkScrape is what a Prometheus scrape costs the exporter in
// process, without the socket: the handler as Handler builds it (with
// promhttp's counters), the Go and process collectors, a render of the
// synthetic cluster (test/synth, 10 pools, 500 MachineOSBuilds), gzip
// asked as Prometheus asks. The render is compressed by the first scrape
// and not again: each later one encodes and compresses only the
// registry's few metrics. make bench-scale measures the same over HTTP,
// in its own process, beside a server that only writes the bytes.
func BenchmarkScrape(b *testing.B) {
	for _, nodes := range []int{100, 2000, 10000} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			size := synth.Target
			size.Nodes = nodes
			src := sourcetest.FromObjects(b, synth.Objects(size))
			r, err := collector.NewRenderer(collector.New(src, collector.DefaultOptions), src, slog.New(slog.DiscardHandler))
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(b.Context())
			defer cancel()
			go r.Run(ctx, time.Hour)
			for !r.Ready() {
				time.Sleep(time.Millisecond)
			}
			reg := prometheus.NewRegistry()
			reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
			h, err := Handler(Config{MetricsPath: "/metrics", Registry: reg, Rendered: r, Readiness: fakeReadiness{ready: true}, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			req.Header.Set("Accept-Encoding", "gzip")
			w := &discard{header: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				w.n = 0
				h.ServeHTTP(w, req)
			}
			b.ReportMetric(float64(w.n), "gzip-bytes/scrape")
		})
	}
}
