package server

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
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
	"testing/synctest"
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
	for range statusRate / 4 {
		wg.Go(func() {
			for range 4 {
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

// statusLoad has n readers ask for the page at once, within a synctest
// bubble, and counts the answers as they come.
type statusLoad struct {
	mu    sync.Mutex
	codes map[int]int
}

func loadStatus(t *testing.T, h http.HandlerFunc, n int) *statusLoad {
	l := &statusLoad{codes: map[int]int{}}
	for range n {
		go func() {
			rec := httptest.NewRecorder()
			h(rec, httptest.NewRequest(http.MethodGet, StatusPath, nil))
			if rec.Code == http.StatusServiceUnavailable && rec.Header().Get("Retry-After") == "" {
				t.Error("503 without Retry-After")
			}
			l.mu.Lock()
			l.codes[rec.Code]++
			l.mu.Unlock()
		}()
	}
	return l
}

func (l *statusLoad) count(code int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.codes[code]
}

// TestStatusIsPaced: statusRate pages are served at once, then statusRate
// a second; a request past them waits its turn, it is not turned away, so
// readers that ask without pause cost the scrape a bounded share of the
// CPU. Before, every request was answered as it came, up to 8 at once.
func TestStatusIsPaced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := statusPage(func() *diagnose.Report { return statusReportOf(1) }, nil, slog.New(slog.DiscardHandler))
		load := loadStatus(t, h, 3*statusRate)
		for second := 1; second <= 3; second++ {
			synctest.Wait()
			if got := load.count(http.StatusOK); got != second*statusRate {
				t.Fatalf("%d pages served in second %d, want %d", got, second, second*statusRate)
			}
			time.Sleep(time.Second)
		}
		if got := load.count(http.StatusServiceUnavailable); got != 0 {
			t.Errorf("%d readers turned away", got)
		}
	})
}

// TestStatusTurnsAwayPastTheWait: a request whose turn would come after
// statusMaxWait gets 503 and Retry-After at once.
func TestStatusTurnsAwayPastTheWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := statusPage(func() *diagnose.Report { return statusReportOf(1) }, nil, slog.New(slog.DiscardHandler))
		// The burst, the turns within the wait, and statusRate more.
		fit := statusRate + statusRate*int(statusMaxWait/time.Second)
		load := loadStatus(t, h, fit+statusRate)
		synctest.Wait()
		// One turn either way: the last one is due at the deadline itself.
		if got := load.count(http.StatusServiceUnavailable); got < statusRate-1 || got > statusRate+1 {
			t.Errorf("%d readers turned away at once, want %d", got, statusRate)
		}
		time.Sleep(statusMaxWait + time.Second)
		synctest.Wait()
		if served, refused := load.count(http.StatusOK), load.count(http.StatusServiceUnavailable); served+refused != fit+statusRate {
			t.Errorf("%d pages served and %d refused of %d", served, refused, fit+statusRate)
		}
	})
}

// TestStatusServesGzip: a client that takes gzip gets the page compressed
// when it was rendered, the same page once uncompressed.
func TestStatusServesGzip(t *testing.T) {
	h := statusPage(func() *diagnose.Report { return statusReportOf(300) }, nil, slog.New(slog.DiscardHandler))
	get := func(encoding string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, StatusPath, nil)
		req.Header.Set("Accept-Encoding", encoding)
		h(rec, req)
		return rec
	}
	plain, compressed := get(""), get("gzip, deflate")
	if compressed.Header().Get("Content-Encoding") != "gzip" || plain.Header().Get("Content-Encoding") != "" {
		t.Fatalf("Content-Encoding %q with gzip, %q without", compressed.Header().Get("Content-Encoding"), plain.Header().Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(compressed.Body)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(body, plain.Body.Bytes()) || compressed.Body.Len()*5 > len(body) {
		t.Errorf("gzip page of %d bytes is not the %d bytes page compressed", compressed.Body.Len(), plain.Body.Len())
	}
}

// TestStatusPageIsCapped: a cluster of thousands of pools shows the
// pools with problems and a count of the rest.
func TestStatusPageIsCapped(t *testing.T) {
	h := statusPage(func() *diagnose.Report { return statusReportOf(5000) }, nil, slog.New(slog.DiscardHandler))
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, StatusPath, nil)
	req.Header.Set("Accept", "text/html")
	h(rec, req)
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
// gets the report as `diagnose -o json` writes it; a browser gets HTML;
// curl, or a client that asks for neither, the text diagnose prints.
func TestStatusServesJSONWhenAsked(t *testing.T) {
	h := statusPage(func() *diagnose.Report { return statusReportOf(3) }, nil, slog.New(slog.DiscardHandler))
	const html, text = "text/html; charset=utf-8", "text/plain; charset=utf-8"
	for _, tc := range []struct{ accept, want string }{
		{"", text},
		{"*/*", text},
		{"text/plain", text},
		{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", html},
		{"text/html", html},
		{"application/json", "application/json"},
		{"application/json, text/plain, */*", "application/json"},
		{"text/html;q=0.5, application/json", "application/json"},
		{"application/json;q=0", text},
		{"text/plain;q=0.1, text/html", html},
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

// TestStatusHeaders: every answer of /status forbids content sniffing,
// and the page may apply its own style element and nothing else (no
// script, image or frame, and no page may frame it). The policy's hash is
// the style element's as served, so Chromium applies it (make
// test-browser checks the colours).
func TestStatusHeaders(t *testing.T) {
	h := statusPage(func() *diagnose.Report { return statusReportOf(3) }, nil, slog.New(slog.DiscardHandler))
	for _, accept := range []string{"text/html", "application/json", "*/*"} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, StatusPath, nil)
		req.Header.Set("Accept", accept)
		h(rec, req)
		if got := rec.Header().Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("Accept %s: X-Content-Type-Options %q, want nosniff", accept, got)
		}
		csp := rec.Header().Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("Accept %s: Content-Security-Policy %q lacks %q", accept, csp, want)
			}
		}
		if accept != "text/html" {
			continue
		}
		page := rec.Body.String()
		_, rest, _ := strings.Cut(page, "<style>")
		css, _, ok := strings.Cut(rest, "</style>")
		if !ok || strings.Count(page, "<style") != 1 || strings.Contains(page, "style=") || strings.Contains(page, "<script") {
			t.Fatalf("the page holds other than one style element and no script:\n%.500s", page)
		}
		sum := sha256.Sum256([]byte(css))
		if want := "style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "';"; !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q does not allow the page's style element (%s)", csp, want)
		}
	}
}

// TestStatusForOnePool: ?pool= narrows the report as diagnose --pool
// does, in every format.
func TestStatusForOnePool(t *testing.T) {
	h := statusPage(func() *diagnose.Report { return statusReportOf(300) }, nil, slog.New(slog.DiscardHandler))
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, StatusPath+"?pool=pool-00107", nil)
	req.Header.Set("Accept", "application/json")
	h(rec, req)
	var r diagnose.Report
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil || len(r.Pools) != 1 || r.Pools[0].Name != "pool-00107" {
		t.Errorf("?pool=pool-00107: %v %.300s", err, rec.Body.String())
	}
	rec = httptest.NewRecorder()
	h(rec, httptest.NewRequest(http.MethodGet, StatusPath+"?pool=pool-00207", nil))
	if body := rec.Body.String(); !strings.Contains(body, "pool-00207") || strings.Contains(body, "pool-00107") {
		t.Errorf("?pool=pool-00207 as text:\n%s", body)
	}
}
