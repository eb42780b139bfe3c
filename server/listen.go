package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"github.com/prometheus/exporter-toolkit/web"
	"golang.org/x/net/netutil"
)

// ListenAndServe serves srv on every --web.listen-address, each listener
// accepting at most maxConns connections at once; 0 means no cap. Without
// one, 20,000 held connections used up the file descriptors and /metrics
// stopped answering. Past the cap, a new connection waits in the kernel's
// backlog until a held one ends, which the server's header and idle
// timeouts bound. A systemd socket is served uncapped, as exporter-toolkit
// opens it.
func ListenAndServe(srv *http.Server, flags *web.FlagConfig, logger *slog.Logger, maxConns int) error {
	if maxConns <= 0 || flags.WebSystemdSocket != nil && *flags.WebSystemdSocket {
		return web.ListenAndServe(srv, flags, logger)
	}
	var listeners []net.Listener
	for _, addr := range *flags.WebListenAddresses {
		l, err := net.Listen("tcp", addr)
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

// serveCapped serves every listener behind the cap until the first ends;
// srv.Shutdown closes them all.
func serveCapped(srv *http.Server, listeners []net.Listener, flags *web.FlagConfig, logger *slog.Logger, maxConns int) error {
	errc := make(chan error, len(listeners))
	for _, l := range listeners {
		go func() { errc <- web.Serve(netutil.LimitListener(l, maxConns), srv, flags, logger) }()
	}
	return <-errc
}
