package server

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// text is a render that never changes.
type text string

func (t text) Scrape(string) ([]byte, uint64) { return []byte(t), 1 }

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
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	body, err := decode(resp.Header, raw)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header, string(body)
}

// decode is a response body as its Content-Encoding says. A gzip body
// must be one member and nothing after it: a reader that stops after the
// first member (curl, browsers) reads it whole.
func decode(h http.Header, raw []byte) ([]byte, error) {
	switch h.Get("Content-Encoding") {
	case "":
		return raw, nil
	case "gzip":
		r := bytes.NewReader(raw)
		gz, err := gzip.NewReader(r)
		if err != nil {
			return nil, err
		}
		gz.Multistream(false)
		text, err := io.ReadAll(gz)
		if err != nil {
			return nil, err
		}
		if r.Len() > 0 {
			return nil, fmt.Errorf("%d bytes after the gzip member", r.Len())
		}
		return text, nil
	default:
		return nil, fmt.Errorf("Content-Encoding %q", h.Get("Content-Encoding"))
	}
}

// TestMetricsServeTheRenderTheRegistryThenTheRuntime: the render, the
// registry, then the runtime's, the process's and the scrapes' metrics,
// one valid exposition.
func TestMetricsServeTheRenderTheRegistryThenTheRuntime(t *testing.T) {
	h := newMetricsHandler(t, 0)
	for i, enc := range []string{"", "gzip", "deflate, gzip;q=1.0, *;q=0.5"} {
		header, body := scrapeBody(t, h, enc)
		if got := header.Get("Content-Type"); !strings.HasPrefix(got, "text/plain; version=0.0.4") {
			t.Errorf("%q: Content-Type %q", enc, got)
		}
		if wantGzip := enc != ""; (header.Get("Content-Encoding") == "gzip") != wantGzip {
			t.Errorf("%q: Content-Encoding %q", enc, header.Get("Content-Encoding"))
		}
		if header.Get("Vary") != "Accept-Encoding" {
			t.Errorf("%q: Vary %q", enc, header.Get("Vary"))
		}
		registry := strings.Index(body, "ocl_exporter_up 0\n")
		if !strings.HasPrefix(body, rendered) || registry < 0 || strings.Index(body, "go_goroutines") < registry {
			t.Errorf("%q: body\n%s", enc, body)
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		families, err := parser.TextToMetricFamilies(strings.NewReader(body))
		if err != nil {
			t.Fatalf("%q: %v", enc, err)
		}
		for _, name := range []string{"mosc_info", "ocl_exporter_up", "go_memstats_alloc_bytes", "promhttp_metric_handler_requests_in_flight"} {
			if families[name] == nil {
				t.Errorf("%q: no %s", enc, name)
			}
		}
		// The scrape in flight is this one; the ones before it are served.
		served := families["promhttp_metric_handler_requests_total"].GetMetric()[0]
		if served.GetLabel()[0].GetValue() != "200" || served.GetCounter().GetValue() != float64(i) {
			t.Errorf("%q: %v", enc, served)
		}
	}
}

// exposition is a render of about a megabyte, as repetitive as the
// exporter's, with runs of random bytes that DEFLATE stores rather than
// codes: every kind of block.
func exposition() string {
	var b strings.Builder
	rnd := rand.New(rand.NewPCG(1, 2))
	b.WriteString("# HELP node_mcd_state Test.\n# TYPE node_mcd_state gauge\n")
	for i := range 12000 {
		for _, state := range []string{"Degraded", "Done", "Unreconcilable", "Working"} {
			fmt.Fprintf(&b, "node_mcd_state{node=\"ip-10-0-%d-%d.us-east-2.compute.internal\",state=%q} %d\n", i/250, i%250, state, rnd.IntN(2))
		}
		if i%3000 == 0 {
			noise := make([]byte, 70000)
			for j := range noise {
				noise[j] = 'a' + byte(rnd.IntN(26))
			}
			fmt.Fprintf(&b, "# HELP noise_%d %s\n", i, noise)
		}
	}
	return b.String()
}

// ownRegistry is a registry whose text is the same on every scrape: a
// gauge, a labelled counter and a histogram, with escapes.
func ownRegistry(t testing.TB) (*prometheus.Registry, string) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "ocl_exporter_up", Help: "A \\ help\nwith escapes."})
	g.Set(1)
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ocl_exporter_list_total", Help: "Test."}, []string{"resource"})
	c.WithLabelValues("nodes").Add(3)
	c.WithLabelValues("quote\"d\n").Inc()
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "ocl_exporter_seconds", Help: "Test.", Buckets: []float64{0.1, 1}})
	h.Observe(0.5)
	reg.MustRegister(g, c, h)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	for _, mf := range families {
		if _, err := expfmt.MetricFamilyToText(&want, mf); err != nil {
			t.Fatal(err)
		}
	}
	return reg, want.String()
}

