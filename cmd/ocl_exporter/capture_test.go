package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	"google.golang.org/protobuf/testing/protocmp"
)

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

// captureErr runs `ocl_exporter capture` with args and returns its
// standard output and error.
func captureErr(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return runOutput(t, append([]string{"capture", "--log.level=error"}, args...)...)
}

// TestCaptureNeverFollowsLinks: a link planted in the output directory or
// at the output file is replaced, never written through; a non-empty
// directory or an existing file needs --force, and --force leaves no file
// of an earlier capture behind.
func TestCaptureNeverFollowsLinks(t *testing.T) {
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(victim, filepath.Join(dir, "secrets.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stale.yaml"), []byte("apiVersion: v1\nkind: Node\nmetadata: {name: gone}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := captureErr(t, "--example", "--output="+dir); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("capture into a non-empty directory: %v, want a refusal", err)
	}
	capture(t, "--example", "--output="+dir, "--force")
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Errorf("the link's target was written: %q", b)
	}
	fi, err := os.Lstat(filepath.Join(dir, "secrets.yaml"))
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Errorf("secrets.yaml: %v %v, want a regular file, mode 0600", fi.Mode(), err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "stale.yaml")); err == nil {
		t.Error("stale.yaml of an earlier snapshot survived the capture")
	}

	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := captureErr(t, "--example", "--output="+dir, "--force"); err == nil || !strings.Contains(err.Error(), "notes.txt") {
		t.Errorf("--force over a directory holding other files: %v, want a refusal naming notes.txt", err)
	}

	file := filepath.Join(t.TempDir(), "snap.yaml")
	if err := os.Symlink(victim, file); err != nil {
		t.Fatal(err)
	}
	if _, err := captureErr(t, "--example", "--output="+file); err == nil {
		t.Error("capture over an existing path without --force succeeded")
	}
	capture(t, "--example", "--output="+file, "--force")
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Errorf("the link's target was written: %q", b)
	}
	if fi, err := os.Lstat(file); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s: %v %v, want a regular file, mode 0600", file, fi.Mode(), err)
	}
}

// TestCaptureRecordsWhatItCouldNotRead: a resource the source could not
// read is recorded as not captured, with why, and read back as such; when
// nothing could be read, capture fails naming every resource and writes
// nothing.
func TestCaptureRecordsWhatItCouldNotRead(t *testing.T) {
	out := filepath.Join(t.TempDir(), "snap") + "/"
	capture(t, "--snapshot="+partialSnapshot(t), "--output="+out)
	b, err := os.ReadFile(filepath.Join(out, "secrets.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "NOT CAPTURED") || !strings.Contains(string(b), "captured: false") {
		t.Errorf("secrets.yaml does not record that secrets were not captured:\n%s", b)
	}
	report, _ := diagnoseRun(t, "--snapshot="+out, "--output=json")
	if !strings.Contains(report, `"status": "not_captured"`) || strings.Contains(report, "Secret global-pull-secret-copy does not exist") {
		t.Errorf("diagnose of the capture does not carry not_captured through:\n%s", report)
	}

	empty := t.TempDir()
	if err := os.WriteFile(filepath.Join(empty, "svc.yaml"), []byte("apiVersion: v1\nkind: Service\nmetadata: {name: x, namespace: y}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	none := filepath.Join(t.TempDir(), "none") + "/"
	_, err = captureErr(t, "--snapshot="+empty, "--output="+none)
	if err == nil || !strings.Contains(err.Error(), "nothing captured") {
		t.Fatalf("capture of nothing: %v, want a failure", err)
	}
	for _, r := range snapshot.Resources() {
		if !strings.Contains(err.Error(), r.Name+":") {
			t.Errorf("the error does not name %s: %v", r.Name, err)
		}
	}
	if _, err := os.Stat(none); err == nil {
		t.Error("a failed capture left its output directory behind")
	}
}

func TestCaptureDashIsStandardOutput(t *testing.T) {
	for _, args := range [][]string{{"-o", "-"}, {"--output", "-"}, {"--output=-"}} {
		out, err := captureErr(t, append([]string{"--example"}, args...)...)
		if err != nil || !strings.Contains(out, "# ocl_exporter capture of secrets") {
			t.Errorf("%v: %v, output %d bytes", args, err, len(out))
		}
	}
}
