package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

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
	noConfig, noSystemd := "", false
	done := make(chan error, 1)
	go func() {
		done <- serveCapped(srv, []net.Listener{l}, &web.FlagConfig{WebConfigFile: &noConfig, WebSystemdSocket: &noSystemd}, slog.New(slog.DiscardHandler), limit)
	}()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serveCapped: %v", err)
		}
	})

	for range limit + 2 { // idle connections that never send a request
		c, err := net.Dial("tcp", l.Addr().String())
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
