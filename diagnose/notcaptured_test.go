package diagnose

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
)

// TestNotCapturedReport: the report of a snapshot without Secrets and
// Deployments marks the checks that read them not_captured, fails none of
// them, matches the schema and renders in every format.
func TestNotCapturedReport(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"machineosconfigs.yaml", "pools.yaml", "nodes.yaml"} {
		b, err := os.ReadFile(filepath.Join("../examples/snapshot", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s := sourcetest.Snapshot(t, dir)
	r := New(s.Cluster(sourcetest.Now), s.Status(), Options{RunbookBase: testRunbookBase})
	validate(t, compileSchema(t), r)
	if n := r.countChecks(NotCaptured); n == 0 {
		t.Error("no check not_captured")
	}
	for _, c := range r.Cluster {
		if c.ID == CheckBuilder && c.Status != NotCaptured {
			t.Errorf("%s: %s, want not_captured", c.ID, c.Status)
		}
	}
	for _, p := range r.Pools {
		for _, st := range p.Stages {
			for _, c := range st.Checks {
				if c.ID == CheckSecrets && c.Status != NotCaptured {
					t.Errorf("pool %s %s: %s, want not_captured", p.Name, c.ID, c.Status)
				}
			}
		}
	}
	for _, format := range Formats {
		var buf bytes.Buffer
		if err := Write(&buf, r, format, TextOptions{}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), "the snapshot holds no Secret at all") {
			t.Errorf("%s does not say what was not captured:\n%s", format, buf.String())
		}
	}
}
