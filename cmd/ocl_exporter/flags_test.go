package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBadFlagsFailNamingTheFlag: every value that used to panic, hang or
// silently mean something else fails at start, naming the flag and what it
// accepts.
func TestBadFlagsFailNamingTheFlag(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "kubeconfig")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--web.telemetry-path="}, `--web.telemetry-path "" must be`},
		{[]string{"--web.telemetry-path=metrics"}, `--web.telemetry-path "metrics" must be a clean absolute path`},
		{[]string{"--web.telemetry-path=/healthz"}, `--web.telemetry-path "/healthz" collides with the healthz endpoint`},
		{[]string{"--web.telemetry-path=/status"}, `--web.telemetry-path "/status" collides with the status endpoint`},
		{[]string{"--web.telemetry-path=/{x}"}, `--web.telemetry-path "/{x}" must be`},
		{[]string{"--web.listen-address="}, `--web.listen-address: "": missing port in address; accepted: host:port`},
		{[]string{"--web.listen-address=localhost"}, `--web.listen-address: "localhost"`},
		{[]string{"--web.listen-address=:0"}, `--web.listen-address: ":0" has no port number`},
		{[]string{"--web.max-requests=-5"}, "--web.max-requests: -5 is out of range; accepted: a whole number, 0 for no limit"},
		{[]string{"--web.max-connections=-1"}, "--web.max-connections: -1 is out of range"},
		{[]string{"--collector.render-interval=1ns"}, "--collector.render-interval: 1ns is out of range; accepted: a duration of at least 100ms"},
		{[]string{"--collector.render-interval=-1s"}, "--collector.render-interval: -1s is out of range"},
		{[]string{"--collector.build-history=abc"}, `--collector.build-history: "abc": strconv.Atoi: parsing "abc": invalid syntax; accepted: a whole number, 0 or more`},
		{[]string{"--web.max-requests=99999999999999999999"}, `--web.max-requests: "99999999999999999999": strconv.Atoi: parsing "99999999999999999999": value out of range; accepted: a whole number`},
		{[]string{"--web.max-connections=1.5"}, `--web.max-connections: "1.5": strconv.Atoi: parsing "1.5": invalid syntax`},
		{[]string{"review", "--prometheus=http://127.0.0.1:1", "--query-timeout=2000000h"}, "--query-timeout: 2000000h0m0s is out of range; accepted: a positive duration of at most 24h0m0s"},
		{[]string{"review", "--prometheus=http://127.0.0.1:1", "--query-timeout=0s"}, "--query-timeout: 0s is out of range"},
		{[]string{"--collector.build-history=-1"}, "--collector.build-history: -1 is out of range"},
		{[]string{"--auth.kubernetes.cache-ttl=1"}, `--auth.kubernetes.cache-ttl: "1": time: missing unit`},
		{[]string{"--log.level=loud"}, `--log.level: "loud"`},
		{[]string{"--mco.namespace=Not_A_Namespace"}, `--mco.namespace: "Not_A_Namespace"`},
		{[]string{"--kubeconfig=" + fifo}, `--kubeconfig: open ` + fifo + `: a FIFO, not a regular file`},
		{[]string{"--kubeconfig=" + dir}, "a directory, not a regular file"},
		{[]string{"--kubeconfig=/dev/zero"}, "--kubeconfig: open /dev/zero: a character device, not a regular file"},
		{[]string{"--web.port-forward-address=:29101"}, `--web.port-forward-address: ":29101" is not a loopback IP and a port`},
		{[]string{"--web.port-forward-address=0.0.0.0:29101"}, `--web.port-forward-address: "0.0.0.0:29101" is not a loopback IP`},
		{[]string{"--web.port-forward-address=localhost:29101"}, `--web.port-forward-address: "localhost:29101" is not a loopback IP`},
		{[]string{"--web.port-forward-address=127.0.0.1:0"}, `--web.port-forward-address: "127.0.0.1:0" is not a loopback IP and a port`},
		// The markdown report would carry a javascript: link.
		{[]string{"diagnose", "--example", "--web.runbook-url=https://x.example/a)[b](javascript:alert(1))/"}, "want an http(s) URL ending in /, without"},
		{[]string{"--web.runbook-url=https://x.example/a b/"}, "want an http(s) URL ending in /, without"},
		{[]string{"--web.runbook-url=https://x.example/<b>/"}, "want an http(s) URL ending in /, without"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			err := runWithin(t, tc.args)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run(%v) = %v, want an error containing %q", tc.args, err, tc.want)
			}
		})
	}
}

// runWithin runs the binary's run() with a free address and fails the test
// if it does not return within 10s.
func runWithin(t *testing.T, args []string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, append([]string{"--web.listen-address=" + freeAddress(t)}, args...), io.Discard)
	}()
	select {
	case err := <-errc:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("run did not return within 20s")
		return nil
	}
}

// hostileValues are tried on every flag: none may panic, and an error
// names the flag.
var hostileValues = []string{"", " ", "abc", "-5", "0", "1ns", "-1s", "99999999999999999999", "1e309", "NaN", "/", "/healthz", "metrics",
	"//", "/{x}", "/%", "\x00", "\xff", ":", "::::", "[::1", "vsock://", strings.Repeat("a", 4096), "true", "false"}

func TestNoFlagValuePanics(t *testing.T) {
	// Boolean flags take no value: kingpin answers "unexpected VALUE".
	bools := map[string]bool{"auth.kubernetes": true, "web.systemd-socket": true, "example": true}
	names := []string{"kubeconfig", "snapshot", "mco.namespace", "web.telemetry-path", "web.max-requests", "web.max-connections", "collector.build-history",
		"auth.kubernetes", "auth.kubernetes.cache-ttl", "collector.render-interval", "web.listen-address", "web.config.file",
		"web.systemd-socket", "log.level", "log.format", "example"}
	for _, name := range names {
		for _, v := range hostileValues {
			arg := fmt.Sprintf("--%s=%s", name, v)
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Errorf("%q: panic: %v", arg, p)
					}
				}()
				_, err := parseFlags([]string{arg}, io.Discard)
				if err != nil && !bools[name] && !strings.Contains(err.Error(), name) {
					t.Errorf("%.100q: %.200v does not name the flag", arg, err)
				}
			}()
		}
	}
}

// TestKubeconfigEnvIsChecked: without --kubeconfig, every file $KUBECONFIG
// lists that exists is held to the same rules; missing ones client-go
// skips, and so does the check.
func TestKubeconfigEnvIsChecked(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ok := filepath.Join(dir, "config")
	if err := os.WriteFile(ok, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	list := func(p ...string) string { return strings.Join(p, string(filepath.ListSeparator)) }
	if err := checkKubeconfig("", list(missing, ok)); err != nil {
		t.Errorf("a missing and a regular file: %v", err)
	}
	for _, env := range []string{list(ok, fifo), list(missing, "/dev/zero")} {
		err := checkKubeconfig("", env)
		if err == nil || !strings.Contains(err.Error(), "$KUBECONFIG") || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("KUBECONFIG=%s: %v, want an error naming $KUBECONFIG and the file", env, err)
		}
	}
}