// varying is a render that changes when told to.
type varying struct {
	mu     sync.Mutex
	text   string
	number uint64
}

func (v *varying) Scrape(string) ([]byte, uint64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return []byte(v.text), v.number
}

func (v *varying) set(text string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.text, v.number = text, v.number+1
}

// perScrape stands for the metrics that change with every scrape.
const perScrape = "# HELP go_goroutines Test.\n# TYPE go_goroutines gauge\ngo_goroutines 7\n"

// exactHandler serves render and a registry, then the fixed perScrape for
// the metrics that change with every scrape, and returns the text that
// follows the render.
func exactHandler(t testing.TB, render Prerendered) (*metrics, string) {
	reg, own := ownRegistry(t)
	h := metricsHandler(Config{Registry: reg, Rendered: render, Logger: slog.New(slog.DiscardHandler)})
	h.perScrape = func(b []byte) []byte { return append(b, perScrape...) }
	return h, own + perScrape
}

// exactServer serves exactHandler through net/http's server (which
// answers HEAD) and returns the URL of its metrics and the text that
// follows the render.
func exactServer(t testing.TB, render Prerendered) (string, string) {
	h, own := exactHandler(t, render)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics", own
}

// fetch gets url with that Accept-Encoding (none when absent), as sent,
// and checks what every response must be: 200, a Content-Length that is
// the body's, gzip exactly when acceptsGzip says so. It returns the body
// decoded; for HEAD, the Content-Length.
func fetch(t testing.TB, method, url string, acceptEncoding *string) (string, int) {
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if acceptEncoding != nil {
		req.Header["Accept-Encoding"] = []string{*acceptEncoding}
	}
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	wantGzip := acceptEncoding != nil && acceptsGzip(*acceptEncoding)
	if resp.StatusCode != http.StatusOK || (resp.Header.Get("Content-Encoding") == "gzip") != wantGzip {
		t.Fatalf("%s Accept-Encoding %v: %s, Content-Encoding %q, want gzip %v", method, acceptEncoding, resp.Status, resp.Header.Get("Content-Encoding"), wantGzip)
	}
	length, err := strconv.Atoi(resp.Header.Get("Content-Length"))
	if err != nil {
		t.Fatalf("Content-Length %q: %v", resp.Header.Get("Content-Length"), err)
	}
	if method == http.MethodHead {
		return "", length
	}
	if length != len(raw) {
		t.Fatalf("Content-Length %d, body %d bytes", length, len(raw))
	}
	body, err := decode(resp.Header, raw)
	if err != nil {
		t.Fatalf("Accept-Encoding %v: %v", acceptEncoding, err)
	}
	return string(body), len(raw)
}

// acceptEncodings are headers that ask for gzip, for identity, for both
// in either order, for anything, for nothing, and malformed ones.
var acceptEncodings = []string{
	"", "gzip", "GZip", "x-gzip", "gzip, deflate, br", "br, gzip", "deflate", "identity", "*", "*;q=0",
	"gzip;q=0", "gzip;q=0, identity", "gzip;q=0, *", "identity;q=0", "identity;q=0, gzip", "identity;q=0, *;q=0",
	"gzip;q=0.5, identity", "gzip;q=0.5, identity;q=0.4", "gzip;q=1, identity;q=1", "gzip;q=0.001", "gzip;q=1.000",
	"deflate, gzip;q=1.0, *;q=0.5", "*;q=0.5, identity;q=0.6", "gzip;q=1.5", "gzip;q=abc", "gzip;q=", "gzip ; Q = 0.7 ",
	",,,", ";q=1", "gzip;level=1;q=0", "gzip;q=0, gzip", "zstd;q=1, gzip;q=0.9",
}

