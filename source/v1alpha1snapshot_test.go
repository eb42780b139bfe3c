package source_test

import (
	"testing"

	"github.com/ocl-exporter/ocl_exporter/analysis"
	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
)

// TestOfflineV1alpha1Snapshot runs a 4.17 snapshot (oc get -o yaml of
// the v1alpha1 kinds, which no 4.17 must-gather gathers) through the whole
// offline source: its v1alpha1 build reaches the analysis beside its v1
// pool and node.
func TestOfflineV1alpha1Snapshot(t *testing.T) {
	c := sourcetest.Cluster(t, "snapshot/testdata/v1alpha1-4.17")
	if len(c.MachineConfigPools) != 1 || len(c.Nodes) != 1 || len(c.MachineOSConfigs) != 1 {
		t.Fatalf("pools %d, nodes %d, MachineOSConfigs %d; want one each", len(c.MachineConfigPools), len(c.Nodes), len(c.MachineOSConfigs))
	}
	builds := c.Builds(3)
	if len(builds) != 1 {
		t.Fatalf("got %d builds, want the v1alpha1 one", len(builds))
	}
	if b := builds[0]; b.Phase != analysis.BuildSucceeded || b.Pool != "infra" || b.Image == "" {
		t.Errorf("build read as %+v, want Succeeded for pool infra with its image", b)
	}
}
