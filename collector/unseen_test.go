package collector

import (
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
)

// TestUnseenLayeringClaimsNothing: a snapshot without MachineOSConfigs
// (a must-gather of 4.16 or 4.17) of a layered pool exports neither
// ocl_pool_layered (0 would say "not layered") nor ocl_machineosconfigs
// (0 would say none exists, and that no builder is needed).
func TestUnseenLayeringClaimsNothing(t *testing.T) {
	dir := sourcetest.Without(t, filepath.Join(scenarios, "v416-build-pod-failed"), sourcetest.OlderMustGather...)
	s := sourcetest.Snapshot(t, dir)
	c := stageCollector{newConfigStage(), view{cluster: s.Cluster(sourcetest.Now), status: s.Status()}}
	r := stageCollector{newRolloutStage(), c.view}
	if n := testutil.CollectAndCount(c, "ocl_machineosconfigs"); n != 0 {
		t.Errorf("ocl_machineosconfigs: %d series, want none", n)
	}
	if n := testutil.CollectAndCount(r, "ocl_pool_layered"); n != 0 {
		t.Errorf("ocl_pool_layered: %d series, want none", n)
	}
	if n := testutil.CollectAndCount(r, "ocl_pool_status_machines"); n == 0 {
		t.Error("ocl_pool_status_machines: no series: the pools are captured")
	}
}
