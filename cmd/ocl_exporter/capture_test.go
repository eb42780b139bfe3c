package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/ocl-exporter/ocl_exporter/source"
)

func TestEveryWatchedResourceHasAKind(t *testing.T) {
	for _, r := range source.Resources() {
		if kinds[r.GVR.Resource] == "" {
			t.Errorf("%s: add its kind to capture's kinds", r.Name)
		}
	}
}

// capture runs `ocl_exporter capture` with args.
func capture(t *testing.T, args ...string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := run(ctx, append([]string{"capture", "--log.level=warn"}, args...), io.Discard); err != nil {
		t.Fatalf("capture %v: %v", args, err)
	}
}

// TestCaptureRoundTrips captures the example through the exporter's own
// informers and transforms, into a directory and into one file: diagnose
// and the exporter read the capture back as they read the example.
func TestCaptureRoundTrips(t *testing.T) {
	dir := t.TempDir() + "/"
	capture(t, "--example", "--output="+dir)
	file := filepath.Join(t.TempDir(), "capture.yaml")
	capture(t, "--example", "--output="+file)

	b, err := os.ReadFile(filepath.Join(dir, "secrets.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "# ocl_exporter capture of secrets at ") || strings.Contains(string(b), "\ndata:") {
		t.Errorf("secrets.yaml: want a header and metadata only:\n%s", b)
	}

	at := "--time=2025-10-17T13:00:00Z"
	want, wantCode := diagnoseRun(t, "--example", "-o", "json", at)
	for _, snap := range []string{dir, file} {
		got, code := diagnoseRun(t, "--snapshot="+snap, "-o", "json", at)
		if code != wantCode {
			t.Errorf("%s: exit status %d, the example's %d", snap, code, wantCode)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("diagnose of the capture %s differs from the example's (-example +capture):\n%s", snap, d)
		}
	}

	example, captured := scrape(t, startExporter(t, "--example")), scrape(t, startExporter(t, "--snapshot="+dir))
	for name := range example {
		if runtimeMetric(name) || strings.HasPrefix(name, "ocl_exporter_") {
			delete(example, name)
			delete(captured, name)
		}
	}
	for name := range captured {
		if runtimeMetric(name) || strings.HasPrefix(name, "ocl_exporter_") {
			delete(captured, name)
		}
	}
	if d := cmp.Diff(example, captured, protocmp.Transform()); d != "" {
		t.Errorf("the exporter's metrics of the capture differ from the example's (-example +capture):\n%s", d)
	}
}
