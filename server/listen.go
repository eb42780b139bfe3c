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

	"github.com/mdlayher/vsock"
	"github.com/prometheus/exporter-toolkit/web"
	"golang.org/x/net/netutil"
)

// ListenAndServe serves srv on every --web.listen-address, each listener
// accepting at most maxConns connections at once; 0 means no cap. Without
// one, 20,000 held connections used up the file descriptors and /metrics
// stopped answering. Past the cap, a new connection waits in the kernel's
// backlog until a held one ends, which the server's header and idle
// timeouts bound. One client (one address) may hold only a share of the
// cap (PerClient), so it cannot take it all and starve the scrapes. A
// systemd socket is served uncapped, as exporter-toolkit opens it.
func ListenAndServe(srv *http.Server, flags *web.FlagConfig, logger *slog.Logger, maxConns int) error {
	if maxConns <= 0 || flags.WebSystemdSocket != nil && *flags.WebSystemdSocket {
		return web.ListenAndServe(srv, flags, logger)
	}
	var listeners []net.Listener
	for _, addr := range *flags.WebListenAddresses {
		l, err := listen(addr)
		if err != nil {
			for _, open := range listeners {
				_ = open.Close()
			}
			return fmt.Errorf("listening on %s: %w", addr, err)
		}
		listeners = append(listeners, l)
	}
	if len(listeners) == 0 {
		return errors.New("no --web.listen-address to listen on")
	}
	return serveCapped(srv, listeners, flags, logger, maxConns)
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

// serveCapped serves every listener behind the cap until the first ends;
// srv.Shutdown closes them all.
func serveCapped(srv *http.Server, listeners []net.Listener, flags *web.FlagConfig, logger *slog.Logger, maxConns int) error {
	errc := make(chan error, len(listeners))
	for _, l := range listeners {
		go func() {
			errc <- web.Serve(netutil.LimitListener(newPerClientListener(l, PerClient(maxConns), logger), maxConns), srv, flags, logger)
		}()
	}
	return <-errc
}

// PerClient is how many of maxConns connections one client address may
// hold at once: a quarter, at least one. A scraper needs one or two.
func PerClient(maxConns int) int { return max(1, maxConns/4) }

// perClientListener closes, as soon as it is accepted, a connection from a
// client address that already holds its share; it never returns it, so
// it takes no slot of the cap.
type perClientListener struct {
	net.Listener
	limit  int
	logger *slog.Logger
	mu     sync.Mutex
	held   map[string]int
	// refusedAt rate-limits the log line: one per minute at most.
	refusedAt time.Time
}

func newPerClientListener(l net.Listener, limit int, logger *slog.Logger) *perClientListener {
	return &perClientListener{Listener: l, limit: limit, logger: logger, held: map[string]int{}}
}

func (l *perClientListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		client := clientOf(c.RemoteAddr())
		if l.take(client) {
			return &clientConn{Conn: c, release: func() { l.release(client) }}, nil
		}
		_ = c.Close()
	}
}

func (l *perClientListener) take(client string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held[client] >= l.limit {
		if now := time.Now(); now.Sub(l.refusedAt) > time.Minute {
			l.refusedAt = now
			l.logger.Warn("refusing connections from a client that holds its share of --web.max-connections", "client", client, "share", l.limit)
		}
		return false
	}
	l.held[client]++
	return true
}

func (l *perClientListener) release(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held[client]--; l.held[client] <= 0 {
		delete(l.held, client)
	}
}

// clientOf is the address a connection comes from, without its port; a
// listener of another kind (vsock) has one client per context ID.
func clientOf(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.String()
	}
	s := a.String()
	if host, _, err := net.SplitHostPort(s); err == nil {
		return host
	}
	return s
}

// clientConn releases its client's share once, on its first Close.
type clientConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *clientConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
