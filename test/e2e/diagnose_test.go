//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// diagnoseAt is far after every fixture's and every live timestamp, so
// that waits that depend on creationTimestamp (set by the API server when
// the test creates an object) are decided the same way live and offline.
const diagnoseAt = "--time=2100-01-01T00:00:00Z"

// runBinary runs the exporter binary with args and returns its standard
// output and exit status.
func runBinary(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), env.exporterBin, append(args, "--log.level=warn")...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return stdout.String(), exit.ExitCode()
	case err != nil:
		t.Fatalf("%s %v: %v\n%s", env.exporterBin, args, err, stderr.String())
	}
	return stdout.String(), 0
}

// diagnoseLive checks, on a played fixture, that diagnose reads the live
// cluster (as the exporter's ServiceAccount) as it reads the fixture's
// files, that a capture of the cluster reads back as the cluster itself,
// and that the exporter serves the capture's metrics as the live ones.
func diagnoseLive(t *testing.T, dir string) {
	t.Helper()
	kubeconfig := "--kubeconfig=" + env.cluster.ExporterKubeconfig
	live, liveCode := runBinary(t, "diagnose", kubeconfig, "-o", "json", diagnoseAt)
	files, filesCode := runBinary(t, "diagnose", "--snapshot="+dir, "-o", "json", diagnoseAt)
	if liveCode != filesCode {
		t.Errorf("diagnose exits %d live, %d on the files", liveCode, filesCode)
	}
	t.Logf("diagnose live: exit status %d, %d bytes of JSON", liveCode, len(live))
	// "since" of objects the test created is the API server's
	// creationTimestamp, not the fixture's.
	if d := cmp.Diff(withoutSince(t, files), withoutSince(t, live)); d != "" {
		t.Errorf("diagnose live differs from diagnose of the files (-files +live):\n%s", d)
	}

	capture := filepath.Join(t.TempDir(), "capture") + "/"
	if out, code := runBinary(t, "capture", kubeconfig, "--output="+capture); code != 0 {
		t.Fatalf("capture exits %d: %s", code, out)
	}
	captured, capturedCode := runBinary(t, "diagnose", "--snapshot="+capture, "-o", "json", diagnoseAt)
	if capturedCode != liveCode {
		t.Errorf("diagnose exits %d on the capture, %d live", capturedCode, liveCode)
	}
	if d := cmp.Diff(live, captured); d != "" {
		t.Errorf("diagnose of the capture differs from diagnose live (-live +capture):\n%s", d)
	}
	scrape, err := env.exporter.scrape(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(clusterSeries(scrape), clusterSeries(offline(t, capture))); d != "" {
		t.Errorf("the exporter's metrics of the capture differ from the live scrape (-live +capture):\n%s", d)
	}
}

// withoutSince decodes a JSON report and drops every "since".
func withoutSince(t *testing.T, report string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(report), &v); err != nil {
		t.Fatalf("%v:\n%s", err, report)
	}
	var strip func(any)
	strip = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			delete(x, "since")
			for _, e := range x {
				strip(e)
			}
		case []any:
			for _, e := range x {
				strip(e)
			}
		}
	}
	strip(v)
	return v
}
