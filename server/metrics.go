package server

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"net/http"
	"strconv"
	"sync"

	"github.com/prometheus/common/expfmt"

	"github.com/ocl-exporter/ocl_exporter/selfmetrics"
)

// Prerendered is exposition text encoded ahead of scrapes (see
// collector.Renderer): the bulk of a scrape, copied rather than built.
type Prerendered interface {
	// Scrape is the render a scrape by client (its address) serves and
	// its number, which grows with every render: the same number is the
	// same text, which is never modified.
	Scrape(client string) (text []byte, render uint64)
}

// textFormat is the only format served: every Prometheus reads it, and
// the pre-rendered text is in it.
var textFormat = expfmt.NewFormat(expfmt.TypeTextPlain)

// metrics serves the exposition in three parts: the pre-rendered text,
// the registry (the exporter's own counters, gathered again only when
// they changed), and the metrics that change with every scrape (the
// runtime's, the process's, the scrapes'), written for each without a
// registry. It replaces promhttp's handler, which gathered, checked and
// re-encoded all of it and compressed the whole on every scrape: here a
// scrape costs about what writing its bytes does (gzip.go).
//
// Until the view is complete (cfg.Readiness) a scrape fails with 503:
// Prometheus scrapes a pod before it is ready (its discovery keeps
// not-ready endpoints as targets), and a restarted exporter's first
// seconds, before its first lists, would read as every problem fixed:
// firing alerts would resolve, and page again once the view is whole. A
// failed scrape is a gap instead (up is 0), as while the pod was away.
type metrics struct {
	cfg      Config
	inflight chan struct{}
	scrapes  selfmetrics.Scrapes
	// perScrape appends the metrics that change with every scrape.
	perScrape func([]byte) []byte
	render    partCache
	registry  partCache
}

func metricsHandler(cfg Config) *metrics {
	m := &metrics{cfg: cfg}
	self := selfmetrics.NewWriter()
	m.perScrape = func(b []byte) []byte { return m.scrapes.Append(self.Append(b)) }
	if cfg.MaxRequests > 0 {
		m.inflight = make(chan struct{}, cfg.MaxRequests)
	}
	return m
}

func (m *metrics) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.scrapes.Begin()
	code := http.StatusOK
	defer func() { m.scrapes.End(code) }()
	if m.cfg.Readiness != nil && !m.cfg.Readiness.Ready() {
		code = http.StatusServiceUnavailable
		http.Error(w, "not ready: the exporter has not read every watched resource yet (/readyz says which)", code)
		return
	}
	if m.inflight != nil {
		select {
		case m.inflight <- struct{}{}:
			defer func() { <-m.inflight }()
		default:
			code = http.StatusServiceUnavailable
			http.Error(w, fmt.Sprintf("Limit of concurrent requests reached (%d), try again later.", m.cfg.MaxRequests), code)
			return
		}
	}
	b := scrapeBuffers.Get().(*scrapeBuffer)
	defer scrapeBuffers.Put(b)
	render, registry := m.renderPart(r), m.registryPart()
	b.perScrape = m.perScrape(b.perScrape[:0])
	b.out.Reset()
	h := w.Header()
	h.Set("Content-Type", string(textFormat))
	h.Set("Vary", "Accept-Encoding")
	var head []byte
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		var crc uint32
		head, crc = render.deflated()
		blocks, _ := registry.deflated()
		b.out.Write(blocks)
		appendLast(&b.out, b.perScrape, crc32.Update(crc, crc32.IEEETable, registry.text), len(render.text)+len(registry.text))
		h.Set("Content-Encoding", "gzip")
	} else {
		head = render.text
		b.out.Write(registry.text)
		b.out.Write(b.perScrape)
	}
	h.Set("Content-Length", strconv.Itoa(len(head)+b.out.Len()))
	for _, p := range [][]byte{head, b.out.Bytes()} {
		if _, err := w.Write(p); err != nil {
			m.cfg.Logger.Debug("writing a scrape", "err", err)
			return
		}
	}
}

// scrapeBuffer is a scrape's per-scrape metrics and what follows the
// render.
type scrapeBuffer struct {
	perScrape []byte
	out       bytes.Buffer
}

var scrapeBuffers = sync.Pool{New: func() any { return new(scrapeBuffer) }}

// renderPart is the render a scrape serves. Scrapers are told apart by
// host: the replicas of a Prometheus pair scrape from hosts of their own.
func (m *metrics) renderPart(r *http.Request) *part {
	var text []byte
	var number uint64
	if m.cfg.Rendered != nil {
		text, number = m.cfg.Rendered.Scrape(hostOf(r.RemoteAddr))
	}
	return m.render.get(number, true, func() []byte { return text })
}

// registryPart is the registry's text: kept while RegistryGeneration
// holds, read before gathering so that a change during the gather makes
// the next scrape gather again.
func (m *metrics) registryPart() *part {
	if m.cfg.RegistryGeneration == nil {
		return &part{text: m.gather()}
	}
	return m.registry.get(m.cfg.RegistryGeneration(), false, m.gather)
}

// gather encodes the registry's metrics. Like promhttp's
// ContinueOnError, a failing collector is logged and the rest served.
func (m *metrics) gather() []byte {
	if m.cfg.Registry == nil {
		return nil
	}
	families, err := m.cfg.Registry.Gather()
	if err != nil {
		m.cfg.Logger.Error("gathering the exporter's own metrics", "err", err)
	}
	var text bytes.Buffer
	enc := expfmt.NewEncoder(&text, textFormat)
	for _, mf := range families {
		n := text.Len()
		if err := enc.Encode(mf); err != nil {
			text.Truncate(n) // no half family
			m.cfg.Logger.Error("encoding the exporter's own metrics", "family", mf.GetName(), "err", err)
		}
	}
	return text.Bytes()
}
