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
			var peak atomic.Uint64
			done := make(chan struct{})
			go func() {
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
			b.ReportAllocs()
			for b.Loop() {
				_, _, err := Fetch(b.Context(), API{V1: a, MaxSeries: 10_000_000}, window, Filter{})
				if err == nil || !strings.Contains(err.Error(), bc.flag) {
					b.Fatalf("a 1-million-series answer: %v, want a refusal naming %s", err, bc.flag)
				}
			}
			close(done)
			b.ReportMetric(float64(peak.Load()), "peak-heap-B")
		})
	}
}
