package collector

import (
	"fmt"
	"testing"
	"time"
)

// TestScrapeClock: each scraper's next scrape is its last plus the gap
// before it, the replicas of a pair apart; a scraper seen once predicts
// nothing; beyond maxScrapers the least recent is forgotten.
func TestScrapeClock(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	at := t0.Add
	var c scrapeClock
	c.scraped("10.0.0.1", at(0))
	if c.due(at(30*time.Second), time.Second) {
		t.Error("due after a single scrape")
	}
	c.scraped("10.0.0.1", at(30*time.Second)) // next at 60 s
	c.scraped("10.0.0.2", at(10*time.Second))
	c.scraped("10.0.0.2", at(40*time.Second)) // next at 70 s
	for _, tc := range []struct {
		at  time.Duration
		due bool
	}{
		{50 * time.Second, false},
		{58 * time.Second, false},
		{59500 * time.Millisecond, true},
		{60 * time.Second, true},
		{60500 * time.Millisecond, true}, // late by half a window
		{61 * time.Second, false},
		{65 * time.Second, false},
		{69 * time.Second, true},
		{71500 * time.Millisecond, false},
	} {
		if got := c.due(at(tc.at), time.Second); got != tc.due {
			t.Errorf("due at %v = %v, want %v", tc.at, got, tc.due)
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
