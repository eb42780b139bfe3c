package review

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// millionSeries streams an answer of 1,000,000 series, about 70 MB,
// written as it goes (the server holds none of it).
func millionSeries(w http.ResponseWriter, _ *http.Request) {
	bw := bufio.NewWriter(w)
	_, _ = bw.WriteString(`{"status":"success","data":{"resultType":"matrix","result":[`)
	for i := range 1_000_000 {
		if i > 0 {
			_ = bw.WriteByte(',')
		}
		if _, err := fmt.Fprintf(bw, `{"metric":{"pool":"worker","node":"node-%07d"},"values":[[1760695915,"1"]]}`, i); err != nil {
			return // the client gave up
		}
	}
	_, _ = bw.WriteString(`]}}`)
	_ = bw.Flush()
}

// BenchmarkMillionSeriesRefused: review refuses a 1-million-series answer
// at its first bound: --max-series (counted as the answer streams) by
// default, --max-response-bytes when the series bound is raised past it.
// B/op is what one refusal allocates; peak-heap-B the most heap in use
// meanwhile (sampled every millisecond), where decoding the whole answer
// took 1.7 GB.
func BenchmarkMillionSeriesRefused(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(millionSeries))
	defer srv.Close()
	for _, bc := range []struct {
		name   string
		bounds Bounds
		flag   string
	}{
		{"max-series", Bounds{Bytes: DefaultMaxResponseBytes, Series: DefaultMaxSeries}, "--max-series"},
		{"max-response-bytes", Bounds{Bytes: DefaultMaxResponseBytes, Series: 10_000_000}, "--max-response-bytes"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			a, err := NewAPI(srv.URL, LimitBody(http.DefaultTransport, bc.bounds))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			reportPeakHeap(b, func() {
				for b.Loop() {
					_, _, err := Fetch(b.Context(), API{V1: a, MaxSeries: 10_000_000}, window, Filter{})
					if err == nil || !strings.Contains(err.Error(), bc.flag) {
						b.Fatalf("a 1-million-series answer: %v, want a refusal naming %s", err, bc.flag)
					}
				}
			})
		})
	}
}

// reportPeakHeap runs f and reports the most heap in use meanwhile
// (sampled every millisecond) as peak-heap-B.
func reportPeakHeap(b *testing.B, f func()) {
	var peak atomic.Uint64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
		}
	}()
	f()
	close(done)
	<-sampled
	b.ReportMetric(float64(peak.Load()), "peak-heap-B")
}

// warningFlood answers every range query with warnings distinct warnings
// (a Thanos querier whose stores all fail says one per store and
// query), written as it goes, and the exporter's series for the query of
// ocl_exporter_resource_available.
func warningFlood(warnings int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		exporter := strings.Contains(r.FormValue("query"), "ocl_exporter_resource_available")
		bw := bufio.NewWriter(w)
		_, _ = bw.WriteString(`{"status":"success","warnings":[`)
		for i := range warnings {
			if i > 0 {
				_ = bw.WriteByte(',')
			}
			if _, err := fmt.Fprintf(bw, `"receiving series from store %06d: rpc error: code = Unavailable"`, i); err != nil {
				return // the client gave up
			}
		}
		result := ""
		if exporter {
			result = fmt.Sprintf(`{"metric":{},"values":[[%d,"1"]]}`, window.From.Add(window.Step).Unix())
		}
		_, _ = fmt.Fprintf(bw, `],"data":{"resultType":"matrix","result":[%s]}}`, result)
		_ = bw.Flush()
	}
}

// BenchmarkWarningFlood: a querier sends 100,000 distinct warnings with
// every answer. report-B is the size of the text report review writes;
// peak-heap-B the most heap in use while it fetches, builds and renders
// it.
func BenchmarkWarningFlood(b *testing.B) {
	srv := httptest.NewServer(warningFlood(100_000))
	defer srv.Close()
	a, err := NewAPI(srv.URL, LimitBody(http.DefaultTransport, Bounds{Bytes: DefaultMaxResponseBytes, Series: DefaultMaxSeries}))
	if err != nil {
		b.Fatal(err)
	}
	var report countingWriter
	b.ReportAllocs()
	reportPeakHeap(b, func() {
		for b.Loop() {
			report = 0
			s, ws, err := Fetch(b.Context(), API{V1: a}, window, Filter{})
			if err != nil {
				b.Fatal(err)
			}
			r, err := Build(s, ws, window, Filter{})
			if err != nil {
				b.Fatal(err)
			}
			if err := Render(&report, r, "text"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.ReportMetric(float64(report), "report-B")
}

// countingWriter counts the bytes written to it.
type countingWriter int

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}
