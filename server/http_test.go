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
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
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
// write deadline; then a normal scrape succeeds.
func TestClientsThatNeverReadFreeTheirSlot(t *testing.T) {
	if raceDetector {
		t.Skip("measures capacity; the race detector slows every request (make test runs it without -race)")
	}
	big := text(strings.Repeat("mosc_info{machineosconfig=\"infra\",pool=\"infra\"} 1\n", 1<<20)) // 48 MiB: more than the socket buffers hold
	addr := serveReal(t, Config{Rendered: big, MaxRequests: 2}, quick)
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.(*net.TCPConn).SetReadBuffer(4096)
		fmt.Fprintf(c, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n") // and never read
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	client := &http.Client{}
	saw503 := false
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("no scrape succeeded while two clients hold the slots without reading (503 seen: %v): %v", saw503, err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK && err == nil {
			if n == 0 {
				t.Error("empty scrape")
			}
			return
		}
		saw503 = saw503 || resp.StatusCode == http.StatusServiceUnavailable
		time.Sleep(50 * time.Millisecond)
	}
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
