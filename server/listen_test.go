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
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/ocl-exporter/ocl_exporter/internal/wait"
)

// serveOnLoopback serves h as the binary does (serveOn, no web config) on
// a loopback port, under a cap of maxConns connections unless 0, until
// the test ends; it returns the address and the cap (nil when uncapped).
func serveOnLoopback(tb testing.TB, h http.Handler, t Timeouts, maxConns int) (string, *capListener) {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	noSystemd := false
	s, err := serveOn(ServeConfig{Handler: h, Timeouts: t, Flags: &web.FlagConfig{WebSystemdSocket: &noSystemd},
		MaxConns: maxConns, Logger: slog.New(slog.DiscardHandler)}, []net.Listener{l}, true)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			tb.Errorf("shutdown: %v", err)
		}
	})
	capped, _ := s.sockets[0].l.(*capListener)
	return l.Addr().String(), capped
}

// serveCappedMetrics serves Handler (a rendered /metrics) behind the cap as
// the binary does, with the default timeouts.
func serveCappedMetrics(tb testing.TB, maxConns int) (string, *capListener) {
	tb.Helper()
	return serveCappedMetricsWith(tb, maxConns, DefaultTimeouts)
}

func serveCappedMetricsWith(tb testing.TB, maxConns int, t Timeouts) (string, *capListener) {
	tb.Helper()
	h, err := Handler(Config{MetricsPath: "/metrics", Registry: prometheus.NewRegistry(), Rendered: text(rendered),
		Readiness: fakeReadiness{ready: true}, Logger: slog.New(slog.DiscardHandler), MaxRequests: 40})
	if err != nil {
		tb.Fatal(err)
	}
	return serveOnLoopback(tb, h, t, maxConns)
}

// dialFrom connects to addr from the loopback address ip (127.0.0.0/8 is
// all loopback on Linux), so a test can play several clients.
func dialFrom(ip, addr string) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return d.Dial("tcp", addr)
}

// holdConnections opens n keep-alive connections from one client (ip):
// each made one request and stays open, as an idle keep-alive does. It
// returns how many the server kept open. A connection the server closes
// unanswered was refused; one it leaves unanswered for a minute fails the
// test, rather than count as refused: a slow answer on a loaded machine
// is not a refusal.
func holdConnections(tb testing.TB, ip, addr string, n int) int {
	tb.Helper()
	kept := 0
	for i := range n {
		c, err := dialFrom(ip, addr)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = c.Close() })
		_ = c.SetDeadline(time.Now().Add(time.Minute))
		fmt.Fprint(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		var timeout net.Error
		if errors.As(err, &timeout) && timeout.Timeout() {
			tb.Fatalf("connection %d from %s: neither answered nor closed within a minute: %v", i, ip, err)
		}
		if err != nil {
			continue // refused: the client holds its share
		}
		_ = resp.Body.Close()
		kept++
	}
	return kept
}

// scrapeWithin GETs /metrics from another client on a new connection,
// within timeout.
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

// waitHeld waits until the cap holds want connections, failing past a
// minute (generous: the clients dial as fast as a loaded machine lets them).
func waitHeld(tb testing.TB, l *capListener, want int) {
	tb.Helper()
	wait.For(tb, time.Minute, fmt.Sprintf("the cap to hold %d connections", want), func() error {
		l.mu.Lock()
		n := len(l.conns)
		l.mu.Unlock()
		if n > want {
			tb.Fatalf("the cap holds %d connections, over %d", n, want)
		}
		if n < want {
			return fmt.Errorf("it holds %d", n)
		}
		return nil
	})
}

// TestOneClientCannotStarveScrapes: one client holding the whole default
// cap of keep-alive connections keeps only its share, and a scrape from
// another client is answered while they are held.
func TestOneClientCannotStarveScrapes(t *testing.T) {
	const maxConns = 512
	addr, _ := serveCappedMetrics(t, maxConns)
	if kept := holdConnections(t, "127.0.0.2", addr, maxConns); kept != PerClient(maxConns) {
		t.Errorf("one client kept %d connections, want its share %d", kept, PerClient(maxConns))
	}
	if err := scrapeWithin(addr, 10*time.Second); err != nil {
		t.Fatalf("a scrape while one client holds %d connections: %v", maxConns, err)
	}
}

