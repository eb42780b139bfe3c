//go:build e2e

package e2e

// What Prometheus evaluates and Alertmanager holds and notifies, read
// while an incident lasts.

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// promAlert is an alert as Prometheus's /api/v1/alerts reports it.
type promAlert struct {
	Labels   map[string]string `json:"labels"`
	State    string            `json:"state"`
	ActiveAt time.Time         `json:"activeAt"`
}

func promAlerts(promURL string) ([]promAlert, error) {
	var data struct {
		Alerts []promAlert `json:"alerts"`
	}
	err := promGet(promURL, "/api/v1/alerts", nil, &data)
	return data.Alerts, err
}

// waitState waits until Prometheus evaluates the alert key in state.
func waitState(t *testing.T, promURL, key, state string) promAlert {
	t.Helper()
	var found promAlert
	poll(t, 2*time.Minute, key+" is not "+state+" in Prometheus", func() string {
		as, err := promAlerts(promURL)
		if err != nil {
			return err.Error()
		}
		for _, a := range as {
			if alertKey(a.Labels) == key {
				if found = a; a.State == state {
					return ""
				}
				return key + " is " + a.State
			}
		}
		return key + " is not active"
	})
	return found
}

// alertState is the state Prometheus evaluates the alert key in, "" when
// it is not active.
func alertState(t *testing.T, promURL, key string) string {
	t.Helper()
	as, err := promAlerts(promURL)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		if alertKey(a.Labels) == key {
			return a.State
		}
	}
	return ""
}

// pageWatch polls Alertmanager and Prometheus while an incident lasts and
// notes what must never happen: an alert it holds no longer active in
// Alertmanager (resolved, so paged again when it fires), or one problem
// as several alerts (a replica's labels in the alert).
type pageWatch struct {
	mu         sync.Mutex
	held       map[string]bool
	only       bool // Alertmanager may hold nothing but the held alerts
	violations []string
	cancel     context.CancelFunc
	done       chan struct{}
}

// holdOnly is hold, and from now on Alertmanager must hold no other
// alert: one with other labels is another page.
func (w *pageWatch) holdOnly(keys ...string) {
	w.hold(keys...)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.only = true
}

// targetLabels are what a scrape target adds to every series; an alert
// carrying one is an alert per replica.
var targetLabels = []string{"pod", "instance", "endpoint", "service", "container", "job"}

func watchPages(t *testing.T, promURL, amURL string, held ...string) *pageWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &pageWatch{held: map[string]bool{}, cancel: cancel, done: make(chan struct{})}
	w.hold(held...)
	t.Cleanup(func() { w.stop() })
	go func() {
		defer close(w.done)
		for ctx.Err() == nil {
			w.check(ctx, promURL, amURL)
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	return w
}

func (w *pageWatch) hold(keys ...string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range keys {
		w.held[k] = true
	}
}

func (w *pageWatch) check(ctx context.Context, promURL, amURL string) {
	now := time.Now().Format(time.TimeOnly)
	var found []string
	if as, err := amAlerts(ctx, amURL, ""); err == nil {
		for _, a := range as {
			found = append(found, alertKey(a.Labels))
		}
		w.mu.Lock()
		for k := range w.held {
			if !slices.Contains(found, k) {
				w.violations = append(w.violations, now+": Alertmanager holds no "+k+": resolved, and it pages again when it fires")
			}
		}
		for _, k := range found {
			if w.only && !w.held[k] {
				w.violations = append(w.violations, now+": Alertmanager holds "+k+" besides the incident's page")
			}
		}
		w.mu.Unlock()
	}
	// Prometheus does not answer while it restarts.
	if as, err := promAlerts(promURL); err == nil {
		for _, a := range as {
			for _, l := range targetLabels {
				if _, ok := a.Labels[l]; ok {
					w.mu.Lock()
					w.violations = append(w.violations, fmt.Sprintf("%s: %s carries the target label %s: one alert per replica", now, alertKey(a.Labels), l))
					w.mu.Unlock()
				}
			}
		}
	}
}

// stop ends the watch and returns what it saw, each kind of violation
// once with the time it was first seen.
func (w *pageWatch) stop() []string {
	w.cancel()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	for _, v := range w.violations {
		_, what, _ := strings.Cut(v, ": ")
		if !seen[what] {
			seen[what] = true
			out = append(out, v)
		}
	}
	return out
}

// waitPaged waits until the webhook was notified of key firing.
func waitPaged(t *testing.T, p *paging, key string, timeout time.Duration) {
	t.Helper()
	poll(t, timeout, "no page for "+key, func() string {
		for _, n := range p.snapshot() {
			for _, a := range n.Alerts {
				if alertKey(a.Labels) == key && a.Status == "firing" {
					return ""
				}
			}
		}
		return "not notified yet"
	})
}

// waitResolved waits until the last notification of each key says
// resolved.
func waitResolved(t *testing.T, p *paging, keys []string) {
	t.Helper()
	poll(t, 2*time.Minute, "the pages do not resolve after the fix", func() string {
		last := map[string]string{}
		for _, n := range p.snapshot() {
			for _, a := range n.Alerts {
				last[alertKey(a.Labels)] = a.Status
			}
		}
		var open []string
		for _, k := range keys {
			if last[k] != "resolved" {
				open = append(open, fmt.Sprintf("%s: last notified %q", k, last[k]))
			}
		}
		return strings.Join(open, "\n")
	})
}

// checkPages counts the pages as the receiver saw them: one notification
// group, only the keys' alerts, each paged once (never firing again after
// a resolved).
func checkPages(t *testing.T, p *paging, keys []string) {
	t.Helper()
	ns := p.snapshot()
	groups := map[string]bool{}
	status := map[string]string{}
	paged := map[string]int{}
	var log strings.Builder
	for _, n := range ns {
		groups[n.GroupKey] = true
		fmt.Fprintf(&log, "  %s %s %s\n", n.at.Format(time.TimeOnly), n.Receiver, n.Status)
		for _, a := range n.Alerts {
			k := alertKey(a.Labels)
			fmt.Fprintf(&log, "    %s %s\n", a.Status, seriesKey("ALERTS", a.Labels))
			if !slices.Contains(keys, k) {
				t.Errorf("%s paged: not the incident's", seriesKey("ALERTS", a.Labels))
			}
			if a.Status == "firing" && status[k] != "firing" {
				paged[k]++
			}
			status[k] = a.Status
		}
	}
	t.Logf("%d notification(s):\n%s", len(ns), log.String())
	if len(groups) != 1 {
		t.Errorf("the incident notified %d groups, want 1", len(groups))
	}
	for _, k := range keys {
		if paged[k] != 1 {
			t.Errorf("%s paged %d times, want once", k, paged[k])
		}
	}
	if got := slices.Sorted(maps.Keys(paged)); len(got) != len(keys) {
		t.Errorf("paged %v, want %v", got, keys)
	}
}
