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
// after reading --max-response-bytes of it. B/op is what one refusal
// allocates; peak-heap-B the most heap in use meanwhile (sampled every
// millisecond), both within a small multiple of the bound (32 MiB), where
// decoding the whole answer took 1.7 GB.
func BenchmarkMillionSeriesRefused(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(millionSeries))
	defer srv.Close()
	a, err := NewAPI(srv.URL, LimitBody(http.DefaultTransport, DefaultMaxResponseBytes))
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
		_, _, err := Fetch(b.Context(), API{V1: a}, window, Filter{})
		if err == nil || !strings.Contains(err.Error(), "--max-response-bytes") {
			b.Fatalf("a 1-million-series answer: %v", err)
		}
	}
	close(done)
	b.ReportMetric(float64(peak.Load()), "peak-heap-B")
}