// hostile plays a client at ip holding n connections to addr as long as
// ctx lasts, each opened again as soon as the server closes it: odd ones
// send half a request and nothing more, even ones make one request and
// stay open as an idle keep-alive.
func hostile(ctx context.Context, wg *sync.WaitGroup, ip, addr string, n int) {
	for i := range n {
		wg.Go(func() {
			for ctx.Err() == nil {
				c, err := dialFrom(ip, addr)
				if err != nil {
					time.Sleep(10 * time.Millisecond) // the backlog is full
					continue
				}
				stop := context.AfterFunc(ctx, func() { _ = c.Close() })
				r := bufio.NewReader(c)
				if i%2 == 1 {
					fmt.Fprint(c, "GET /metrics HTTP/1.1\r\nHost:")
				} else {
					fmt.Fprint(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
					if resp, err := http.ReadResponse(r, nil); err == nil {
						_ = resp.Body.Close()
					}
				}
				_, _ = r.ReadByte() // blocks until the server closes it
				stop()
				_ = c.Close()
			}
		})
	}
}

// fillTheCap serves the metrics under a cap of maxConns and has as many
// hostile clients at 127.0.2.1, 127.0.2.2 ... hold maxConns/addresses
// connections each until the test ends; it returns once they hold the
// whole cap.
func fillTheCap(tb testing.TB, addresses, maxConns int, t Timeouts) string {
	tb.Helper()
	addr, capped := serveCappedMetricsWith(tb, maxConns, t)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	tb.Cleanup(func() { cancel(); wg.Wait() })
	for i := range addresses {
		hostile(ctx, &wg, fmt.Sprintf("127.0.2.%d", i+1), addr, maxConns/addresses)
	}
	waitHeld(tb, capped, maxConns)
	return addr
}

// TestHostileAddressesCannotStarveScrapes: 4, 16 and 64 client addresses
// fill the default cap of 512 with connections that serve no request
// (idle keep-alives, and half-sent requests), reopening each one the
// server closes; a scrape from another address is still answered. Each
// address stays within its share, and the header timeout is raised to the
// idle one (2 minutes), so no timeout frees a connection within the test:
// only taking the place of such connections lets the scrape in. Before,
// it waited for those timeouts. The deadline is generous; it bounds a
// hang, not a speed.
func TestHostileAddressesCannotStarveScrapes(t *testing.T) {
	const maxConns = 512
	timeouts := DefaultTimeouts
	timeouts.ReadHeader = timeouts.Idle
	for _, addresses := range []int{4, 16, 64} {
		t.Run(fmt.Sprintf("%d addresses", addresses), func(t *testing.T) {
			addr := fillTheCap(t, addresses, maxConns, timeouts)
			if err := scrapeWithin(addr, 30*time.Second); err != nil {
				t.Fatalf("a scrape while %d addresses hold %d connections: %v", addresses, maxConns, err)
			}
		})
	}
}

// TestCapClosesFirstWhatServesNothing: the connection closed for a new one
// is never one serving a request; it is one of the client holding the
// most, one that has not sent a complete request before an idle one, the
// oldest first.
func TestCapClosesFirstWhatServesNothing(t *testing.T) {
	t0 := time.Unix(1000, 0)
	type conn struct {
		client string
		state  http.ConnState
		age    time.Duration
	}
	for _, tc := range []struct {
		name  string
		conns []conn
		want  int // index in conns, -1 for none
	}{
		{"every connection serving a request", []conn{{"a", http.StateActive, 0}, {"b", http.StateActive, 0}}, -1},
		{"the client holding the most", []conn{{"a", http.StateIdle, 9}, {"b", http.StateIdle, 1}, {"b", http.StateActive, 1}}, 1},
		{"no complete request before idle", []conn{{"a", http.StateIdle, 9}, {"a", http.StateNew, 1}}, 1},
		{"the oldest", []conn{{"a", http.StateNew, 1}, {"a", http.StateNew, 5}, {"a", http.StateNew, 2}}, 1},
		{"never the one serving", []conn{{"a", http.StateActive, 9}, {"a", http.StateActive, 9}, {"b", http.StateIdle, 0}}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := Cap(nil, 8, slog.New(slog.DiscardHandler)).(*capListener)
			var tracked []*trackedConn
			for _, c := range tc.conns {
				tc := &trackedConn{l: l, client: c.client, state: c.state, since: t0.Add(-c.age * time.Second)}
				tracked = append(tracked, tc)
				l.conns[tc] = struct{}{}
				l.held[c.client]++
			}
			got := l.victim()
			switch {
			case tc.want < 0 && got != nil:
				t.Errorf("closes %+v, want none", *got)
			case tc.want >= 0 && got != tracked[tc.want]:
				t.Errorf("closes %v, want conns[%d]", got, tc.want)
			}
		})
	}
}