// TestScrapeDecodesToTheExposition: whatever the client asks, GET and
// HEAD, the bytes served decode to exactly the render followed by the
// registry's text, gzip in one member, with the length said; when the
// render changes, the next scrape serves the new one.
func TestScrapeDecodesToTheExposition(t *testing.T) {
	render := &varying{}
	render.set(exposition())
	url, own := exactServer(t, render)
	for round := range 2 {
		want, _ := render.Scrape("")
		for _, enc := range append(acceptEncodings, "absent") {
			h := &enc
			if enc == "absent" {
				h = nil
			}
			got, n := fetch(t, http.MethodGet, url, h)
			if got != string(want)+own {
				t.Fatalf("round %d, Accept-Encoding %q: decodes to %d bytes, want the %d of the exposition\n%s",
					round, enc, len(got), len(want)+len(own), firstDifference(got, string(want)+own))
			}
			if _, length := fetch(t, http.MethodHead, url, h); length != n {
				t.Errorf("round %d, Accept-Encoding %q: HEAD says %d bytes, GET sent %d", round, enc, length, n)
			}
		}
		render.set(strings.Replace(string(want), "} 1\n", "} 2\n", 100))
	}
}

// TestScrapeDecodesWithGzipTool: gzip(1), whose inflate is not Go's, reads
// the spliced member as the exposition.
func TestScrapeDecodesWithGzipTool(t *testing.T) {
	tool, err := exec.LookPath("gzip")
	if err != nil {
		t.Fatalf("gzip(1), an essential Debian package, is not installed: %v", err)
	}
	render := &varying{}
	render.set(exposition())
	url, own := exactServer(t, render)
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	cmd := exec.Command(tool, "-dc")
	cmd.Stdin = resp.Body
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("gzip -dc: %v: %s", err, stderr.String())
	}
	if want, _ := render.Scrape(""); string(got) != string(want)+own {
		t.Fatalf("gzip -dc gives %d bytes, want %d\n%s", len(got), len(want)+len(own), firstDifference(string(got), string(want)+own))
	}
}

// FuzzScrapeAcceptEncoding: for any Accept-Encoding the scrape decodes to
// the exposition.
func FuzzScrapeAcceptEncoding(f *testing.F) {
	for _, enc := range acceptEncodings {
		f.Add(enc)
	}
	render := &varying{}
	render.set(rendered + strings.Repeat("mosc_info{machineosconfig=\"a\"} 1\n", 2000))
	h, own := exactHandler(f, render)
	want, _ := render.Scrape("")
	f.Fuzz(func(t *testing.T, enc string) {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Header["Accept-Encoding"] = []string{enc}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if (rec.Header().Get("Content-Encoding") == "gzip") != acceptsGzip(enc) {
			t.Fatalf("%q: Content-Encoding %q", enc, rec.Header().Get("Content-Encoding"))
		}
		got, err := decode(rec.Header(), rec.Body.Bytes())
		if err != nil {
			t.Fatalf("%q: %v", enc, err)
		}
		if string(got) != string(want)+own {
			t.Fatalf("%q: decodes to %d bytes, want %d", enc, len(got), len(want)+len(own))
		}
	})
}

// TestScrapesOfARenderCompressItOnce: concurrent scrapes of one render
// share one compression, and each decodes to it, across renders.
func TestScrapesOfARenderCompressItOnce(t *testing.T) {
	render := &varying{}
	url, own := exactServer(t, render)
	for range 3 {
		render.set(exposition()[:200000+int(render.number)])
		want, _ := render.Scrape("")
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				enc := "gzip"
				if got, _ := fetch(t, http.MethodGet, url, &enc); got != string(want)+own {
					t.Errorf("decodes to %d bytes, want %d", len(got), len(want)+len(own))
				}
			})
		}
		wg.Wait()
	}
}

