package server

import (
	"bytes"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/ocl-exporter/ocl_exporter/diagnose"
)

// StatusPath serves the diagnosis as HTML.
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
	return func(w http.ResponseWriter, _ *http.Request) {
		select {
		case c.readers <- struct{}{}:
			defer func() { <-c.readers }()
		default:
			w.Header().Set("Retry-After", strconv.Itoa(int(statusMaxAge/time.Second)))
			http.Error(w, "the status page is busy: retry shortly", http.StatusServiceUnavailable)
			return
		}
		page, err := c.page(time.Now())
		if err != nil {
			logger.Error("rendering the status page failed", "err", err)
			http.Error(w, "rendering the status page failed; the exporter's log has the error", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(page)
	}
}

// statusCache holds the last rendered page and what it was rendered from.
type statusCache struct {
	report     func() *diagnose.Report
	generation func() uint64
	readers    chan struct{}

	mu       sync.Mutex // one render at a time; readers wait for it
	rendered []byte
	gen      uint64
	at       time.Time
}

func (c *statusCache) page(now time.Time) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var gen uint64
	if c.generation != nil {
		gen = c.generation()
	}
	if c.rendered != nil && c.generation != nil && gen == c.gen && now.Sub(c.at) < statusMaxAge {
		return c.rendered, nil
	}
	r := c.report()
	r.Limit(statusMaxPools)
	var buf bytes.Buffer
	if err := diagnose.WriteHTML(&buf, r); err != nil {
		return nil, err
	}
	c.rendered, c.gen, c.at = buf.Bytes(), gen, now
	return c.rendered, nil
}
