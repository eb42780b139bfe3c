package collector

import (
	"sync"
	"time"
)

// scrapeClock predicts when the next scrape comes, so that a cluster that
// changes is rendered once before each scrape rather than once per render
// interval: Prometheus scrapes a target at a fixed offset within its
// interval, so each scraper's next scrape is its last plus the gap before
// it. Scrapers are told apart by their address (the replicas of an HA
// pair, a second Prometheus), at most maxScrapers of them; a prediction
// that fails costs the scrape a render of its own, never staler metrics.
type scrapeClock struct {
	mu       sync.Mutex
	scrapers map[string]*scraper
}

// scraper is one client's last scrape and the gap before it.
type scraper struct {
	last time.Time
	gap  time.Duration
}

// maxScrapers bounds the clients remembered: a new one beyond it replaces
// the one that scraped least recently.
const maxScrapers = 16

// scraped notes a scrape by client at now.
func (c *scrapeClock) scraped(client string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.scrapers[client]; ok {
		s.gap, s.last = now.Sub(s.last), now
		return
	}
	if c.scrapers == nil {
		c.scrapers = make(map[string]*scraper, maxScrapers)
	}
	if len(c.scrapers) >= maxScrapers {
		var oldest string
		for name, s := range c.scrapers {
			if oldest == "" || s.last.Before(c.scrapers[oldest].last) {
				oldest = name
			}
		}
		delete(c.scrapers, oldest)
	}
	c.scrapers[client] = &scraper{last: now}
}

// next is the earliest scrape expected after t, if any: a scraper seen
// once, or whose expected scrape is not after t, predicts nothing more
// until it scrapes again.
func (c *scrapeClock) next(t time.Time) (next time.Time, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.scrapers {
		if s.gap <= 0 {
			continue
		}
		if at := s.last.Add(s.gap); at.After(t) && (!ok || at.Before(next)) {
			next, ok = at, true
		}
	}
	return next, ok
}
