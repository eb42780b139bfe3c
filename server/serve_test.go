package server

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/prometheus/exporter-toolkit/web"
)

// TestReloadDrainsRequestsInFlight: a reload serves new requests with the
// new web config at once, while a request in flight when it happened
// finishes, under the configuration it started with (its X-Frame-Options
// header shows which).
func TestReloadDrainsRequestsInFlight(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "web.yml")
	write := func(frame string) {
		t.Helper()
		if err := os.WriteFile(file, []byte("http_server_config:\n  headers:\n    X-Frame-Options: "+frame+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("deny")
	entered, release := make(chan struct{}), make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/slow", func(http.ResponseWriter, *http.Request) { close(entered); <-release })
	mux.HandleFunc("/fast", func(http.ResponseWriter, *http.Request) {})
	s, base := serveFile(t, file, mux, 8)
	t.Cleanup(func() { _ = s.Shutdown(t.Context()) })
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	frame := func(path string) string {
		resp, err := client.Get(base + path)
		if err != nil {
			t.Errorf("GET %s: %v", path, err)
			return ""
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.Header.Get("X-Frame-Options")
	}
	slow := make(chan string)
	go func() { slow <- frame("/slow") }()
	<-entered

	write("sameorigin")
	if _, err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := frame("/fast"); got != "sameorigin" {
		t.Errorf("a request after the reload: X-Frame-Options %q, want sameorigin", got)
	}
	close(release)
	if got := <-slow; got != "deny" {
		t.Errorf("the request in flight: X-Frame-Options %q, want deny", got)
	}
}

// TestReloadsAreNotFailures: the servers a reload replaces end because
// their listeners closed; that ends neither the serving nor Wait, which
// returns nil once Shutdown is called.
func TestReloadsAreNotFailures(t *testing.T) {
	file := filepath.Join(t.TempDir(), "web.yml")
	if err := os.WriteFile(file, []byte("http_server_config:\n  http2: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, _ := serveFile(t, file, http.NotFoundHandler(), 0)
	for range 20 {
		if _, err := s.Reload(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := s.Wait(); err != nil {
		t.Errorf("after 20 reloads and a shutdown, Wait: %v", err)
	}
}

// TestReloadAnswersEveryConnection: a connection that arrives while a
// reload replaces the servers is answered, by the old generation or the
// new one, never closed unanswered (a client does not retry a request on
// a fresh connection).
func TestReloadAnswersEveryConnection(t *testing.T) {
	file := filepath.Join(t.TempDir(), "web.yml")
	if err := os.WriteFile(file, []byte("http_server_config:\n  headers:\n    X-Frame-Options: deny\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, base := serveFile(t, file, http.NotFoundHandler(), 0)
	t.Cleanup(func() { _ = s.Shutdown(t.Context()) })
	url := base + "/"
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	done := make(chan struct{})
	failures := make(chan error, 1)
	var clients sync.WaitGroup
	for range 4 {
		clients.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				resp, err := client.Get(url)
				if err != nil {
					select {
					case failures <- err:
					default:
					}
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	for range 300 {
		if _, err := s.Reload(); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	clients.Wait()
	select {
	case err := <-failures:
		t.Errorf("a request during 300 reloads: %v", err)
	default:
	}
}

// serveFile serves h under the web config file, on a new local listener
// (capped at maxConns when it is not 0), and returns the serving and its
// base URL.
func serveFile(t *testing.T, file string, h http.Handler, maxConns int) (*Serving, string) {
	t.Helper()
	w, err := LoadWebConfig(file, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	noSystemd := false
	s, err := serveOn(ServeConfig{Handler: h, Timeouts: DefaultTimeouts, Flags: &web.FlagConfig{WebSystemdSocket: &noSystemd},
		WebConfig: w, MaxConns: maxConns, Logger: slog.New(slog.DiscardHandler)}, []net.Listener{l}, maxConns > 0)
	if err != nil {
		t.Fatal(err)
	}
	return s, "http://" + l.Addr().String()
}
