package server

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/ocl-exporter/ocl_exporter/diagnose"
)

// StatusPath serves the diagnosis as HTML to a browser, as the JSON of
// `diagnose -o json` (docs/diagnose.schema.json) to a client that asks
// for application/json, and as the text `diagnose` prints to any other
// (curl); ?pool=NAME narrows it as diagnose --pool does.
const StatusPath = "/status"

// statusSecurityPolicy lets the page apply its own style element and
// nothing else: no script, image, font, frame, form or base URL, and no
// page may frame it. The report quotes text anyone who runs a build can
// write; it is escaped, and this is the second line.
var statusSecurityPolicy = "default-src 'none'; style-src " + diagnose.StyleSource +
	"; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// Bounds of /status, which shares the process with the scrape: the scrape
// is the product, and a page must never slow it. Measured before them, 50
// clients on /status of a 5,000-node cluster took /metrics from 2.4 ms to
// 630 ms (p50) and the memory from 182 to 262 MB; with one render per view
// but every request answered as fast as it came, 100 clients still took
// the scrape's p99 from 22 to 76 ms, most of the CPU going to writing the
// 200 KB page.
const (
	// statusRate is how many pages are served a second, and at once: past
	// it a request waits its turn, which costs the CPU nothing, and a
	// client that asks again at once is slowed to the same pace. A person
	// reading the page, or a tool polling it, asks a few times a minute.
	statusRate = 20
	// statusMaxWait bounds a request's turn; past it, 503 and Retry-After.
	statusMaxWait = 10 * time.Second
	// statusMaxAge re-renders an unchanged view now and then, so the
	// page's "since" times stay true.
	statusMaxAge = 10 * time.Second
	// statusMaxPools bounds the pools on the page (Report.Limit).
	statusMaxPools = 200
)

// StatusHandler serves the /status page of report, the diagnosis of the
// current view; generation counts changes of the view: the page is
// rendered again only when it moved, or after statusMaxAge (without it,
// at every request). One handler serves every listener, so its pace and
// its cache are shared.
func StatusHandler(report func() *diagnose.Report, generation func() uint64, logger *slog.Logger) http.Handler {
	return statusPage(report, generation, logger)
}

// statusPage diagnoses the view from the informer caches (no API call)
// and renders it without JavaScript, at most once per change of the view
// (generation) and statusMaxAge, compressed once for the clients that take
// gzip (every browser, Prometheus' and Go's clients): N readers cost one
// render, and each a copy of a page about 20 times smaller.
func statusPage(report func() *diagnose.Report, generation func() uint64, logger *slog.Logger) http.HandlerFunc {
	c := &statusCache{report: report, generation: generation}
	turns := rate.NewLimiter(statusRate, statusRate)
	return func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Security-Policy", statusSecurityPolicy)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		format := statusFormat(req.Header.Values("Accept"))
		ctx, cancel := context.WithTimeout(req.Context(), statusMaxWait)
		defer cancel()
		if err := turns.Wait(ctx); err != nil {
			w.Header().Set("Retry-After", strconv.Itoa(int(statusMaxWait/time.Second)))
			http.Error(w, "the status page is busy: retry shortly", http.StatusServiceUnavailable)
			return
		}
		page, err := c.page(time.Now(), format, req.URL.Query().Get("pool"))
		if err != nil {
			logger.Error("rendering the status page failed", "err", err)
			http.Error(w, "rendering the status page failed; the exporter's log has the error", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", statusFormats[format].contentType)
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Vary", "Accept, Accept-Encoding")
		body := page.plain
		if acceptsGzip(req.Header.Get("Accept-Encoding")) {
			w.Header().Set("Content-Encoding", "gzip")
			body = page.gzip
		}
		_, _ = w.Write(body)
	}
}

// statusFormats are what /status serves, by format name, in the order a
// tie of the client's preferences is broken.
var statusFormats = []struct {
	name, contentType string
	// media are the Accept media ranges that ask for it.
	media []string
	write func(io.Writer, *diagnose.Report) error
}{
	{"html", "text/html; charset=utf-8", []string{"text/html"}, diagnose.WriteHTML},
	{"json", "application/json", []string{"application/json"}, diagnose.WriteJSON},
	{"text", "text/plain; charset=utf-8", []string{"text/plain", "text/*", "*/*"},
		func(w io.Writer, r *diagnose.Report) error { return diagnose.WriteText(w, r, diagnose.TextOptions{}) }},
}

// statusFormat is the index in statusFormats of the format the Accept
// header prefers: a browser lists text/html, a client of the JSON
// application/json; curl's */*, no Accept at all, or nothing acceptable
// gets the text report, as diagnose prints it.
func statusFormat(accept []string) int {
	q := make([]float64, len(statusFormats))
	for _, field := range accept {
		for part := range strings.SplitSeq(field, ",") {
			media, params, err := mime.ParseMediaType(part)
			if err != nil {
				continue
			}
			weight := 1.0
			if v, err := strconv.ParseFloat(params["q"], 64); err == nil {
				weight = v
			}
			for i, f := range statusFormats {
				if slices.Contains(f.media, media) {
					q[i] = max(q[i], weight)
				}
			}
		}
	}
	best, bestQ := len(statusFormats)-1, 0.0
	for i := range statusFormats {
		if q[i] > bestQ {
			best, bestQ = i, q[i]
		}
	}
	return best
}

// statusCache holds the last pages rendered and what they were rendered
// from.
type statusCache struct {
	report     func() *diagnose.Report
	generation func() uint64

	mu sync.Mutex // one render at a time; readers wait for it
	// full is the report, diagnose the page's part of it (Limit).
	full, diagnose *diagnose.Report
	rendered       map[int]statusBody // by format, of diagnose
	gen            uint64
	at             time.Time
}

// statusBody is a page as rendered and gzip-compressed.
type statusBody struct{ plain, gzip []byte }

// page is the page in format, of the whole report or of one pool's
// (rendered at each request: a pool's page is small).
func (c *statusCache) page(now time.Time, format int, pool string) (statusBody, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var gen uint64
	if c.generation != nil {
		gen = c.generation()
	}
	if c.diagnose == nil || c.generation == nil || gen != c.gen || now.Sub(c.at) >= statusMaxAge {
		c.full = c.report()
		limited := *c.full
		limited.Limit(statusMaxPools)
		c.diagnose, c.rendered, c.gen, c.at = &limited, map[int]statusBody{}, gen, now
	}
	if pool != "" {
		return render(format, c.full.ForPool(pool))
	}
	if page, ok := c.rendered[format]; ok {
		return page, nil
	}
	page, err := render(format, c.diagnose)
	if err == nil {
		c.rendered[format] = page
	}
	return page, err
}

// render writes r in format, and compressed.
func render(format int, r *diagnose.Report) (statusBody, error) {
	var plain, compressed bytes.Buffer
	if err := statusFormats[format].write(&plain, r); err != nil {
		return statusBody{}, err
	}
	gz := gzip.NewWriter(&compressed)
	_, _ = gz.Write(plain.Bytes()) // a bytes.Buffer takes every write
	_ = gz.Close()
	return statusBody{plain.Bytes(), compressed.Bytes()}, nil
}
