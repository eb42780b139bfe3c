package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/exporter-toolkit/web"
)

// ServeConfig is what Serve serves, and where.
type ServeConfig struct {
	Handler  http.Handler
	Timeouts Timeouts
	// Flags are the listen addresses (or the systemd socket).
	Flags *web.FlagConfig
	// WebConfig is the --web.config.file as read at start, nil without
	// one. Serve owns it from then on, whether it fails or not.
	WebConfig *WebConfig
	// MaxConns caps the connections of each listen address (Cap); 0 means
	// no cap.
	MaxConns int
	Logger   *slog.Logger
}

// Serving serves the handler on every listen address. exporter-toolkit
// decides at start whether a listener speaks TLS (web.Serve): a reload
// that added TLS would go on serving plain http, one that removed it would
// fail every handshake. So a reload starts a new generation of servers on
// the same sockets with the new configuration, and the previous
// generation stops accepting and drains: a request in flight finishes
// under the configuration it started with, every new connection gets the
// new one, and no port is closed in between (the kernel's backlog holds
// a connection that arrives during the swap).
type Serving struct {
	handler  http.Handler
	timeouts Timeouts
	flags    web.FlagConfig
	logger   *slog.Logger
	sockets  []*socket
	webFile  bool
	failed   chan error // the first server that stopped by itself, or nil on Shutdown

	mu       sync.Mutex // one Reload or Shutdown at a time
	current  *generation
	shutdown bool
}

// generation is one set of servers, one per socket, reading one copy of
// the web config.
type generation struct {
	web      *WebConfig // nil without a --web.config.file
	servers  []*http.Server
	handoffs []*handoff
	exited   chan error // each server's web.Serve, when it returns
	// retired: replaced or shut down, so its servers' ending is expected
	// (closing a listener under http.Server.Serve ends it with that error).
	retired atomic.Bool
	serving sync.WaitGroup // its servers' web.Serve, until each returns
	conns   connCount      // open connections of its servers, for retire
}

// connCount counts a generation's open connections from its servers'
// ConnState, and says when the last one closed.
type connCount struct {
	mu   sync.Mutex
	n    int
	zero chan struct{} // closed while n is 0 after a close
}

func (c *connCount) track(state http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch state {
	case http.StateNew:
		c.n++
	case http.StateClosed, http.StateHijacked:
		c.n--
		if c.n == 0 && c.zero != nil {
			close(c.zero)
			c.zero = nil
		}
	}
}

// idle returns a channel closed once the generation has no connection.
func (c *connCount) idle() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan struct{})
	if c.n == 0 {
		close(ch)
	} else {
		c.zero = ch
	}
	return ch
}

// Serve opens the listen addresses and serves them until Shutdown; it
// returns once every listener accepts connections.
func Serve(cfg ServeConfig) (*Serving, error) {
	listeners, capped, err := openListeners(cfg.Flags, cfg.Logger)
	if err != nil {
		if cfg.WebConfig != nil {
			cfg.WebConfig.Close()
		}
		return nil, err
	}
	return serveOn(cfg, listeners, capped)
}

// serveOn serves cfg on listeners, under the cap when capped.
func serveOn(cfg ServeConfig, listeners []net.Listener, capped bool) (*Serving, error) {
	s := &Serving{handler: cfg.Handler, timeouts: cfg.Timeouts, flags: *cfg.Flags, logger: cfg.Logger,
		webFile: cfg.WebConfig != nil, failed: make(chan error, 1)}
	for _, l := range listeners {
		if capped && cfg.MaxConns > 0 {
			l = Cap(l, cfg.MaxConns, cfg.Logger)
		}
		s.sockets = append(s.sockets, newSocket(l))
	}
	g, err := s.start(cfg.WebConfig)
	if err != nil {
		s.closeSockets()
		return nil, err
	}
	s.current = g
	return s, nil
}

// Wait returns the error of the first server that stopped by itself, or
// nil once Shutdown was called.
func (s *Serving) Wait() error { return <-s.failed }

