package server

import (
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/common/expfmt"
)

// Prerendered is exposition text encoded ahead of scrapes (see
// collector.Renderer): the bulk of a scrape, copied rather than built.
type Prerendered interface {
	WriteText(w io.Writer) error
}

// textFormat is the only format served: every Prometheus reads it, and
// the pre-rendered text is in it.
var textFormat = expfmt.NewFormat(expfmt.TypeTextPlain)

// metricsHandler serves the registry, gathered per scrape, followed by the
// pre-rendered text. It replaces promhttp's handler, which would gather,
// check and re-encode the pre-rendered families on every scrape, and
// compresses at gzip.BestSpeed: the exposition is repetitive enough that
// it still shrinks about twentyfold, at a fifth of the default's cost.
//
// Until the view is complete (cfg.Readiness) a scrape fails with 503:
// Prometheus scrapes a pod before it is ready (its discovery keeps
// not-ready endpoints as targets), and a restarted exporter's first
// seconds, before its first lists, would read as every problem fixed:
// firing alerts would resolve, and page again once the view is whole. A
// failed scrape is a gap instead (up is 0), as while the pod was away.
func metricsHandler(cfg Config) http.Handler {
	var inflight chan struct{}
	if cfg.MaxRequests > 0 {
		inflight = make(chan struct{}, cfg.MaxRequests)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if cfg.Readiness != nil && !cfg.Readiness.Ready() {
			http.Error(w, "not ready: the exporter has not read every watched resource yet (/readyz says which)", http.StatusServiceUnavailable)
			return
		}
		if inflight != nil {
			select {
			case inflight <- struct{}{}:
				defer func() { <-inflight }()
			default:
				http.Error(w, fmt.Sprintf("Limit of concurrent requests reached (%d), try again later.", cfg.MaxRequests), http.StatusServiceUnavailable)
				return
			}
		}
		families, err := cfg.Registry.Gather()
		if err != nil {
			// Like promhttp's ContinueOnError: serve what was gathered.
			cfg.Logger.Error("gathering the exporter's own metrics", "err", err)
		}
		w.Header().Set("Content-Type", string(textFormat))
		var out io.Writer = w
		if acceptsGzip(r.Header.Get("Accept-Encoding")) {
			w.Header().Set("Content-Encoding", "gzip")
			gz := gzipWriters.Get().(*gzip.Writer)
			gz.Reset(w)
			defer func() {
				_ = gz.Close()
				gzipWriters.Put(gz)
			}()
			out = gz
		}
		enc := expfmt.NewEncoder(out, textFormat)
		for _, mf := range families {
			if err := enc.Encode(mf); err != nil {
				cfg.Logger.Debug("writing a scrape", "err", err)
				return
			}
		}
		if cfg.Rendered != nil {
			if err := cfg.Rendered.WriteText(out); err != nil {
				cfg.Logger.Debug("writing a scrape", "err", err)
			}
		}
	})
}

// gzipWriters are reused: a writer's state is about a megabyte.
var gzipWriters = sync.Pool{New: func() any {
	gz, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed) // the level is valid
	return gz
}}

// acceptsGzip reads an Accept-Encoding header (RFC 9110 12.5.3): gzip when
// listed with a quality above 0. "q" and "Q" are both the quality; "0",
// "0.", "0.0" up to "0.000" all refuse, and so does a malformed quality.
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(part, ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		for _, p := range strings.Split(params, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.EqualFold(strings.TrimSpace(k), "q") {
				q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				return err == nil && q > 0 && q <= 1
			}
		}
		return true
	}
	return false
}
