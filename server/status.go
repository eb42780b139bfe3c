package server

import (
	"bytes"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ocl-exporter/ocl_exporter/diagnose"
)

// StatusPath serves the diagnosis as HTML, or as the JSON of `diagnose -o
// json` (docs/diagnose.schema.json) to a client that asks for
// application/json.
const StatusPath = "/status"

// Bounds of /status, which shares the process with the scrape: the scrape
// is the product, and a page must never slow it. Measured before them, 50
// clients on /status of a 5,000-node cluster took /metrics from 2.4 ms to
// 630 ms (p50) and the memory from 182 to 262 MB.
const (
	// statusReaders bounds the requests inside the handler, rendering or
	// waiting for the one render; more get 503 and Retry-After.
	statusReaders = 8
	// statusMaxAge re-renders an unchanged view now and then, so the
	// page's "since" times stay true.
	statusMaxAge = 10 * time.Second
	// statusMaxPools bounds the pools on the page (Report.Limit).
	statusMaxPools = 200
)

// statusPage diagnoses the view from the informer caches (no API call)
// and renders it without JavaScript, at most once per change of the view
// (generation) and statusMaxAge: N readers cost one render.
func statusPage(report func() *diagnose.Report, generation func() uint64, logger *slog.Logger) http.HandlerFunc {
	c := &statusCache{report: report, generation: generation, readers: make(chan struct{}, statusReaders)}
	return func(w http.ResponseWriter, req *http.Request) {
		format := statusFormat(req.Header.Values("Accept"))
		select {
		case c.readers <- struct{}{}:
			defer func() { <-c.readers }()
		default:
			w.Header().Set("Retry-After", strconv.Itoa(int(statusMaxAge/time.Second)))
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
		w.Header().Set("Vary", "Accept")
		_, _ = w.Write(page)
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
	readers    chan struct{}

	mu       sync.Mutex // one render at a time; readers wait for it
	diagnose *diagnose.Report
	rendered map[string][]byte // by format, of diagnose
	gen      uint64
	at       time.Time
}

func (c *statusCache) page(now time.Time, format string) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var gen uint64
	if c.generation != nil {
		gen = c.generation()
	}
	if c.diagnose == nil || c.generation == nil || gen != c.gen || now.Sub(c.at) >= statusMaxAge {
		r := c.report()
		r.Limit(statusMaxPools)
		c.diagnose, c.rendered, c.gen, c.at = r, map[string][]byte{}, gen, now
	}
	if page, ok := c.rendered[format]; ok {
		return page, nil
	}
	var buf bytes.Buffer
	if err := statusFormats[format].write(&buf, c.diagnose); err != nil {
		return nil, err
	}
	c.rendered[format] = buf.Bytes()
	return c.rendered[format], nil
}
