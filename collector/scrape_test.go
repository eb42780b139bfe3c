package collector

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ocl-exporter/ocl_exporter/analysis"
)

// renderedBy runs a Renderer of src at interval in the bubble until the
// test ends.
func renderedBy(t *testing.T, src GenerationSource, interval time.Duration) *Renderer {
	t.Helper()
	r, err := NewRenderer(New(src, DefaultOptions), src, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go r.Run(ctx, interval)
	synctest.Wait()
	return r
}

// sameAsGather fails unless text is what a registry's Gather of src gives.
func sameAsGather(t *testing.T, src Source, text []byte) {
	t.Helper()
	if want := exposition(t, New(src, DefaultOptions)); !bytes.Equal(text, want) {
		t.Fatalf("the render differs from Gather's text:\n%s", firstDifference(text, want))
	}
}

// TestRendersJustBeforeTheExpectedScrape: a scraper every 3 s (the hour
// of make bench-churn, played ten times faster, with a render interval
// of 100 ms) gets a render made once, half an interval at most before its
// scrape and before it arrives, holding every change; no render is made
// between scrapes. In a synctest bubble, so each check follows the
// timers that came before it.
func TestRendersJustBeforeTheExpectedScrape(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const interval = 100 * time.Millisecond
		src := &changing{view: view{cluster: &analysis.Cluster{}}}
		r := renderedBy(t, src, interval)
		at := clockOf(time.Now())
		at(time.Second)
		r.Scrape("prometheus-0")
		at(4 * time.Second)
		r.Scrape("prometheus-0") // next due at 7 s
		at(4500 * time.Millisecond)
		src.available.Store(true)
		src.gen.Add(1)
		at(7*time.Second - interval/2 - time.Nanosecond)
		if n := r.Renders(); n != 1 {
			t.Fatalf("%d renders more than half an interval before the scrape due, want the first alone", n)
		}
		at(7 * time.Second)
		if n := r.Renders(); n != 2 {
			t.Fatalf("%d renders when the scrape is due, want 2", n)
		}
		text, n := r.Scrape("prometheus-0")
		if n != 2 || r.Renders() != 2 {
			t.Fatalf("the scrape due served render %d of %d, want the one made for it (2)", n, r.Renders())
		}
		sameAsGather(t, src, text)
		if v := resourceAvailable(t, r.Latest); v != 1 {
			t.Fatalf("resource_available = %v, want 1", v)
		}
	})
}

// clockOf sleeps in a synctest bubble until d after start, then until
// every goroutine of the bubble is blocked: what the timers due by then
// do is done.
func clockOf(start time.Time) func(d time.Duration) {
	return func(d time.Duration) {
		time.Sleep(time.Until(start.Add(d)))
		synctest.Wait()
	}
}

// looked counts the reads of a view's generation: whatever wakes the
// renderer reads it, to know whether anything changed.
type looked struct {
	changing
	reads atomic.Int64
}

func (l *looked) Generation() uint64 {
	l.reads.Add(1)
	return l.changing.Generation()
}

// TestRendererSleepsWhileNothingIsDue: over hours on the bubble's clock,
// at the default interval (1 s), the renderer neither renders nor wakes
// while nobody scrapes, whether the cluster changes or not; scraped every
// 30 s while nothing changes, it renders nothing and looks at the cluster
// once for each expected scrape, beside the scrape's own look. A ticker
// of the interval would look 7,200 times an hour.
func TestRendererSleepsWhileNothingIsDue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const hours = 2
		src := &looked{changing: changing{view: view{cluster: &analysis.Cluster{}}}}
		r := renderedBy(t, src, time.Second)
		asleep := func(what string) {
			t.Helper()
			time.Sleep(time.Minute) // past the start, or the last expected scrape
			synctest.Wait()
			reads, renders := src.reads.Load(), r.Renders()
			for range hours * 60 {
				if what == "changing" {
					src.gen.Add(1)
				}
				time.Sleep(time.Minute)
				synctest.Wait()
			}
			if n := src.reads.Load() - reads; n != 0 || r.Renders() != renders {
				t.Errorf("%s, nobody scraping, for %d h: %d renders and %d looks at the cluster, want none", what, hours, r.Renders()-renders, n)
			}
		}
		asleep("idle")

		reads := src.reads.Load()
		const scrapes = hours * 120
		for range scrapes {
			r.Scrape("prometheus-0")
			time.Sleep(30 * time.Second)
			synctest.Wait()
		}
		if n := src.reads.Load() - reads; n > 2*scrapes || r.Renders() != 1 {
			t.Errorf("idle, scraped every 30 s for %d h: %d renders, %d looks at the cluster, want 1 and at most %d", hours, r.Renders(), n, 2*scrapes)
		}

		asleep("changing")
		if _, n := r.Scrape("prometheus-0"); n != 2 {
			t.Errorf("the scrape after the changes served render %d, want a new one (2)", n)
		}
	})
}

// slowing is a view whose renders take as long as told, on the bubble's
// clock.
type slowing struct {
	changing
	delay atomic.Int64
}

func (s *slowing) Cluster(now time.Time) *analysis.Cluster {
	time.Sleep(time.Duration(s.delay.Load()))
	return s.changing.Cluster(now)
}

