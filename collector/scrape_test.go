package collector

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync"
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
// scrape, holding every change; no render is made between scrapes. In a
// synctest bubble, so each check follows the ticks that came before it.
func TestRendersJustBeforeTheExpectedScrape(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const interval = 100 * time.Millisecond
		src := &changing{view: view{cluster: &analysis.Cluster{}}}
		r := renderedBy(t, src, interval)
		start := time.Now()
		at := func(d time.Duration) {
			time.Sleep(time.Until(start.Add(d)))
			synctest.Wait()
		}
		at(time.Second)
		r.Scrape("prometheus-0")
		at(4 * time.Second)
		r.Scrape("prometheus-0") // next due at 7 s
		at(4500 * time.Millisecond)
		src.available.Store(true)
		src.gen.Add(1)
		at(6900 * time.Millisecond)
		if n := r.Renders(); n != 1 {
			t.Fatalf("%d renders 100 ms before the scrape due, want the first alone", n)
		}
		at(6975 * time.Millisecond) // past the tick at 6.95 s
		if n := r.Renders(); n != 2 {
			t.Fatalf("%d renders 25 ms before the scrape due, want 2", n)
		}
		at(7 * time.Second)
		text, n := r.Scrape("prometheus-0")
		if n != 2 {
			t.Fatalf("the scrape due served render %d, want the one made for it (2)", n)
		}
		sameAsGather(t, src, text)
		if v := resourceAvailable(t, r.Latest); v != 1 {
			t.Fatalf("resource_available = %v, want 1", v)
		}
	})
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