// Reload reads the web config again and, if it is valid, serves it: it
// returns the configuration now served, or an error and the previous one
// stays in force.
func (s *Serving) Reload() (*WebConfig, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.shutdown:
		return nil, errors.New("the server is shutting down")
	case s.current.web == nil:
		return nil, errors.New("no --web.config.file to reload")
	}
	next, err := s.current.web.Reload()
	if err != nil {
		return nil, err
	}
	g, err := s.start(next)
	if err != nil {
		return nil, fmt.Errorf("serving %s: %w", next.source, err)
	}
	old := s.current
	s.current = g
	// From here on every new connection is the new generation's.
	old.retired.Store(true)
	for _, h := range old.handoffs {
		_ = h.Close()
	}
	go old.retire(s.drain())
	return next, nil
}

// Shutdown closes the listeners and waits, until ctx ends, for the
// requests in flight.
func (s *Serving) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shutdown = true
	s.current.retired.Store(true)
	s.closeSockets()
	err := s.current.stop(ctx)
	if s.current.web != nil {
		s.current.web.Close()
	}
	s.fail(nil)
	return err
}

func (s *Serving) closeSockets() {
	for _, sock := range s.sockets {
		sock.close()
	}
}

// fail reports the first failure to Wait.
func (s *Serving) fail(err error) {
	select {
	case s.failed <- err:
	default:
	}
}

// start serves w (nil: no web config) on every socket with new servers,
// and returns once each accepts connections. When one fails to start, the
// others are stopped and w is closed.
func (s *Serving) start(w *WebConfig) (*generation, error) {
	g := &generation{web: w, exited: make(chan error, len(s.sockets))}
	path := ""
	if w != nil {
		path = w.Path()
	}
	flags := s.flags
	flags.WebConfigFile = &path
	for _, sock := range s.sockets {
		// web.Serve wraps the server's handler and sets its TLS: a server
		// serves one listener of one generation.
		srv := NewHTTPServer(s.handler, s.timeouts, s.logger)
		srv.ConnState = func(c net.Conn, state http.ConnState) {
			trackState(c, state)
			g.conns.track(state)
		}
		h := sock.handoff()
		if w != nil {
			h.accepted = w.refreshTLSFiles
		}
		g.servers, g.handoffs = append(g.servers, srv), append(g.handoffs, h)
		g.serving.Add(1)
		go func() {
			err := web.Serve(h, srv, &flags, s.logger)
			g.serving.Done()
			g.exited <- err
		}()
	}
	for _, h := range g.handoffs {
		select {
		case <-h.accepting:
		case err := <-g.exited:
			g.retired.Store(true)
			go g.retire(s.drain())
			return nil, err
		}
	}
	go func() {
		for range g.servers {
			if err := <-g.exited; !g.retired.Load() && !errors.Is(err, http.ErrServerClosed) {
				s.fail(err)
			}
		}
	}()
	return g, nil
}

// drain is how long a replaced generation may take to finish its
// requests: by then the server's header and write timeouts have ended
// every one.
func (s *Serving) drain() time.Duration { return s.timeouts.ReadHeader + s.timeouts.Write }

