package server

import (
	"compress/gzip"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

type text string

func (t text) WriteText(w io.Writer) error {
	_, err := io.WriteString(w, string(t))
	return err
}

const rendered = "# HELP mosc_info Info.\n# TYPE mosc_info gauge\nmosc_info{machineosconfig=\"infra\"} 1\n"

func newMetricsHandler(t *testing.T, maxRequests int, extra ...prometheus.Collector) http.Handler {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "ocl_exporter_up", Help: "Test."}))
	reg.MustRegister(extra...)
	return metricsHandler(Config{Registry: reg, Rendered: text(rendered), Logger: slog.New(slog.DiscardHandler), MaxRequests: maxRequests})
}

func scrapeBody(t *testing.T, h http.Handler, acceptEncoding string) (http.Header, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	resp := rec.Result()
	defer resp.Body.Close()
	body := io.Reader(resp.Body)
	if resp.Header.Get("Content-Encoding") == "gzip" {
		gz, err := gzip.NewReader(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		body = gz
	}
	b, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header, string(b)
}

func TestMetricsServeTheRegistryThenTheRender(t *testing.T) {
	for _, enc := range []string{"", "gzip", "deflate, gzip;q=1.0, *;q=0.5"} {
		header, body := scrapeBody(t, newMetricsHandler(t, 0), enc)
		if got := header.Get("Content-Type"); !strings.HasPrefix(got, "text/plain; version=0.0.4") {
			t.Errorf("%q: Content-Type %q", enc, got)
		}
		if wantGzip := enc != ""; (header.Get("Content-Encoding") == "gzip") != wantGzip {
			t.Errorf("%q: Content-Encoding %q", enc, header.Get("Content-Encoding"))
		}
		if !strings.Contains(body, "ocl_exporter_up 0\n") || !strings.HasSuffix(body, rendered) {
			t.Errorf("%q: body\n%s", enc, body)
		}
	}
}

func TestMetricsRefusedGzipIsPlain(t *testing.T) {
	header, _ := scrapeBody(t, newMetricsHandler(t, 0), "gzip;q=0, identity")
	if header.Get("Content-Encoding") != "" {
		t.Error("gzip;q=0 must not be compressed")
	}
}

type failing struct{}

func (failing) Describe(ch chan<- *prometheus.Desc) {
	ch <- prometheus.NewDesc("ocl_exporter_broken", "Test.", nil, nil)
}
func (failing) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.NewInvalidMetric(prometheus.NewDesc("ocl_exporter_broken", "Test.", nil, nil), errors.New("boom"))
}

func TestMetricsContinueOnGatherErrors(t *testing.T) {
	_, body := scrapeBody(t, newMetricsHandler(t, 0, failing{}), "")
	if !strings.Contains(body, "ocl_exporter_up") || !strings.HasSuffix(body, rendered) {
		t.Errorf("body\n%s", body)
	}
}

// blocking holds the first scrape inside the handler until released.
type blocking struct {
	entered, release chan struct{}
}

func (b blocking) WriteText(io.Writer) error {
	b.entered <- struct{}{}
	<-b.release
	return nil
}

func TestMetricsLimitConcurrentScrapes(t *testing.T) {
	b := blocking{entered: make(chan struct{}), release: make(chan struct{})}
	reg := prometheus.NewRegistry()
	h := metricsHandler(Config{Registry: reg, Rendered: b, Logger: slog.New(slog.DiscardHandler), MaxRequests: 1})
	done := make(chan struct{})
	go func() {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/metrics", nil))
		close(done)
	}()
	<-b.entered
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("second concurrent scrape: %d, want 503", rec.Code)
	}
	close(b.release)
	<-done
}

func TestAcceptsGzip(t *testing.T) {
	for header, want := range map[string]bool{
		"": false, "gzip": true, "GZIP": true, "br, gzip": true, "gzip;q=0": false, "gzip; q=0.000": false,
		"gzip;q=0.5": true, "deflate": false, "x-gzip": false,
		"gzip;q=0.": false, "gzip;Q=0": false, "gzip; Q = 0.00": false, "gzip;q=1": true, "gzip;q=1.000": true,
		"gzip;q=abc": false, "gzip;q=-1": false, "gzip;q=NaN": false, "gzip;level=1;q=0": false, "identity, gzip ; q=0.001": true,
	} {
		if got := acceptsGzip(header); got != want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", header, got, want)
		}
	}
}

// TestMetricsFailUntilReady: a scrape of an exporter that has not read
// every watched resource yet fails, rather than serve a partial view that
// reads as every problem fixed; once ready, it serves.
func TestMetricsFailUntilReady(t *testing.T) {
	for _, ready := range []bool{false, true} {
		h := metricsHandler(Config{Registry: prometheus.NewRegistry(), Rendered: text(rendered), Logger: slog.New(slog.DiscardHandler),
			Readiness: fakeReadiness{ready: ready}})
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		want := map[bool]int{false: http.StatusServiceUnavailable, true: http.StatusOK}[ready]
		if rec.Code != want || ready != strings.HasSuffix(rec.Body.String(), rendered) {
			t.Errorf("ready %v: %d %q, want %d", ready, rec.Code, rec.Body.String(), want)
		}
	}
}
