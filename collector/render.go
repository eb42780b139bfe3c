package collector

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Renderer keeps the OCL metrics rendered ahead of scrapes, like
// kube-state-metrics renders on events rather than on scrapes: building,
// checking and sorting tens of thousands of series costs far more than
// encoding them, and a cluster changes much less often than it is scraped.
// The text is encoded once per render too, so a scrape only copies bytes.
// A render nobody reads is not made: while the cluster changes, it renders
// just before each scrape it expects (scrapeClock), on a timer set for it,
// and a scrape that finds the latest render older than the interval while
// the cluster changed since renders itself. So a scrape's metrics lag the
// cluster by at most the interval, a changing cluster costs a render per
// scrape, not one per interval, and nothing wakes the renderer while
// nobody scrapes (docs/performance.md, "Cost under churn").
type Renderer struct {
	collector *Collector
	// families are the collector's, by name: the exposition's order.
	families   []*Spec
	generation func() uint64
	ready      func() bool
	logger     *slog.Logger

	// interval bounds how far a scrape's metrics lag the cluster, set by
	// Run.
	interval atomic.Int64
	// latest is the latest render, encoded. The families it was encoded
	// from are not kept: they take several times its memory.
	latest atomic.Pointer[rendering]
	// tried is the start of the latest render done, failed or not: what a
	// scrape compares with the interval.
	tried atomic.Pointer[attempt]
	// scrapes predicts the next scrape.
	scrapes scrapeClock
	// renderTime is the slowest recent render, forgotten an eighth at each
	// render: what the lead before a predicted scrape covers.
	renderTime atomic.Int64
	// alarmMu guards alarm, the timer of the next predicted scrape's
	// render: set by Run, nil before and after it.
	alarmMu sync.Mutex
	alarm   *time.Timer
	// readyRendered is set once a render began after the source was ready:
	// from then on scrapes see a complete view.
	readyRendered atomic.Bool
	// failure is the error of the last render, nil after a good one.
	failure atomic.Pointer[string]
	// mu makes one render at a time, Run's or a scrape's, and guards the
	// rest: logged and loggedAt remember the last failure logged, textSize
	// the length of the last render (the next one's buffer starts there
	// rather than doubling up to it), renders counts them.
	mu       sync.Mutex
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

// attempt is when a render began, the generation it read then and
// whether the source was ready.
type attempt struct {
	started    time.Time
	generation uint64
	ready      bool
}

// Bounds on the log of a failing render: it is retried after each change, and
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

// Run renders now, then while the generation moves only for a scrape
// that would otherwise render itself, lead before it is expected, until
// ctx ends. It also renders as soon as the source becomes ready, and
// after a change at most once an interval until such a render succeeds,
// so /readyz turns ready then: until then /metrics answers 503, and no
// scrape renders.
func (r *Renderer) Run(ctx context.Context, interval time.Duration) {
	r.interval.Store(int64(interval))
	r.alarmMu.Lock()
	r.alarm = time.AfterFunc(time.Hour, r.due) // set or stopped by arm
	r.alarmMu.Unlock()
	defer func() {
		r.alarmMu.Lock()
		r.alarm.Stop()
		r.alarm = nil
		r.alarmMu.Unlock()
	}()
	r.renderNow()
	untilReady := time.NewTicker(min(interval, readyPoll))
	defer untilReady.Stop()
	for !r.readyRendered.Load() {
		select {
		case <-ctx.Done():
			return
		case <-untilReady.C:
			if r.ready() && (!r.fresh(time.Now()) || !r.tried.Load().ready) {
				r.renderNow()
			}
		}
	}
	untilReady.Stop()
	<-ctx.Done()
}

// Timing of the render before a predicted scrape.
const (
	// leadMargin is the timer's and the scrape's jitter, added to twice
	// the slowest recent render (a loaded machine slows a render as much).
	leadMargin = 10 * time.Millisecond
	// renderTimeMemory is how many renders the slowest is forgotten over:
	// an eighth of it at each.
	renderTimeMemory = 8
)

// lead is how long before a predicted scrape its render begins: enough
// to finish before the scrape, at most half the interval, so that a
// scrape up to half an interval late still finds the render fresh.
func (r *Renderer) lead() time.Duration {
	return min(2*time.Duration(r.renderTime.Load())+leadMargin, time.Duration(r.interval.Load())/2)
}

// arm sets the alarm for the render before the next scrape expected a
// lead or more from now, or stops it when none is: after a scrape (the
// prediction moved), after a render (so did the lead) and after the alarm
// itself. Nothing wakes the renderer while nobody scrapes.
func (r *Renderer) arm() {
	r.alarmMu.Lock()
	defer r.alarmMu.Unlock()
	if r.alarm == nil {
		return
	}
	now, lead := time.Now(), r.lead()
	if next, ok := r.scrapes.next(now.Add(lead)); ok {
		r.alarm.Reset(next.Sub(now) - lead)
	} else {
		r.alarm.Stop()
	}
}

// due renders, lead before an expected scrape, what that scrape would
// otherwise render itself.
func (r *Renderer) due() {
	r.mu.Lock()
	if !r.fresh(time.Now().Add(r.lead())) {
		r.render()
	}
	r.mu.Unlock()
	r.arm()
}

// Scrape is the render a scrape by client serves: the latest, unless it
// began more than the interval ago and the cluster changed since, when
// the scrape renders (or waits for the render under way). Scrapes also
// teach the renderer when to render next.
func (r *Renderer) Scrape(client string) (text []byte, render uint64) {
	now := time.Now()
	r.scrapes.scraped(client, now)
	if !r.fresh(now) {
		r.mu.Lock()
		if !r.fresh(now) { // a render that was under way may do
			r.render()
		}
		r.mu.Unlock()
	}
	r.arm()
	return r.Latest()
}

// fresh says whether the latest render holds every change older than the
// interval at now.
func (r *Renderer) fresh(now time.Time) bool {
	a := r.tried.Load()
	return a != nil && (now.Sub(a.started) <= time.Duration(r.interval.Load()) || a.generation == r.generation())
}

// renderNow renders, waiting for a scrape's render under way, and sets
// the alarm for the lead that render measured.
func (r *Renderer) renderNow() {
	r.mu.Lock()
	r.render()
	r.mu.Unlock()
	r.arm()
}

// readyPoll is how often Run looks whether the source became ready.
const readyPoll = 50 * time.Millisecond

// render encodes the collector's samples, with mu held. A failed render
// keeps the last one.
func (r *Renderer) render() {
	tried := &attempt{started: time.Now(), generation: r.generation(), ready: r.ready()}
	// Stored once done, after the render: a scrape that finds it fresh
	// finds its text in latest.
	defer r.tried.Store(tried)
	defer r.timed(tried.started)
	text, err := r.encode()
	if err != nil {
		r.fail(err)
		return
	}
	r.failure.Store(nil)
	r.renders++
	r.latest.Store(&rendering{text: text, number: r.renders})
	if tried.ready {
		r.readyRendered.Store(true)
	}
}

// timed keeps the slowest recent render's duration, a render begun at
// started having ended.
func (r *Renderer) timed(started time.Time) {
	slowest := time.Duration(r.renderTime.Load())
	r.renderTime.Store(int64(max(time.Since(started), slowest-slowest/renderTimeMemory)))
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
// 0. Unlike Scrape, it never renders.
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
