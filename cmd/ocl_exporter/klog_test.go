package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/common/promslog"
	"k8s.io/klog/v2"
)

// routedKlog routes klog through the logger the flags configure, into
// the returned buffer, until the test ends.
func routedKlog(t *testing.T, flags ...string) *bytes.Buffer {
	t.Helper()
	o, err := parseFlags(append([]string{"--example"}, flags...), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	o.log.Writer = &out
	routeKlog(promslog.New(o.log))
	t.Cleanup(func() { routeKlog(slog.New(slog.DiscardHandler)) })
	return &out
}

// TestKlogIsDebugOnly: client-go's lines, errors included, show only
// with --log.level=debug, in the format the flags ask for.
func TestKlogIsDebugOnly(t *testing.T) {
	out := routedKlog(t, "--log.format=json", "--log.level=info")
	klog.ErrorS(nil, "Failed to watch", "reflector", "k8s.io/client-go/informers")
	klog.Flush()
	if out.Len() != 0 {
		t.Errorf("client-go's error shown at --log.level=info:\n%s", out)
	}

	out = routedKlog(t, "--log.format=json", "--log.level=debug")
	klog.ErrorS(nil, "Failed to watch", "reflector", "k8s.io/client-go/informers")
	klog.Flush()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("want the error, as one JSON line; got\n%s", out.String())
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatalf("not JSON (--log.format=json): %v: %s", err, lines[0])
	}
	if rec["msg"] != "Failed to watch" || rec["level"] != "DEBUG" || rec["klog_level"] != "ERROR" || rec["component"] != "client-go" {
		t.Errorf("record %v", rec)
	}
}

// TestKlogNamedLoggerKeysOnce: klog writes "logger" for a named logger
// (the reflector's); the exporter's attribute must not repeat the key.
func TestKlogNamedLoggerKeysOnce(t *testing.T) {
	out := routedKlog(t, "--log.format=json", "--log.level=debug")

	klog.Background().WithName("reflector").Error(nil, "Failed to watch")
	klog.Flush()
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		keys := map[string]int{}
		dec := json.NewDecoder(strings.NewReader(line))
		if _, err := dec.Token(); err != nil { // {
			t.Fatalf("not JSON: %s", line)
		}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				t.Fatal(err)
			}
			keys[k.(string)]++
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
		}
		for k, n := range keys {
			if n > 1 {
				t.Errorf("key %q %d times in %s", k, n, line)
			}
		}
	}
}
