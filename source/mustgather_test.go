package source_test

import (
	"testing"

	"github.com/ocl-exporter/ocl_exporter/analysis"
	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
)

// TestOfflineV1alpha1MustGather runs a 4.17 must-gather through the whole
// offline source: its v1alpha1 build reaches the analysis beside its v1
// pool and node.
func TestOfflineV1alpha1MustGather(t *testing.T) {
	c := sourcetest.Cluster(t, "testdata/must-gather-4.17")
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