// firstDifference shows where two texts part.
func firstDifference(got, want string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("at byte %d: got %.80q, want %.80q", i, got[i:], want[i:])
		}
	}
	return fmt.Sprintf("%d bytes, want %d", len(got), len(want))
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
	if !strings.Contains(body, "ocl_exporter_up") || !strings.HasPrefix(body, rendered) {
		t.Errorf("body\n%s", body)
	}
}

// blocking holds the first scrape inside the handler until released.
type blocking struct {
	entered, release chan struct{}
}

func (b blocking) Scrape(string) ([]byte, uint64) {
	b.entered <- struct{}{}
	<-b.release
	return nil, 0
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
		"gzip;q=0.5": true, "deflate": false, "x-gzip": true, "X-GZIP;q=0.1": true,
		"gzip;q=0.": false, "gzip;Q=0": false, "gzip; Q = 0.00": false, "gzip;q=1": true, "gzip;q=1.000": true,
		"gzip;q=abc": false, "gzip;q=-1": false, "gzip;q=NaN": false, "gzip;q=1e0": false, "gzip;q=0.0001": false,
		"gzip;q=1.001": false, "gzip;q=2": false, "gzip;q=": false, "gzip;level=1;q=0": false,
		// Identity, listed or through "*", competes with gzip; ties go to gzip.
		"identity": false, "identity, gzip ; q=0.001": false, "gzip;q=0.5, identity": false, "gzip, identity": true,
		"gzip;q=0.5, identity;q=0.4": true, "identity;q=0, gzip;q=0.1": true, "identity;q=0": false,
		"*": true, "*;q=0": false, "*;q=0.5": true, "gzip;q=0, *": false, "*;q=0.5, identity;q=0.6": false,
		"*;q=0.5, gzip;q=0.4": false, "deflate, *;q=0.1": true,
		// The first entry for a coding counts.
		"gzip;q=0, gzip": false, "gzip, gzip;q=0": true,
		",,,": false, ";q=1": false, "identity;q=0, *;q=0": false,
	} {
		if got := acceptsGzip(header); got != want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", header, got, want)
		}
	}
}

// TestRegistryGatheredWhenItsGenerationMoves: a counter of the registry
// is served as of the last gather until the generation moves; then the
// next scrape, gzip or not, has it.
func TestRegistryGatheredWhenItsGenerationMoves(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "ocl_exporter_list_total", Help: "Test."})
	reg.MustRegister(c)
	var generation atomic.Uint64
	h := metricsHandler(Config{Registry: reg, RegistryGeneration: generation.Load, Rendered: text(rendered), Logger: slog.New(slog.DiscardHandler)})
	for i, step := range []struct {
		inc, bump bool
		want      string
	}{
		{want: "ocl_exporter_list_total 0\n"},
		{inc: true, want: "ocl_exporter_list_total 0\n"}, // not told
		{bump: true, want: "ocl_exporter_list_total 1\n"},
		{inc: true, bump: true, want: "ocl_exporter_list_total 2\n"},
	} {
		if step.inc {
			c.Inc()
		}
		if step.bump {
			generation.Add(1)
		}
		for _, enc := range []string{"", "gzip"} {
			if _, body := scrapeBody(t, h, enc); !strings.Contains(body, step.want) {
				t.Errorf("step %d, %q: want %q in\n%s", i, enc, step.want, body)
			}
		}
	}
}

// TestPerScrapeTextOverAStoredBlock: per-scrape text longer than a stored
// block holds spans several.
func TestPerScrapeTextOverAStoredBlock(t *testing.T) {
	h, own := exactHandler(t, text(rendered))
	long := strings.Repeat(perScrape, 3*maxStored/len(perScrape))
	h.perScrape = func(b []byte) []byte { return append(b, long...) }
	want := rendered + strings.TrimSuffix(own, perScrape) + long
	if _, got := scrapeBody(t, h, "gzip"); got != want {
		t.Errorf("decodes to %d bytes, want %d\n%s", len(got), len(want), firstDifference(got, want))
	}
}
