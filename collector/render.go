package collector

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Renderer keeps the OCL metrics rendered ahead of scrapes, like
// kube-state-metrics renders on events rather than on scrapes: building,
// checking and sorting tens of thousands of series costs far more than
// encoding them, and a cluster changes much less often than it is scraped.
// The text is encoded once per render too, so a scrape only copies bytes.
// It re-renders at most once per interval, and only when the source's
// generation moved, so the metrics lag the cluster by at most the interval.
type Renderer struct {
	collector *Collector
	// families are the collector's, by name: the exposition's order.
	families   []*Spec
	generation func() uint64
	ready      func() bool
	logger     *slog.Logger

	// latest is the latest render, encoded. The families it was encoded
	// from are not kept: they take several times its memory.
	latest atomic.Pointer[rendering]
	// readyRendered is set once a render began after the source was ready:
	// from then on scrapes see a complete view.
	readyRendered atomic.Bool
	// failure is the error of the last render, nil after a good one.
	failure atomic.Pointer[string]
	// logged and loggedAt remember the last failure logged, textSize the
	// length of the last render (the next one's buffer starts there rather
	// than doubling up to it), renders counts them; only Run's goroutine
	// renders, so they need no lock.
	logged   string
	loggedAt time.Time
	textSize int
	renders  uint64
}

// rendering is one render's text and its number, from 1.
type rendering struct {
	text   []byte
	number uint64
}

// Bounds on the log of a failing render: it is retried every interval, and
// an error naming every duplicate series runs to kilobytes.
const (
	failureLogBytes = 512
	failureLogEvery = 10 * time.Minute
)

// GenerationSource is a Source that says when its view changed.
type GenerationSource interface {
	Source
	Generation() uint64
	Ready() bool
}

// NewRenderer renders c, reading src's generation and readiness. A
// registry checks c's descriptors once (names, labels, no name twice);
// renders do without one.
func NewRenderer(c *Collector, src GenerationSource, logger *slog.Logger) (*Renderer, error) {
	if err := prometheus.NewPedanticRegistry().Register(c); err != nil {
		return nil, fmt.Errorf("registering the OCL collector: %w", err)
	}
	families := c.Specs()
	slices.SortFunc(families, func(a, b *Spec) int { return strings.Compare(a.Name, b.Name) })
	return &Renderer{collector: c, families: families, generation: src.Generation, ready: src.Ready, logger: logger}, nil
}

// Run renders now and then every interval while the generation moves,
// until ctx ends. It also renders as soon as the source becomes ready, so
// /readyz turns ready then, not up to an interval later (20 s with
// --collector.render-interval=20s).
func (r *Renderer) Run(ctx context.Context, interval time.Duration) {
	rendered := r.render()
	t := time.NewTicker(interval)
	defer t.Stop()
	untilReady := time.NewTicker(min(interval, readyPoll))
	defer untilReady.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-untilReady.C:
			if r.ready() {
				untilReady.Stop() // once: its channel never fires again
				if !r.readyRendered.Load() {
					rendered = r.render()
				}
			}
		case <-t.C:
			if g := r.generation(); g != rendered || !r.readyRendered.Load() {
				rendered = r.render()
			}
		}
	}
}

// readyPoll is how often Run looks whether the source became ready.
const readyPoll = 50 * time.Millisecond

// render encodes the collector's samples and returns the generation it
// started from. A failed render keeps the last one.
func (r *Renderer) render() uint64 {
	gen, ready := r.generation(), r.ready()
	text, err := r.encode()
	if err != nil {
		r.fail(err)
		return gen
	}
	r.failure.Store(nil)
	r.renders++
	r.latest.Store(&rendering{text: text, number: r.renders})
	if ready {
		r.readyRendered.Store(true)
	}
	return gen
}

// fail keeps the error for Failure and logs it, cut to failureLogBytes,
// when it differs from the last one logged or that was failureLogEvery ago.
func (r *Renderer) fail(err error) {
	msg := err.Error()
	r.failure.Store(&msg)
	if msg == r.logged && time.Since(r.loggedAt) < failureLogEvery {
		return
	}
	r.logged, r.loggedAt = msg, time.Now()
	if len(msg) > failureLogBytes {
		msg = fmt.Sprintf("%s... (%d more bytes)", strings.ToValidUTF8(msg[:failureLogBytes], ""), len(msg)-failureLogBytes)
	}
	r.logger.Error("rendering the OCL metrics failed; serving the previous render until it succeeds", "err", msg)
}

// Failure is the error of the last render, empty after a good one.
func (r *Renderer) Failure() string {
	if msg := r.failure.Load(); msg != nil {
		return *msg
	}
	return ""
}

// Latest is the latest render in the text exposition format, as it was
// encoded when rendered, and its number: a scrape copies bytes, and a
// server may keep what it derives from them (their gzip form) until the
// number moves. Before the first render the text is empty and the number
// 0.
func (r *Renderer) Latest() (text []byte, render uint64) {
	if l := r.latest.Load(); l != nil {
		return l.text, l.number
	}
	return nil, 0
}

// Renders counts the renders that succeeded, the latest's number.
func (r *Renderer) Renders() uint64 {
	_, n := r.Latest()
	return n
}

// Ready is true once the render reflects a source that was ready.
func (r *Renderer) Ready() bool { return r.readyRendered.Load() }
