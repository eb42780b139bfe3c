package server

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ocl-exporter/ocl_exporter/diagnose"
)

func statusReportOf(pools int) *diagnose.Report {
	r := &diagnose.Report{Time: time.Date(2025, 10, 17, 12, 0, 0, 0, time.UTC), Verdict: diagnose.Problem, Summary: "s"}
	for i := range pools {
		v := diagnose.Healthy
		if i%100 == 7 {
			v = diagnose.Problem
		}
		r.Pools = append(r.Pools, diagnose.Pool{Name: fmt.Sprintf("pool-%05d", i), Verdict: v, Summary: "not layered"})
	}
	return r
}

// TestStatusRendersOncePerView: many readers of an unchanged view cost
// one render; a change of the view renders again.
func TestStatusRendersOncePerView(t *testing.T) {
	var renders atomic.Int64
	var gen atomic.Uint64
	h := statusPage(func() *diagnose.Report { renders.Add(1); return statusReportOf(3) }, gen.Load, slog.New(slog.DiscardHandler))
	get := func() int {
		rec := httptest.NewRecorder()
		h(rec, httptest.NewRequest(http.MethodGet, StatusPath, nil))
		return rec.Code
	}
	var wg sync.WaitGroup
	for range statusReaders {
		wg.Go(func() {
			for range 5 {
				if code := get(); code != http.StatusOK && code != http.StatusServiceUnavailable {
					t.Errorf("status %d", code)
				}
			}
		})
	}
	wg.Wait()
	if n := renders.Load(); n != 1 {
		t.Errorf("%d renders of one view, want 1", n)
	}
	gen.Add(1)
	if get(); renders.Load() != 2 {
		t.Errorf("a changed view was not rendered again")
	}
}

// TestStatusIsBounded: past statusReaders requests in the handler, the
// page answers 503 at once instead of queueing renders beside the
// scrape.
func TestStatusIsBounded(t *testing.T) {
	release := make(chan struct{})
	var gen atomic.Uint64
	h := statusPage(func() *diagnose.Report { <-release; return statusReportOf(1) }, gen.Load, slog.New(slog.DiscardHandler))
	srv := httptest.NewServer(h)
	defer srv.Close()

	codes := make(chan int, 3*statusReaders)
	var wg sync.WaitGroup
	for range 3 * statusReaders {
		wg.Go(func() {
			resp, err := http.Get(srv.URL)
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") == "" {
				t.Error("503 without Retry-After")
			}
			codes <- resp.StatusCode
		})
	}
	// The ones past the bound come back while the render still waits.
	busy := 0
	for busy < 2*statusReaders {
		select {
		case code := <-codes:
			if code != http.StatusServiceUnavailable {
				t.Fatalf("status %d before the render finished, want 503", code)
			}
			busy++
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d requests turned away while %d waited on one render", busy, statusReaders)
		}
	}
	close(release)
	wg.Wait()
	close(codes)
	for code := range codes {
		if code != http.StatusOK {
			t.Errorf("a reader inside the bound got %d", code)
		}
	}
}

// TestStatusPageIsCapped: a cluster of thousands of pools shows the
// pools with problems and a count of the rest.
func TestStatusPageIsCapped(t *testing.T) {
	h := statusPage(func() *diagnose.Report { return statusReportOf(5000) }, nil, slog.New(slog.DiscardHandler))
	rec := httptest.NewRecorder()
	h(rec, httptest.NewRequest(http.MethodGet, StatusPath, nil))
	body := rec.Body.String()
	if got := strings.Count(body, "<li>"); got != statusMaxPools {
		t.Errorf("%d pools on the page, want %d", got, statusMaxPools)
	}
	if !strings.Contains(body, fmt.Sprintf("%d more pool(s) not shown", 5000-statusMaxPools)) {
		t.Error("the page does not say how many pools it left out")
	}
	if !strings.Contains(body, "pool-04907") {
		t.Error("a pool with a problem was left out while healthy ones were shown")
	}
}

// TestStatusServesJSONWhenAsked: a client that prefers application/json
// gets the report as `diagnose -o json` writes it; a browser gets HTML.
func TestStatusServesJSONWhenAsked(t *testing.T) {
	h := statusPage(func() *diagnose.Report { return statusReportOf(3) }, nil, slog.New(slog.DiscardHandler))
	for _, tc := range []struct{ accept, want string }{
		{"", "text/html; charset=utf-8"},
		{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "text/html; charset=utf-8"},
		{"application/json", "application/json"},
		{"application/json, text/plain, */*", "application/json"},
		{"text/html;q=0.5, application/json", "application/json"},
		{"application/json;q=0", "text/html; charset=utf-8"},
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, StatusPath, nil)
		if tc.accept != "" {
			req.Header.Set("Accept", tc.accept)
		}
		h(rec, req)
		if got := rec.Header().Get("Content-Type"); got != tc.want || rec.Code != http.StatusOK {
			t.Errorf("Accept %q: %d %s, want %s", tc.accept, rec.Code, got, tc.want)
			continue
		}
		if tc.want == "application/json" {
			var r diagnose.Report
			if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil || len(r.Pools) != 3 || r.Verdict != diagnose.Problem {
				t.Errorf("Accept %q: not the report as JSON (%v): %.200s", tc.accept, err, rec.Body.String())
			}
		}
	}
}
