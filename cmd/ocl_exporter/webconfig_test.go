package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ocl-exporter/ocl_exporter/internal/wait"
	"github.com/ocl-exporter/ocl_exporter/test/cluster"
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
	var log cluster.SyncBuffer
	base := startExporterLogging(t, "http", http.DefaultClient, &log, "--example", "--web.config.file="+cfg)
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
	// hupRefused sends SIGHUP and waits for the exporter to log that it
	// kept the previous configuration.
	hupRefused := func(what string) {
		t.Helper()
		before := strings.Count(log.String(), notReloaded)
		hup()
		wait.For(t, reloadWait, "the log to say a reload that reads "+what+" kept the previous web config", func() error {
			if strings.Count(log.String(), notReloaded) == before {
				return fmt.Errorf("the log:\n%s", log.String())
			}
			return nil
		})
	}
	// want waits for the header: a reload happens some time after SIGHUP.
	want := func(v string) {
		t.Helper()
		wait.For(t, reloadWait, "X-Frame-Options "+v, func() error {
			if got := frame(); got != v {
				return fmt.Errorf("X-Frame-Options %q", got)
			}
			return nil
		})
	}
	want("deny")

	_ = os.Remove(cfg)
	if err := syscall.Mkfifo(cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	want("deny")
	hupRefused("a FIFO")
	want("deny")

	write("sameorigin")
	hup()
	want("sameorigin")

	_ = os.Remove(cfg)
	if err := os.Symlink("/dev/zero", cfg); err != nil {
		t.Fatal(err)
	}
	hupRefused("a link to /dev/zero")
	want("sameorigin")
}

// notReloaded is what the exporter logs when SIGHUP finds a web config it
// cannot use.
const notReloaded = "SIGHUP: the web config was not reloaded"
