package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ocl-exporter/ocl_exporter/diagnose"
	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
)

// diagnoseRun runs the binary's run() with args and returns its output
// and exit status.
func diagnoseRun(t *testing.T, args ...string) (string, int) {
	t.Helper()
	out, err := runOutput(t, append([]string{"diagnose", "--log.level=warn"}, args...)...)
	return out, exitCodeOf(err)
}

// runOutput runs the binary's run() with args and returns its standard
// output and error.
func runOutput(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	old := stdout
	stdout = &out
	t.Cleanup(func() { stdout = old })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := run(ctx, args, io.Discard)
	return out.String(), err
}

// TestDiagnoseExample is the definition of done: the three failing
// stages of the example, with cause, evidence, runbook and next commands,
// and exit status 1.
func TestDiagnoseExample(t *testing.T) {
	out, code := diagnoseRun(t, "--example")
	if code != 1 {
		t.Errorf("exit status %d, want 1 (a problem found)", code)
	}
	for _, want := range []string{
		"Pool gpu: stage 1 MachineOSConfig failed", "secret_not_found", "MachineOSConfig/gpu spec.renderedImagePushSecret.name",
		"Pool layered: stage 2 MachineOSBuild failed", "containerfile_command_failed", "OCLMachineOSBuildFailed.md",
		"oc -n openshift-machine-config-operator logs",
		"Pool infra: stage 3 Rollout failed", "image_not_found", "OCLNodeUpdateFailing.md",
		"oc get machineconfignode ip-10-0-75-69.us-east-2.compute.internal",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("diagnose --example does not say %q:\n%s", want, out)
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if len([]rune(l)) > diagnose.Width && !strings.Contains(l, "://") && !strings.HasPrefix(strings.TrimSpace(l), "jsonpath=") &&
			!strings.HasPrefix(strings.TrimSpace(l), "custom-columns=") && !strings.HasPrefix(strings.TrimSpace(l), "sha256:") {
			t.Errorf("line wider than %d columns: %q", diagnose.Width, l)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Error("colour codes written to a non-terminal")
	}
}

func TestDiagnoseOutputsAndPool(t *testing.T) {
	// The cluster checks concern every pool: the example's Degraded
	// operator makes even its healthy edge pool's report a problem.
	out, code := diagnoseRun(t, "--example", "--output=json", "--pool=edge")
	if code != 1 {
		t.Errorf("--pool=edge: exit status %d, want 1", code)
	}
	var r diagnose.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("--output=json: %v", err)
	}
	if len(r.Pools) != 1 || r.Pools[0].Name != "edge" {
		t.Errorf("--pool=edge reported %+v", r.Pools)
	}
	if out, code := diagnoseRun(t, "--example", "-o", "markdown", "--pool=layered"); code != 1 || !strings.HasPrefix(out, "# OCL diagnosis: problem") {
		t.Errorf("markdown: exit %d, output:\n%s", code, out)
	}
	if _, code := diagnoseRun(t, "--example", "--pool=nosuchpool"); code != 2 {
		t.Errorf("--pool=nosuchpool: exit status %d, want 2", code)
	}
	if _, code := diagnoseRun(t, "--snapshot=../../testdata/scenarios/healthy-rollout-done", "--pool=layered"); code != 0 {
		t.Errorf("healthy scenario: exit status %d, want 0", code)
	}
	// The scenario holds no MachineOSConfig file: captured as an empty
	// list, none exists; not captured, the pool whose node still runs a
	// layered image is layered for all the snapshot tells.
	revert := sourcetest.Without(t, "../../testdata/scenarios/stage3-revert-to-non-layered")
	if out, code := diagnoseRun(t, "--snapshot="+revert, "--time=2025-10-17T13:00:00Z"); code != 2 || !strings.Contains(out, "pool(s) infra use image mode") {
		t.Errorf("MachineOSConfigs not captured: exit status %d, want 2 naming pool infra:\n%s", code, out)
	}
	if err := os.WriteFile(filepath.Join(revert, "machineosconfigs.yaml"), []byte("apiVersion: v1\nkind: List\nitems: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := diagnoseRun(t, "--snapshot="+revert, "--time=2025-10-17T13:00:00Z"); code != 2 || !strings.Contains(out, "no MachineOSConfig exists") {
		t.Errorf("no MachineOSConfig: exit status %d, want 2:\n%s", code, out)
	}
	if _, code := diagnoseRun(t, "--example", "--output=yaml"); code != 2 {
		t.Errorf("--output=yaml: exit status %d, want 2", code)
	}
	if _, code := diagnoseRun(t, "--example", "--web.runbook-url=runbooks/"); code != 2 {
		t.Errorf("a relative --web.runbook-url: exit status %d, want 2 (cannot diagnose)", code)
	}
	if _, code := diagnoseRun(t, "--snapshot=/nonexistent"); code != 2 {
		t.Errorf("unreadable snapshot: exit status %d, want 2", code)
	}
}

// TestStatusPage serves the example: /status names the failing stages and
// links the runbooks under --web.runbook-url, and the landing page links it.
func TestStatusPage(t *testing.T) {
	base := startExporter(t, "--example", "--web.runbook-url=https://runbooks.example.com/ocl/")
	code, body := getAccepting(t, base+"/status", "text/html")
	if code != http.StatusOK {
		t.Fatalf("/status: %d %s", code, body)
	}
	// curl, or anything that asks for no format, gets what diagnose
	// prints.
	if _, text := get(t, base+"/status?pool=layered"); !strings.Contains(text, "Pool layered: stage 2 MachineOSBuild failed") || strings.Contains(text, "Pool infra") {
		t.Errorf("/status?pool=layered without Accept is not the text report of pool layered:\n%s", text)
	}
	for _, want := range []string{"Stage 2 MachineOSBuild", "containerfile_command_failed", `href="https://runbooks.example.com/ocl/OCLMachineOSBuildFailed.md"`} {
		if !strings.Contains(body, want) {
			t.Errorf("/status does not contain %q", want)
		}
	}
	if strings.Contains(body, "<script") {
		t.Error("/status uses JavaScript")
	}
	if _, landing := get(t, base+"/"); !strings.Contains(landing, `href="/status"`) {
		t.Error("the landing page does not link /status")
	}
}

// TestDiagnoseLogsOnlyWarnings: the report is the output; the informers'
// progress goes to stderr only when --log.level asks for it.
func TestDiagnoseLogsOnlyWarnings(t *testing.T) {
	for _, tc := range []struct {
		args []string
		info bool
	}{
		{[]string{"diagnose", "--example"}, false},
		{[]string{"diagnose", "--example", "--log.level=info"}, true},
	} {
		old := stdout
		stdout = io.Discard
		var logs bytes.Buffer
		err := run(context.Background(), tc.args, &logs)
		stdout = old
		if exitCodeOf(err) != 1 {
			t.Fatalf("%v: exit status %d, want 1", tc.args, exitCodeOf(err))
		}
		if got := strings.Contains(logs.String(), "level=INFO"); got != tc.info {
			t.Errorf("%v: info lines logged %v, want %v:\n%s", tc.args, got, tc.info, logs.String())
		}
	}
}