// TestSlowRenderEndsBeforeTheScrape: renders grow slower (40 ms with a
// half interval of 100 ms, as at 10,000 nodes in make bench-churn played
// five times faster on a loaded machine); once one was, the render for
// each expected scrape begins early enough to be done when the scrape
// comes, which only copies it, at once. A render begun a fixed time
// before the scrape would still be under way. (A scrape that waits for a
// render here would hang the bubble: a goroutine blocked on a mutex does
// not let its clock move, so the test fails first.)
func TestSlowRenderEndsBeforeTheScrape(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const interval, slow = 200 * time.Millisecond, 40 * time.Millisecond
		src := &slowing{changing: changing{view: view{cluster: &analysis.Cluster{}}}}
		r := renderedBy(t, src, interval)
		at := clockOf(time.Now())
		const offset = 20 * time.Millisecond // scrapes fall between the interval's multiples
		at(time.Second + offset)
		r.Scrape("prometheus-0")
		at(4*time.Second + offset)
		r.Scrape("prometheus-0") // next due at 7.02 s
		src.delay.Store(int64(slow))
		src.gen.Add(1)
		at(5 * time.Second)
		if took := scrapeTook(r, "curl"); took != slow {
			t.Fatalf("a scrape that renders took %v, want %v", took, slow)
		}
		for _, due := range []time.Duration{7, 10, 13} {
			due = due*time.Second + offset
			at(due - time.Second)
			src.gen.Add(1)
			want := r.Renders() + 1
			at(due)
			if n := r.Renders(); n != want {
				t.Fatalf("%d renders when the scrape at %v is due, want %d: the render for it is not done", n, due, want)
			}
			if took := scrapeTook(r, "prometheus-0"); took != 0 || r.Renders() != want {
				t.Errorf("the scrape at %v took %v, %d renders, want the render made before it copied at once", due, took, r.Renders())
			}
		}
	})
}

// scrapeTook is how long a scrape by client takes on the bubble's clock.
func scrapeTook(r *Renderer, client string) time.Duration {
	began := time.Now()
	r.Scrape(client)
	return time.Since(began)
}

// TestScrapeLagsByAtMostTheInterval: with nothing due, a scrape serves the
// latest render while it began less than an interval ago, and renders once
// it is older and the cluster changed since: the bound of
// --collector.render-interval, on either side of it.
func TestScrapeLagsByAtMostTheInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const interval = time.Hour
		src := &changing{view: view{cluster: &analysis.Cluster{}}}
		r := renderedBy(t, src, interval)
		first := exposition(t, New(src, DefaultOptions))
		began := time.Now()
		src.available.Store(true)
		src.gen.Add(1)
		time.Sleep(interval)
		synctest.Wait()
		if text, n := r.Scrape("curl"); n != 1 || !bytes.Equal(text, first) {
			t.Fatalf("an interval after the render, the scrape served render %d, want the first, unchanged", n)
		}
		time.Sleep(time.Nanosecond)
		text, n := r.Scrape("curl")
		if n != 2 {
			t.Fatalf("%v after a render that missed a change, the scrape served render %d, want a new one", time.Since(began), n)
		}
		sameAsGather(t, src, text)
		time.Sleep(2 * interval)
		if _, n := r.Scrape("curl"); n != 2 {
			t.Fatalf("with nothing changed, the scrape served render %d, want 2", n)
		}
	})
}

// TestScrapesRaceRenders: scrapers and the renderer at once while the
// cluster changes, under -race: every scrape is byte for byte one of the
// views' expositions, numbers never go back, and a scrape begun an
// interval after the last change serves it.
func TestScrapesRaceRenders(t *testing.T) {
	const interval = time.Millisecond
	src := &changing{view: view{cluster: &analysis.Cluster{}}}
	want := map[bool][]byte{}
	for _, available := range []bool{false, true} {
		src.available.Store(available)
		want[available] = exposition(t, New(src, DefaultOptions))
	}
	src.available.Store(false)
	r, err := NewRenderer(New(src, DefaultOptions), src, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go r.Run(ctx, interval)
	var wg sync.WaitGroup
	done := make(chan struct{})
	for i := range 8 {
		wg.Go(func() {
			var last uint64
			for {
				select {
				case <-done:
					return
				default:
				}
				text, n := r.Scrape(fmt.Sprint("scraper-", i%3))
				if n < last {
					t.Errorf("render %d after %d", n, last)
				}
				if n > 0 && !bytes.Equal(text, want[false]) && !bytes.Equal(text, want[true]) {
					t.Errorf("render %d is neither view's exposition:\n%s", n, firstDifference(text, want[true]))
				}
				last = n
			}
		})
	}
	for i := range 200 {
		src.available.Store(i%2 == 0)
		src.gen.Add(1)
		if i%20 == 0 {
			time.Sleep(interval)
		}
	}
	close(done)
	wg.Wait()
	time.Sleep(interval + time.Millisecond) // past the bound: the scrape must render
	text, _ := r.Scrape("last")
	if !bytes.Equal(text, want[false]) {
		t.Fatalf("an interval after the last change, the scrape serves:\n%s", firstDifference(text, want[false]))
	}
}
