package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ocl-exporter/ocl_exporter/internal/wait"
)

// serveReal runs Handler as the binary does (Serve: NewHTTPServer through
// exporter-toolkit's web.Serve), uncapped, on a loopback port, and returns
// its address.
func serveReal(t *testing.T, cfg Config, timeouts Timeouts) string {
	t.Helper()
	cfg.Registry = prometheus.NewRegistry()
	cfg.Logger = slog.New(slog.DiscardHandler)
	if cfg.MetricsPath == "" {
		cfg.MetricsPath = "/metrics"
	}
	if cfg.Readiness == nil {
		cfg.Readiness = fakeReadiness{ready: true}
	}
	h, err := Handler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := serveOnLoopback(t, h, timeouts, 0)
	return addr
}

var quick = Timeouts{ReadHeader: time.Second, Read: time.Second, Write: 500 * time.Millisecond, Idle: 300 * time.Millisecond}

// TestIdleConnectionsAreClosed: keep-alive connections that go quiet after
// a scrape, and connections that never send a request, are closed by the
// server instead of living for ever.
func TestIdleConnectionsAreClosed(t *testing.T) {
	addr := serveReal(t, Config{Rendered: text(rendered)}, quick)
	var conns []net.Conn
	for i := range 20 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if i%2 == 0 { // one scrape, then idle
			fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		conns = append(conns, c)
	}
	for i, c := range conns {
		// The deadline bounds the test; the server must close first.
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err := c.Read(make([]byte, 1))
		if !errors.Is(err, io.EOF) {
			t.Errorf("connection %d: read %v, want the server to close it (EOF)", i, err)
		}
	}
}

// TestClientsThatNeverReadFreeTheirSlot: clients that request a large
// scrape and never read it hold --web.max-requests slots only until the
// write deadline; then a normal scrape succeeds. The scrape starts once
// both slots are held, and its page is small, so neither how fast the
// clients connect nor how fast the machine writes 48 MiB decides the
// outcome: only the write deadline frees a slot.
func TestClientsThatNeverReadFreeTheirSlot(t *testing.T) {
	pages := &bigThenSmall{big: text(strings.Repeat("mosc_info{machineosconfig=\"infra\",pool=\"infra\"} 1\n", 1<<20)), first: 2} // 48 MiB: more than the socket buffers hold
	addr := serveReal(t, Config{Rendered: pages, MaxRequests: 2}, quick)
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.(*net.TCPConn).SetReadBuffer(4096)
		fmt.Fprintf(c, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n") // and never read
	}
	wait.For(t, time.Minute, "both clients that never read to hold a slot", func() error {
		if n := pages.served.Load(); n < 2 {
			return fmt.Errorf("%d do", n)
		}
		return nil
	})
	client := &http.Client{Timeout: 10 * time.Second}
	wait.For(t, time.Minute, "a scrape answered once the write deadline frees the slots", func() error {
		resp, err := client.Get("http://" + addr + "/metrics")
		if err != nil {
			return err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case err != nil:
			return err
		case resp.StatusCode != http.StatusOK:
			return errors.New(resp.Status)
		case !bytes.Contains(body, []byte(rendered)):
			t.Fatalf("the scrape did not serve the rendered page:\n%s", body)
		}
		return nil
	})
}

// bigThenSmall serves big to the first scrapes and rendered after.
type bigThenSmall struct {
	big    text
	first  int32
	served atomic.Int32
}

func (p *bigThenSmall) Scrape(string) ([]byte, uint64) {
	if p.served.Add(1) <= p.first {
		return p.big.Scrape("")
	}
	return []byte(rendered), 2
}

// TestOnlyGetAndHead: every endpoint is read-only.
func TestOnlyGetAndHead(t *testing.T) {
	addr := serveReal(t, Config{Rendered: text(rendered)}, quick)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, path := range []string{"/metrics", "/healthz", "/readyz", "/"} {
		for _, method := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete, "FOO"} {
			req, _ := http.NewRequestWithContext(ctx, method, "http://"+addr+path, strings.NewReader(""))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			switch method {
			case http.MethodGet, http.MethodHead:
				if resp.StatusCode != http.StatusOK {
					t.Errorf("%s %s: %d, want 200", method, path, resp.StatusCode)
				}
			default:
				if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
					t.Errorf("%s %s: %d Allow %q, want 405 with Allow: GET, HEAD", method, path, resp.StatusCode, resp.Header.Get("Allow"))
				}
			}
		}
	}
}

func TestCheckMetricsPath(t *testing.T) {
	for _, p := range []string{"/metrics", "/", "/a/b", "/metrics/", "/%7B", "/ü"} {
		if err := CheckMetricsPath(p); err != nil {
			t.Errorf("%q: %v", p, err)
			continue
		}
		cfg := Config{MetricsPath: p, Registry: prometheus.NewRegistry(), Readiness: fakeReadiness{}, Logger: slog.New(slog.DiscardHandler)}
		if _, err := Handler(cfg); err != nil {
			t.Errorf("%q: %v", p, err)
		}
	}
	for _, p := range []string{"", "metrics", "/healthz", "/readyz/", "/status", "/status/", "/a b", "/{x}", "/\xff", "GET /x", "//", "/a//b", "/./x", "/a/../b", "/.."} {
		err := CheckMetricsPath(p)
		if err == nil || !strings.Contains(err.Error(), "--web.telemetry-path") {
			t.Errorf("%q: %v, want an error naming the flag", p, err)
		}
	}
}

// TestServerErrorsAreStructured: net/http's own error lines go through
// the exporter's logger, not as plain text past --log.format.
func TestServerErrorsAreStructured(t *testing.T) {
	var b bytes.Buffer
	srv := NewHTTPServer(http.NotFoundHandler(), DefaultTimeouts, slog.New(slog.NewJSONHandler(&b, nil)))
	srv.ErrorLog.Printf("http: Accept error: %v; retrying in %v", errors.New("accept4: too many open files"), 5*time.Millisecond)
	var rec map[string]any
	if err := json.Unmarshal(b.Bytes(), &rec); err != nil {
		t.Fatalf("not one JSON line: %v: %q", err, b.String())
	}
	if rec["level"] != "ERROR" || rec["component"] != "net/http" || !strings.Contains(rec["msg"].(string), "Accept error") {
		t.Errorf("record %v", rec)
	}
}