// stop closes the generation's listeners and waits for its requests in
// flight until ctx ends.
func (g *generation) stop(ctx context.Context) error {
	errs := make([]error, len(g.servers))
	var wg sync.WaitGroup
	for i, srv := range g.servers {
		wg.Go(func() { errs[i] = srv.Shutdown(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// retire stops a generation that a newer one replaced, without
// http.Server.Shutdown: a server shutting down closes, unanswered, a
// connection it accepted before its handoff closed but whose request it
// reads after (net/http conn.serve), and a new connection is not retried
// by clients. With keep-alives off instead, idle connections are closed
// (a client retries a request on a reused connection) and every other one
// is answered once and closed. Its copy of the web config is closed once
// its last connection is, as its servers read it on each request and
// handshake; past drain (by then the server's timeouts have ended every
// request) the connections are closed, and the copy is left open rather
// than have its descriptor number reused under a handshake still running.
func (g *generation) retire(drain time.Duration) {
	for _, h := range g.handoffs {
		_ = h.Close()
	}
	for _, srv := range g.servers {
		srv.SetKeepAlivesEnabled(false)
	}
	timer := time.NewTimer(drain)
	defer timer.Stop()
	select {
	case <-g.quiet():
		if g.web != nil {
			g.web.Close()
		}
	case <-timer.C:
		for _, srv := range g.servers {
			_ = srv.Close()
		}
	}
}

// quiet is closed once the generation's servers stopped accepting (a
// server tracks a connection only after its Accept returned it) and
// their last connection closed.
func (g *generation) quiet() <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		g.serving.Wait()
		<-g.conns.idle()
		close(ch)
	}()
	return ch
}

// ReloadOn reloads the web config whenever sig delivers, logging the
// outcome, until sig is closed.
func ReloadOn(sig <-chan os.Signal, s *Serving, logger *slog.Logger) {
	for range sig {
		if !s.webFile {
			logger.Info("SIGHUP: no --web.config.file to reload; ignored")
			continue
		}
		w, err := s.Reload()
		if err != nil {
			logger.Error("SIGHUP: the web config was not reloaded; the previous one stays in force", "err", err)
			continue
		}
		logger.Info("SIGHUP: reloaded the web config; new connections are served with it, requests in flight finish under the previous one", w.logAttrs()...)
	}
}

// socket is one listening socket. One goroutine accepts its connections
// and hands each to whichever server of the current generation asks
// first, so servers can be replaced while the socket stays open.
type socket struct {
	l      net.Listener
	conns  chan accepted
	closed chan struct{}
	once   sync.Once
}

type accepted struct {
	c   net.Conn
	err error
}

func newSocket(l net.Listener) *socket {
	s := &socket{l: l, conns: make(chan accepted), closed: make(chan struct{})}
	go s.accept()
	return s
}

// accept hands every connection, and every error, to a server: http.Server
// backs off after a temporary error before it asks again.
func (s *socket) accept() {
	for {
		c, err := s.l.Accept()
		if !s.deliver(accepted{c, err}) || errors.Is(err, net.ErrClosed) {
			return
		}
	}
}

// deliver hands a to a server; false when the socket was closed first.
func (s *socket) deliver(a accepted) bool {
	select {
	case s.conns <- a:
		return true
	case <-s.closed:
		if a.c != nil {
			_ = a.c.Close()
		}
		return false
	}
}

func (s *socket) close() {
	s.once.Do(func() {
		close(s.closed)
		_ = s.l.Close()
	})
}

// handoff is the listener one server of a generation serves: Close stops
// that server's accepting, not the socket.
func (s *socket) handoff() *handoff {
	return &handoff{sock: s, accepting: make(chan struct{}), done: make(chan struct{})}
}

type handoff struct {
	sock *socket
	// accepted, when set, runs before a connection is handed to the
	// server, ahead of its TLS handshake.
	accepted   func()
	accepting  chan struct{} // closed on the first Accept: the server is up
	acceptOnce sync.Once
	done       chan struct{}
	closeOnce  sync.Once
}

func (h *handoff) Accept() (net.Conn, error) {
	h.acceptOnce.Do(func() { close(h.accepting) })
	select {
	case <-h.done:
		return nil, net.ErrClosed
	default:
	}
	select {
	case a := <-h.sock.conns:
		select {
		case <-h.done:
			// Closed meanwhile: the connection is the next server's.
			go h.sock.deliver(a)
			return nil, net.ErrClosed
		default:
			if a.c != nil && h.accepted != nil {
				h.accepted()
			}
			return a.c, a.err
		}
	case <-h.done:
		return nil, net.ErrClosed
	case <-h.sock.closed:
		return nil, net.ErrClosed
	}
}

func (h *handoff) Close() error {
	h.closeOnce.Do(func() { close(h.done) })
	return nil
}

func (h *handoff) Addr() net.Addr { return h.sock.l.Addr() }
