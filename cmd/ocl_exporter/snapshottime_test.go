package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ocl-exporter/ocl_exporter/diagnose"
	"github.com/ocl-exporter/ocl_exporter/examples"
)

// reportTime reads the time of a diagnose -o json report.
func reportTime(t *testing.T, out string) time.Time {
	t.Helper()
	var r diagnose.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v:\n%.500s", err, out)
	}
	return r.Time
}

// statusTime reads the time of /status, asked for as JSON.
func statusTime(t *testing.T, base string) time.Time {
	t.Helper()
	return statusJSON(t, base).Time
}

// statusJSON reads the report of /status, asked for as JSON.
func statusJSON(t *testing.T, base string) diagnose.Report {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+"/status", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r diagnose.Report
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSnapshotEvaluatedAtItsCaptureTime: examples/snapshot, read as a
// snapshot (make run), and a capture are evaluated at the time they were
// taken, by diagnose and by the exporter's /status; --now evaluates them
// at the current time, --time at the one given.
func TestSnapshotEvaluatedAtItsCaptureTime(t *testing.T) {
	const example = "../../examples/snapshot"
	out, _ := diagnoseRun(t, "--snapshot="+example, "-o", "json")
	if got := reportTime(t, out); !got.Equal(examples.Captured) {
		t.Errorf("diagnose --snapshot=%s evaluated at %s, want its capture time %s", example, got, examples.Captured)
	}
	leftoversFailed := regexp.MustCompile(`"id": "build.leftovers",\s*"title": "[^"]*",\s*"status": "failed"`)
	if leftoversFailed.MatchString(out) {
		t.Errorf("diagnose of the example at its capture time fails build.leftovers:\n%s", out)
	}
	if got := statusTime(t, startExporter(t, "--snapshot="+example)); !got.Equal(examples.Captured) {
		t.Errorf("/status of --snapshot=%s evaluated at %s, want %s", example, got, examples.Captured)
	}

	before := time.Now().Add(-time.Minute)
	out, _ = diagnoseRun(t, "--snapshot="+example, "--now", "-o", "json")
	if got := reportTime(t, out); got.Before(before) {
		t.Errorf("diagnose --now evaluated at %s, want the current time", got)
	}
	if !leftoversFailed.MatchString(out) { // a year later, a failed build's objects are old
		t.Errorf("diagnose --now of the example passes build.leftovers")
	}
	if got := statusTime(t, startExporter(t, "--snapshot="+example, "--now")); got.Before(before) {
		t.Errorf("/status with --now evaluated at %s, want the current time", got)
	}
	out, _ = diagnoseRun(t, "--snapshot="+example, "--time=2025-10-18T00:00:00Z", "-o", "json")
	if got := reportTime(t, out); !got.Equal(time.Date(2025, 10, 18, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("diagnose --time evaluated at %s", got)
	}

	// A capture records its time; diagnose reads it back.
	dir := t.TempDir() + "/"
	capture(t, "--example", "--output="+dir)
	b, err := os.ReadFile(filepath.Join(dir, "secrets.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^time: "([^"]+)"$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("secrets.yaml records no time:\n%s", b)
	}
	at, err := time.Parse(time.RFC3339, string(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	out, _ = diagnoseRun(t, "--snapshot="+dir, "-o", "json")
	if got := reportTime(t, out); !got.Equal(at) {
		t.Errorf("diagnose of a capture evaluated at %s, want its capture time %s", got, at)
	}
}

// TestMustGatherEvaluatedAtItsTimestamp: a must-gather is evaluated when
// its timestamp file says it was taken; a snapshot that records no time
// says once that it is evaluated now.
func TestMustGatherEvaluatedAtItsTimestamp(t *testing.T) {
	out, _ := diagnoseRun(t, "--snapshot=../../testdata/must-gathers/4.19-seed004-build-failed", "-o", "json")
	if got, want := reportTime(t, out), time.Date(2025, 10, 17, 13, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("evaluated at %s, want the timestamp file's newest line, %s", got, want)
	}

	var logs bytes.Buffer
	old := stdout
	stdout = io.Discard
	t.Cleanup(func() { stdout = old })
	_ = run(context.Background(), []string{"diagnose", "--snapshot=../../testdata/scenarios/healthy-rollout-done", "-o", "json"}, &logs)
	if n := strings.Count(logs.String(), "the snapshot records no capture time: evaluated at the current time"); n != 1 {
		t.Errorf("said %d times that the snapshot is evaluated now, want once:\n%s", n, logs.String())
	}
}
