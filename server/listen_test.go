package server

import (
	"bufio"
	"context"
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
	"github.com/prometheus/exporter-toolkit/web"
)

// TestConnectionsAreCapped: connections held open (no request sent) take
// no more than the cap; a request past it waits until the header timeout
// frees a held one, then is answered.
func TestConnectionsAreCapped(t *testing.T) {
	const limit = 4
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan struct{}, 64)
	srv := NewHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") }),
		Timeouts{ReadHeader: 2 * time.Second, Read: time.Second, Write: time.Second, Idle: time.Second}, slog.New(slog.DiscardHandler))
	srv.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			accepted <- struct{}{}
		}
	}
	startCapped(t, srv, l, limit)

	for i := range limit + 2 { // idle connections that never send a request, each client its own
		c, err := dialFrom(fmt.Sprintf("127.0.1.%d", i+1), l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
	}
	// Well inside the header timeout, no held connection has ended, so
	// the server took no more than the cap.
	time.Sleep(200 * time.Millisecond)
	if n := len(accepted); n > limit {
		t.Errorf("the server took %d held connections at once, over the cap of %d", n, limit)
	}
	c, err := net.DialTimeout("tcp", l.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprint(c, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer once the held connections timed out: %v", err)
	}
	_ = resp.Body.Close()
}

// dialFrom connects to addr from the loopback address ip (127.0.0.0/8 is
// all loopback on Linux), so a test can play several clients.
func dialFrom(ip, addr string) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return d.Dial("tcp", addr)
}

// serveCappedMetrics serves Handler (a rendered /metrics) behind the cap as
// the binary does, and returns its address.
func serveCappedMetrics(tb testing.TB, maxConns int) string {
	tb.Helper()
	h, err := Handler(Config{MetricsPath: "/metrics", Registry: prometheus.NewRegistry(), Rendered: text(rendered),
		Readiness: fakeReadiness{ready: true}, Logger: slog.New(slog.DiscardHandler), MaxRequests: 40})
	if err != nil {
		tb.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	startCapped(tb, NewHTTPServer(h, DefaultTimeouts, slog.New(slog.DiscardHandler)), l, maxConns)
	return l.Addr().String()
}

// startCapped serves srv on l behind serveCapped until the test ends.
func startCapped(tb testing.TB, srv *http.Server, l net.Listener, maxConns int) {
	tb.Helper()
	noConfig, noSystemd := "", false
	done := make(chan error, 1)
	go func() {
		done <- serveCapped(srv, []net.Listener{l}, &web.FlagConfig{WebConfigFile: &noConfig, WebSystemdSocket: &noSystemd}, slog.New(slog.DiscardHandler), maxConns)
	}()
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			tb.Errorf("serveCapped: %v", err)
		}
	})
}

// holdConnections opens n keep-alive connections from one client (ip):
// each made one request and stays open, as an idle keep-alive does. It
// returns how many the server kept open.
func holdConnections(tb testing.TB, ip, addr string, n int) int {
	tb.Helper()
	kept := 0
	for range n {
		c, err := dialFrom(ip, addr)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = c.Close() })
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprint(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			continue // refused: the client holds its share
		}
		_ = resp.Body.Close()
		kept++
	}
	return kept
}

// scrapeWithin GETs /metrics from another client on a new connection,
// within timeout (Prometheus' default scrape_timeout is 10s).
func scrapeWithin(addr string, timeout time.Duration) error {
	c := &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	return nil
}

// TestOneClientCannotStarveScrapes: one client holding the whole default
// cap of keep-alive connections keeps only its share, and a scrape from
// another client is answered while they are held.
func TestOneClientCannotStarveScrapes(t *testing.T) {
	const maxConns = 512
	addr := serveCappedMetrics(t, maxConns)
	if kept := holdConnections(t, "127.0.0.2", addr, maxConns); kept != PerClient(maxConns) {
		t.Errorf("one client kept %d connections, want its share %d", kept, PerClient(maxConns))
	}
	if err := scrapeWithin(addr, 10*time.Second); err != nil {
		t.Fatalf("a scrape while one client holds %d connections: %v", maxConns, err)
	}
}

// TestVsockAddressUnderTheCap: a vsock:// listen address is opened as a
// vsock socket under the cap, not parsed as a TCP address. This machine
// may have no vsock: then the error is the socket's.
func TestVsockAddressUnderTheCap(t *testing.T) {
	l, err := listen("vsock://:29100")
	if err == nil {
		_ = l.Close()
		return
	}
	if strings.Contains(err.Error(), "tcp") {
		t.Errorf("vsock://:29100 was opened as TCP: %v", err)
	}
}

// BenchmarkScrapeWhileOneClientHoldsTheCap measures a scrape, on a new
// connection, while one other client holds 512 keep-alive connections
// (the default --web.max-connections).
func BenchmarkScrapeWhileOneClientHoldsTheCap(b *testing.B) {
	const maxConns = 512
	addr := serveCappedMetrics(b, maxConns)
	holdConnections(b, "127.0.0.2", addr, maxConns)
	b.ResetTimer()
	for range b.N {
		if err := scrapeWithin(addr, 10*time.Second); err != nil {
			b.Fatal(err)
		}
	}
}
