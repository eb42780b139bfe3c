package collector

import (
	"fmt"
	"testing"
	"time"
)

// TestScrapeClock: each scraper's next scrape is its last plus the gap
// before it, the replicas of a pair apart; a scraper seen once predicts
// nothing, nor one whose expected scrape has passed; beyond maxScrapers
// the least recent is forgotten.
func TestScrapeClock(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	at := t0.Add
	var c scrapeClock
	c.scraped("10.0.0.1", at(0))
	if next, ok := c.next(at(0)); ok {
		t.Errorf("a scrape expected at %v after a single scrape", next.Sub(t0))
	}
	c.scraped("10.0.0.1", at(30*time.Second)) // next at 60 s
	c.scraped("10.0.0.2", at(10*time.Second))
	c.scraped("10.0.0.2", at(40*time.Second)) // next at 70 s
	for _, tc := range []struct {
		after, next time.Duration // next 0: none
	}{
		{40 * time.Second, 60 * time.Second},
		{59999 * time.Millisecond, 60 * time.Second},
		{60 * time.Second, 70 * time.Second}, // the first passed
		{69 * time.Second, 70 * time.Second},
		{70 * time.Second, 0},
		{time.Hour, 0},
	} {
		next, ok := c.next(at(tc.after))
		if got := next.Sub(t0); ok != (tc.next != 0) || ok && got != tc.next {
			t.Errorf("next after %v = %v (%v), want %v", tc.after, got, ok, tc.next)
		}
	}
	for i := range maxScrapers - 1 {
		c.scraped(fmt.Sprint("10.0.1.", i), at(100*time.Second))
	}
	if _, ok := c.scrapers["10.0.0.1"]; ok || len(c.scrapers) != maxScrapers {
		t.Errorf("%d scrapers kept, the least recent among them: %v", len(c.scrapers), ok)
	}
	if _, ok := c.scrapers["10.0.0.2"]; !ok {
		t.Error("a more recent scraper forgotten before the least recent")
	}
}
