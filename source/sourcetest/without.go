package sourcetest

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ocl-exporter/ocl_exporter/test/scenario"
)

// OlderMustGather lists the files of the kinds a must-gather of OpenShift
// 4.16 or 4.17 does not gather (openshift/must-gather
// collection-scripts/gather_ppc; the machine-config ClusterOperator's
// relatedObjects do not list them).
var OlderMustGather = []string{"machineosconfigs.yaml", "machineosbuilds.yaml", "machineconfignodes.yaml"}

// Without copies the fixture tree dir (a seed scenario whole:
// test/scenario) into a temporary directory, less the files with the
// given base names, and returns the copy.
func Without(t testing.TB, dir string, names ...string) string {
	t.Helper()
	out := t.TempDir()
	dir = scenario.Dir(t, dir)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || slices.Contains(names, d.Name()) {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(out, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(out, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