// TestIPv6ClientIsItsSlash64: the addresses of one /64 are one client (a
// host or a pod network owns a whole /64), an IPv4-mapped address is its
// IPv4 one; the share applies to the /64.
func TestIPv6ClientIsItsSlash64(t *testing.T) {
	tcp := func(s string) net.Addr {
		ip, zone, _ := strings.Cut(s, "%")
		return &net.TCPAddr{IP: net.ParseIP(ip), Port: 1234, Zone: zone}
	}
	for in, want := range map[string]string{
		"2001:db8::1":         "2001:db8::/64",
		"2001:db8::ffff:1:2":  "2001:db8::/64",
		"2001:db8:0:1::1":     "2001:db8:0:1::/64",
		"::ffff:192.0.2.7":    "192.0.2.7",
		"192.0.2.7":           "192.0.2.7",
		"fe80::1%eth0":        "fe80::/64",
		"2001:db8:aa:bb:cc::": "2001:db8:aa:bb::/64",
	} {
		if got := clientOf(tcp(in)); got != want {
			t.Errorf("clientOf(%s) = %s, want %s", in, got, want)
		}
	}

	// Share 2 of a cap of 8: the third address of one /64 is refused,
	// another /64 is not.
	from := []string{"2001:db8::1", "2001:db8::2", "2001:db8::3", "2001:db8:0:1::1"}
	l := Cap(&fakeListener{from: from}, 8, slog.New(slog.DiscardHandler))
	var got []string
	for range 3 {
		c, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, c.RemoteAddr().String())
	}
	if want := "[2001:db8::1]:1234 [2001:db8::2]:1234 [2001:db8:0:1::1]:1234"; strings.Join(got, " ") != want {
		t.Errorf("accepted %s, want %s", got, want)
	}
}

// fakeListener accepts one connection from each address of from.
type fakeListener struct {
	net.Listener
	from []string
}

func (f *fakeListener) Accept() (net.Conn, error) {
	if len(f.from) == 0 {
		return nil, net.ErrClosed
	}
	ip := f.from[0]
	f.from = f.from[1:]
	c, _ := net.Pipe()
	return remoteConn{c, &net.TCPAddr{IP: net.ParseIP(ip), Port: 1234}}, nil
}

type remoteConn struct {
	net.Conn
	remote net.Addr
}

func (c remoteConn) RemoteAddr() net.Addr { return c.remote }

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
	addr, _ := serveCappedMetrics(b, maxConns)
	holdConnections(b, "127.0.0.2", addr, maxConns)
	b.ResetTimer()
	for range b.N {
		if err := scrapeWithin(addr, 10*time.Second); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScrapeWhileSixtyFourAddressesFillTheCap measures a scrape, on a
// new connection, while 64 other addresses fill the cap of 512 and reopen
// every connection the server closes.
func BenchmarkScrapeWhileSixtyFourAddressesFillTheCap(b *testing.B) {
	addr := fillTheCap(b, 64, 512, DefaultTimeouts)
	b.ResetTimer()
	for range b.N {
		if err := scrapeWithin(addr, 30*time.Second); err != nil {
			b.Fatal(err)
		}
	}
}
