package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ocl-exporter/ocl_exporter/diagnose"
	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
)

// partialSnapshot copies the example's MachineOSConfigs, MachineOSBuilds,
// pools and nodes, as `oc get mosc,mosb,mcp,nodes -o yaml` would hold
// them: no Secret, no Deployment, nothing of the MCO namespace.
func partialSnapshot(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"machineosconfigs.yaml", "pools.yaml", "nodes.yaml", "builds/layered.yaml", "builds/infra.yaml"} {
		b, err := os.ReadFile(filepath.Join("../../examples/snapshot", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, strings.ReplaceAll(f, "/", "-")), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestKindsNotCapturedAreNotMissing: a snapshot without any Secret or
// Deployment says so, and neither the metrics nor diagnose conclude that
// the Secrets or the machine-os-builder are missing.
func TestKindsNotCapturedAreNotMissing(t *testing.T) {
	dir := partialSnapshot(t)
	base := startExporter(t, "--snapshot="+dir)
	families := scrape(t, base)
	for _, name := range []string{"mosc_secret_missing", "ocl_machine_os_builder_ready", "mosc_prebuilt_image_machineconfig_missing"} {
		if mf := families[name]; mf != nil {
			t.Errorf("%s concluded from a kind not captured: %v", name, mf)
		}
	}
	if families["mosc_pool_missing"] == nil {
		t.Error("mosc_pool_missing absent although pools were captured")
	}
	available := map[string]float64{}
	for _, m := range families["ocl_exporter_resource_available"].GetMetric() {
		available[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
	}
	if available["secrets"] != 0 || available["deployments.apps"] != 0 || available["machineosconfigs.machineconfiguration.openshift.io"] != 1 {
		t.Errorf("ocl_exporter_resource_available: %v", available)
	}
	if code, body := get(t, base+"/readyz"); code != http.StatusOK || !strings.Contains(body, "secrets: not captured by the snapshot") {
		t.Errorf("/readyz: %d %s", code, body)
	}

	out, _ := diagnoseRun(t, "--snapshot="+dir, "--output=json")
	var r diagnose.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	status := map[string]diagnose.Status{}
	for _, c := range r.Cluster {
		status[c.ID] = c.Status
	}
	for _, p := range r.Pools {
		for _, s := range p.Stages {
			for _, c := range s.Checks {
				if c.ID == diagnose.CheckSecrets {
					status[p.Name+"/"+c.ID] = c.Status
				}
				for _, f := range c.Findings {
					if f.Object.Kind == "Secret" && c.Status == diagnose.Failed {
						t.Errorf("pool %s: %s", p.Name, f.Message)
					}
				}
			}
		}
	}
	for id, want := range map[string]diagnose.Status{
		diagnose.CheckExporterAccess:       diagnose.NotCaptured,
		diagnose.CheckBuilder:              diagnose.NotCaptured,
		"gpu/" + diagnose.CheckSecrets:     diagnose.NotCaptured,
		"layered/" + diagnose.CheckSecrets: diagnose.NotCaptured,
	} {
		if status[id] != want {
			t.Errorf("%s: %q, want %q", id, status[id], want)
		}
	}
	if strings.Contains(out, "does not exist in openshift-machine-config-operator") {
		t.Errorf("diagnose says a Secret does not exist:\n%s", out)
	}
}

// TestKindCapturedEmptyIsNone: an empty List in secrets.yaml, as `oc get
// secrets -o yaml` writes it, is a real "none".
func TestKindCapturedEmptyIsNone(t *testing.T) {
	dir := partialSnapshot(t)
	if err := os.WriteFile(filepath.Join(dir, "secrets.yaml"), []byte("apiVersion: v1\nkind: List\nitems: []\nmetadata: {resourceVersion: \"\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	families := scrape(t, startExporter(t, "--snapshot="+dir))
	missing := 0
	for _, m := range families["mosc_secret_missing"].GetMetric() {
		missing += int(m.GetGauge().GetValue())
	}
	if missing == 0 {
		t.Error("Secrets captured empty, but no mosc_secret_missing says they are missing")
	}
}

// TestCutCaptureIsNotMissingSecrets: a single-file capture cut short in
// its Secrets is read with the Secrets not captured: neither the metrics
// nor diagnose say that the Secrets it lost are missing.
func TestCutCaptureIsNotMissingSecrets(t *testing.T) {
	file := filepath.Join(t.TempDir(), "capture.yaml")
	capture(t, "--example", "--output="+file)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	// Cut the file after the first Secret of the secrets section.
	section := strings.Index(string(b), "resource: secrets\n")
	first := strings.Index(string(b[section:]), "\nkind: Secret\n")
	next := strings.Index(string(b[section+first:]), "\n---\n")
	if section < 0 || first < 0 || next < 0 {
		t.Fatalf("no Secrets to cut in the capture:\n%s", b)
	}
	if err := os.WriteFile(file, b[:section+first+next+1], 0o600); err != nil {
		t.Fatal(err)
	}

	if families := scrape(t, startExporter(t, "--snapshot="+file)); families["mosc_secret_missing"] != nil {
		t.Errorf("mosc_secret_missing concluded from a cut capture: %v", families["mosc_secret_missing"])
	}
	out, _ := diagnoseRun(t, "--snapshot="+file, "--output=json")
	if strings.Contains(out, "does not exist in openshift-machine-config-operator") {
		t.Errorf("diagnose says a Secret does not exist:\n%s", out)
	}
	if !strings.Contains(out, "capture.yaml holds it incompletely") {
		t.Errorf("diagnose does not say the Secrets' file was cut:\n%.2000s", out)
	}
}

// TestStatusOfALayeredPoolWithoutItsMachineOSConfig: the exporter serving
// a snapshot that holds no MachineOSConfig (a 4.16 must-gather) shows a
// pool whose nodes run a layered image as layered and not healthy on
// /status, and exports no ocl_pool_layered 0 for it.
func TestStatusOfALayeredPoolWithoutItsMachineOSConfig(t *testing.T) {
	dir := sourcetest.Without(t, "../../testdata/scenarios/v416-build-pod-failed", sourcetest.OlderMustGather...)
	base := startExporter(t, "--snapshot="+dir)
	if mf := scrape(t, base)["ocl_pool_layered"]; mf != nil {
		t.Errorf("ocl_pool_layered concluded from MachineOSConfigs not captured: %v", mf)
	}
	r := statusJSON(t, base)
	for _, p := range r.Pools {
		if p.Name == "layered" && (!p.Layered || p.Verdict == diagnose.Healthy) {
			t.Errorf("/status: pool layered %+v, want layered and not healthy", p)
		}
	}
}
