package server

import (
	"log/slog"
	"net/http"
	"time"
)

// Timeouts of the HTTP server. Without them an idle keep-alive connection
// lives for ever (5,000 of them took 5,000 goroutines and file
// descriptors), and a client that asks for /metrics and never reads holds
// a --web.max-requests slot for as long as it likes.
type Timeouts struct {
	// ReadHeader bounds reading a request's headers (slowloris).
	ReadHeader time.Duration
	// Read bounds reading a whole request; the exporter takes no bodies.
	Read time.Duration
	// Write bounds a request from the end of its headers to the last byte
	// of the answer: the per-request deadline that frees a scrape slot
	// from a client that stopped reading. A scrape of a 5,000-node cluster
	// is a few MB, sent in well under a second; a minute leaves room for a
	// slow link and Prometheus' own scrape_timeout (at most the interval).
	Write time.Duration
	// Idle bounds a keep-alive connection between requests. Prometheus
	// scrapes at most every few minutes and reconnects cheaply.
	Idle time.Duration
}

// DefaultTimeouts are the exporter's: see Timeouts for why each.
var DefaultTimeouts = Timeouts{
	ReadHeader: 10 * time.Second,
	Read:       30 * time.Second,
	Write:      time.Minute,
	Idle:       2 * time.Minute,
}

// NewHTTPServer is the server for exporter-toolkit's web.ListenAndServe.
// Its own error lines (accept errors, TLS handshakes, panics in a
// handler) go through logger, so they follow --log.format and
// --log.level like every other line.
func NewHTTPServer(h http.Handler, t Timeouts, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ErrorLog:          slog.NewLogLogger(logger.With("component", "net/http").Handler(), slog.LevelError),
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       t.Read,
		WriteTimeout:      t.Write,
		IdleTimeout:       t.Idle,
		MaxHeaderBytes:    64 << 10, // a bearer token is a few KB at most
	}
}
