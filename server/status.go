package server

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/ocl-exporter/ocl_exporter/diagnose"
)

// StatusPath serves the diagnosis as HTML, or as the JSON of `diagnose -o
// json` (docs/diagnose.schema.json) to a client that asks for
// application/json.
const StatusPath = "/status"

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

// statusPage diagnoses the view from the informer caches (no API call)
// and renders it without JavaScript, at most once per change of the view
// (generation) and statusMaxAge, compressed once for the clients that take
// gzip (every browser, Prometheus' and Go's clients): N readers cost one
// render, and each a copy of a page about 20 times smaller.
func statusPage(report func() *diagnose.Report, generation func() uint64, logger *slog.Logger) http.HandlerFunc {
	c := &statusCache{report: report, generation: generation}
	turns := rate.NewLimiter(statusRate, statusRate)
	return func(w http.ResponseWriter, req *http.Request) {
		format := statusFormat(req.Header.Values("Accept"))
		ctx, cancel := context.WithTimeout(req.Context(), statusMaxWait)
		defer cancel()
		if err := turns.Wait(ctx); err != nil {
			w.Header().Set("Retry-After", strconv.Itoa(int(statusMaxWait/time.Second)))
			http.Error(w, "the status page is busy: retry shortly", http.StatusServiceUnavailable)
			return
		}
		page, err := c.page(time.Now(), format)
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

// statusFormats are what /status serves, by format name.
var statusFormats = map[string]struct {
	contentType string
	write       func(io.Writer, *diagnose.Report) error
}{
	"html": {"text/html; charset=utf-8", diagnose.WriteHTML},
	"json": {"application/json", diagnose.WriteJSON},
}

// statusFormat is "json" when the Accept header prefers application/json
// to text/html (a browser lists text/html first), else "html".
func statusFormat(accept []string) string {
	var jsonQ, htmlQ float64 = -1, -1
	for _, field := range accept {
		for part := range strings.SplitSeq(field, ",") {
			media, params, err := mime.ParseMediaType(part)
			if err != nil {
				continue
			}
			q := 1.0
			if v, err := strconv.ParseFloat(params["q"], 64); err == nil {
				q = v
			}
			switch media {
			case "application/json":
				jsonQ = max(jsonQ, q)
			case "text/html":
				htmlQ = max(htmlQ, q)
			}
		}
	}
	if jsonQ > 0 && jsonQ > htmlQ {
		return "json"
	}
	return "html"
}

// statusCache holds the last pages rendered and what they were rendered
// from.
type statusCache struct {
	report     func() *diagnose.Report
	generation func() uint64

	mu       sync.Mutex // one render at a time; readers wait for it
	diagnose *diagnose.Report
	rendered map[string]statusBody // by format, of diagnose
	gen      uint64
	at       time.Time
}

// statusBody is a page as rendered and gzip-compressed.
type statusBody struct{ plain, gzip []byte }

func (c *statusCache) page(now time.Time, format string) (statusBody, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var gen uint64
	if c.generation != nil {
		gen = c.generation()
	}
	if c.diagnose == nil || c.generation == nil || gen != c.gen || now.Sub(c.at) >= statusMaxAge {
		r := c.report()
		r.Limit(statusMaxPools)
		c.diagnose, c.rendered, c.gen, c.at = r, map[string]statusBody{}, gen, now
	}
	if page, ok := c.rendered[format]; ok {
		return page, nil
	}
	var plain, compressed bytes.Buffer
	if err := statusFormats[format].write(&plain, c.diagnose); err != nil {
		return statusBody{}, err
	}
	gz := gzip.NewWriter(&compressed)
	_, _ = gz.Write(plain.Bytes()) // a bytes.Buffer takes every write
	_ = gz.Close()
	c.rendered[format] = statusBody{plain.Bytes(), compressed.Bytes()}
	return c.rendered[format], nil
}
