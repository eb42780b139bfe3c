package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-systemd/v22/activation"
	"github.com/mdlayher/vsock"
	"github.com/prometheus/exporter-toolkit/web"
)

// openListeners opens every --web.listen-address, or takes systemd's
// sockets as exporter-toolkit does; capped is false for the latter, which
// are served uncapped.
func openListeners(flags *web.FlagConfig, logger *slog.Logger) (ls []net.Listener, capped bool, err error) {
	if flags.WebSystemdSocket != nil && *flags.WebSystemdSocket {
		logger.Info("Listening on systemd activated listeners instead of port listeners.")
		ls, err := activation.Listeners()
		if err == nil && len(ls) == 0 {
			err = errors.New("no socket activation file descriptors found")
		}
		return ls, false, err
	}
	for _, addr := range *flags.WebListenAddresses {
		l, err := listen(addr)
		if err != nil {
			for _, open := range ls {
				_ = open.Close()
			}
			return nil, false, fmt.Errorf("listening on %s: %w", addr, err)
		}
		ls = append(ls, l)
	}
	if len(ls) == 0 {
		return nil, false, errors.New("no --web.listen-address to listen on")
	}
	return ls, true, nil
}

// listen opens a TCP address, or a vsock://:port one as exporter-toolkit
// does.
func listen(addr string) (net.Listener, error) {
	if !strings.HasPrefix(addr, "vsock://") {
		return net.Listen("tcp", addr)
	}
	u, err := url.Parse(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(u.Port(), 10, 32)
	if err != nil {
		return nil, fmt.Errorf("vsock port: %w", err)
	}
	return vsock.Listen(uint32(port), nil)
}

// PerClient is how many of maxConns connections one client may hold at
// once: a quarter, at least one. A scraper needs one or two.
func PerClient(maxConns int) int { return max(1, maxConns/4) }

// Cap returns l accepting at most maxConns connections at once, of which
// one client (clientOf) holds at most PerClient. Without a cap, 20,000
// held connections used up the file descriptors and /metrics stopped
// answering. A connection past a client's share is closed as soon as it
// is accepted. At the cap, a new connection takes the place of one that
// is not serving a request (idle between requests, or that has not sent a
// complete one), of the client holding the most: four clients holding a
// quarter each used to starve every other until the idle timeout. Only
// when every connection is serving a request (bounded by
// --web.max-requests and the write timeout) does a new one wait.
func Cap(l net.Listener, maxConns int, logger *slog.Logger) net.Listener {
	c := &capListener{Listener: l, max: maxConns, share: PerClient(maxConns), logger: logger,
		conns: map[*trackedConn]struct{}{}, held: map[string]int{}}
	c.changed = sync.NewCond(&c.mu)
	return c
}

type capListener struct {
	net.Listener
	max, share int
	logger     *slog.Logger

	mu sync.Mutex
	// changed: a connection was released or stopped serving a request.
	changed *sync.Cond
	conns   map[*trackedConn]struct{}
	held    map[string]int // connections by client
	closed  bool
	// refusedAt and evictedAt rate-limit the log lines: one a minute.
	refusedAt, evictedAt time.Time
}

func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if t := l.admit(c); t != nil {
			return t, nil
		}
	}
}

// admit tracks c, making room for it at the cap; it closes c and returns
// nil when c's client holds its share or the listener is closed.
func (l *capListener) admit(c net.Conn) *trackedConn {
	client := clientOf(c.RemoteAddr())
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held[client] >= l.share {
		l.warn(&l.refusedAt, "refusing connections from a client that holds its share of --web.max-connections", "client", client, "share", l.share)
		_ = c.Close()
		return nil
	}
	for len(l.conns) >= l.max && !l.closed {
		v := l.victim()
		if v == nil {
			l.changed.Wait()
			continue
		}
		l.warn(&l.evictedAt, "at --web.max-connections: closing connections that serve no request, of the clients holding the most, to take new ones", "client", v.client, "held", l.held[v.client])
		l.release(v)
		_ = v.Conn.Close()
	}
	if l.closed {
		_ = c.Close()
		return nil
	}
	t := &trackedConn{Conn: c, l: l, client: client, state: http.StateNew, since: time.Now()}
	l.conns[t] = struct{}{}
	l.held[client]++
	return t
}

// victim is the connection to close for a new one: not serving a request,
// of the client holding the most; of its connections, one that has not
// sent a complete request before an idle one, the oldest first.
func (l *capListener) victim() *trackedConn {
	var v *trackedConn
	for t := range l.conns {
		if t.state == http.StateActive || t.state == http.StateHijacked {
			continue
		}
		if v == nil || l.closeFirst(t, v) {
			v = t
		}
	}
	return v
}

func (l *capListener) closeFirst(a, b *trackedConn) bool {
	if ha, hb := l.held[a.client], l.held[b.client]; ha != hb {
		return ha > hb
	}
	if (a.state == http.StateNew) != (b.state == http.StateNew) {
		return a.state == http.StateNew
	}
	return a.since.Before(b.since)
}

func (l *capListener) warn(at *time.Time, msg string, args ...any) {
	if now := time.Now(); now.Sub(*at) > time.Minute {
		*at = now
		l.logger.Warn(msg, args...)
	}
}

// release forgets t; l.mu is held.
func (l *capListener) release(t *trackedConn) {
	if _, ok := l.conns[t]; !ok {
		return
	}
	delete(l.conns, t)
	if l.held[t.client]--; l.held[t.client] <= 0 {
		delete(l.held, t.client)
	}
	l.changed.Broadcast()
}

func (l *capListener) Close() error {
	l.mu.Lock()
	l.closed = true
	l.changed.Broadcast()
	l.mu.Unlock()
	return l.Listener.Close()
}

// trackedConn is a connection under the cap, with the state its server
// last reported (http.Server.ConnState): New until a complete request was
// read, Active while serving it, Idle between requests.
type trackedConn struct {
	net.Conn
	l      *capListener
	client string
	state  http.ConnState // under l.mu
	since  time.Time      // of the state
}

func (c *trackedConn) Close() error {
	err := c.Conn.Close()
	c.l.mu.Lock()
	c.l.release(c)
	c.l.mu.Unlock()
	return err
}

// trackState is the servers' http.Server.ConnState: it records the state
// of a connection under a cap (under TLS, the connection the TLS one
// wraps).
func trackState(c net.Conn, state http.ConnState) {
	if n, ok := c.(interface{ NetConn() net.Conn }); ok {
		c = n.NetConn()
	}
	t, ok := c.(*trackedConn)
	if !ok {
		return
	}
	t.l.mu.Lock()
	defer t.l.mu.Unlock()
	t.state, t.since = state, time.Now()
	if state != http.StateActive {
		t.l.changed.Broadcast()
	}
}

// clientOf is the client a connection comes from: its IPv4 address, or
// the /64 of its IPv6 address (one host, one pod network, owns a whole
// /64); a listener of another kind (vsock) has one client per context ID.
func clientOf(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok {
		ip := t.AddrPort().Addr().Unmap().WithZone("")
		if ip.Is6() {
			p, _ := ip.Prefix(64) // 64 bits fit an IPv6 address
			return p.String()
		}
		return ip.String()
	}
	return hostOf(a.String())
}

// hostOf is the host of an address, or the address if it has no port.
func hostOf(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}
