package dashboards

import (
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/promqltest"
)

// TestNodeStateCode evaluates the Incident node timeline on a node's update
// as the exporter reports it: targeted (desired set, daemon still Done),
// picked up (Working), an image pull failing twice before it succeeds
// (ImagePulledFromRegistry=False while the daemon stays Working), done
// (the series goes stale). Another node fails on its target (on-disk
// drift: Degraded without an update), a third stays at rest and draws
// nothing.
func TestNodeStateCode(t *testing.T) {
	expr, err := substitute(nodeStateCode)
	if err != nil {
		t.Fatal(err)
	}
	// One cluster's Prometheus (no cluster label), every pool.
	expr = strings.NewReplacer(gvars["cluster"], "", gvars["pool"], ".*").Replace(expr)
	promqltest.RunTest(t, `
load 1m
  node_off_target{node="a", pool="infra", state="Done"} _ 1 stale
  node_off_target{node="a", pool="infra", state="Working"} _ _ 1 1 1 1 1 stale
  node_update_failure_class{node="a", pool="infra", class="registry_unreachable"} _ _ _ _ 1 1 stale
  node_update_failure_class{node="c", pool="infra", class="on_disk_drift"} _ _ _ 1 1 stale
  node_update_phase{node="b", pool="infra", phase="Updated"} 1 1 1 1 1 1 1 1 1

eval range from 0 to 8m step 1m `+strings.ReplaceAll(expr, "\n", " ")+`
  {node="a", pool="infra"} _ 0 1 1 2 2 1 _ _
  {node="c", pool="infra"} _ _ _ 2 2 _ _ _ _
`, promqltest.NewTestEngine(t, false, 0, promqltest.DefaultMaxSamplesPerQuery))
}
