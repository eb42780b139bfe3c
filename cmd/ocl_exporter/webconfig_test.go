package main

import (
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestWebConfigReadOnceReloadedOnSIGHUP: the web config is read at start
// and on SIGHUP only. A FIFO or a link to /dev/zero put in its place
// neither hangs nor crashes the exporter: requests go on with the last
// good configuration (its X-Frame-Options header shows which), a SIGHUP
// that reads a bad file keeps it, one that reads a good file replaces it.
func TestWebConfigReadOnceReloadedOnSIGHUP(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "web.yml")
	write := func(frame string) {
		t.Helper()
		_ = os.Remove(cfg)
		if err := os.WriteFile(cfg, []byte("http_server_config:\n  headers:\n    X-Frame-Options: "+frame+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("deny")
	base := startExporter(t, "--example", "--web.config.file="+cfg)
	client := &http.Client{Timeout: 10 * time.Second}
	frame := func() string {
		t.Helper()
		resp, err := client.Get(base + "/healthz")
		if err != nil {
			t.Fatalf("GET /healthz: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /healthz: %s", resp.Status)
		}
		return resp.Header.Get("X-Frame-Options")
	}
	hup := func() {
		t.Helper()
		if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
	}
	// want waits for the header: a reload happens some time after SIGHUP.
	want := func(v string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for got := frame(); got != v; got = frame() {
			if time.Now().After(deadline) {
				t.Fatalf("X-Frame-Options %q, want %q", got, v)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	want("deny")

	_ = os.Remove(cfg)
	if err := syscall.Mkfifo(cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	want("deny")
	hup()
	time.Sleep(100 * time.Millisecond) // a reload that would take the FIFO
	want("deny")

	write("sameorigin")
	hup()
	want("sameorigin")

	_ = os.Remove(cfg)
	if err := os.Symlink("/dev/zero", cfg); err != nil {
		t.Fatal(err)
	}
	hup()
	time.Sleep(100 * time.Millisecond)
	want("sameorigin")
}
