package dashboards

import "strings"

// Every selector goes through pooled or clustered, so none forgets the
// cluster (and, where the metric has one, the pool) filter.
const (
	clusterMatcher = `cluster=~"$cluster"`
	poolMatcher    = `pool=~"$pool"`
)

// pooled selects a metric with a pool label in the chosen cluster and pools.
func pooled(metric string, matchers ...string) string {
	return metric + "{" + strings.Join(append(matchers, clusterMatcher, poolMatcher), ", ") + "}"
}

// clustered selects a metric without a pool label in the chosen cluster.
func clustered(metric string, matchers ...string) string {
	return metric + "{" + strings.Join(append(matchers, clusterMatcher), ", ") + "}"
}

// by aggregates with max over the labels kept, dropping the scrape's
// job, instance and namespace labels so tables merge on what they show.
func by(labels, expr string) string { return "max by (" + labels + ") (" + expr + ")" }

// machines is one of the pool's machine counts, one series per pool.
func machines(metric string) string {
	return by("pool", pooled(metric))
}

// rolloutProgress is, per layered pool, the share of its machines on the
// pool's rendered config and the MachineOSConfig's current image: a
// MachineConfig that only changes files keeps the image, so the image
// alone would read 100% (no series for pools that are not layered, have
// no image yet or have no machines).
var rolloutProgress = machines("ocl_pool_nodes_on_target") + " / (" + machines("ocl_pool_status_machines") + " > 0) and on (pool) " +
	by("pool", pooled("ocl_pool_layered")) + " == 1"

// poolPaused is 1 per paused pool: the MCO targets none of its nodes, so
// a rollout that does not move may be waiting on purpose.
var poolPaused = by("pool", pooled("ocl_pool_paused"))

var (
	buildStart = pooled("mosb_build_start_timestamp_seconds")
	buildEnd   = pooled("mosb_build_end_timestamp_seconds")
	// offImage is per pool the nodes off their desired image, from the
	// pool's count rather than every node's series.
	offImage = machines("ocl_pool_nodes_off_image")
	// count(x) of nothing is no data; a zero reads better on a singlestat.
	orZero = " or vector(0)"
)

// Panels shown on the overview and on a drill-down.

func rolloutProgressGraph() Panel {
	return Panel{
		Kind: Graph, Title: "Rollout progress on the current config and image", Span: 6, Height: 8,
		Description: "Per layered pool, the share of its machines whose currentConfig is the pool's rendered config and whose currentImage is the image the MachineOSConfig currently targets (ocl_pool_nodes_on_target / ocl_pool_status_machines). It climbs to 100% as nodes apply a new config or reboot into a new image, and drops when the pool gets a new rendered config.",
		Unit:        UnitRatio, Min: ptr(0.0), Max: ptr(1.0),
		Targets: []Target{{Expr: rolloutProgress, Legend: "{{pool}}"}},
	}
}

func nodesOffImageTable() Panel {
	return Panel{
		Kind: Table, Title: "Nodes off their desired image or config", Span: 6, Height: 8,
		Description: "Nodes image mode concerns whose desiredImage or desiredConfig annotation differs from the current one (a MachineConfig change that keeps the image moves the config only), with the machine-config-daemon state (empty when the node has no state annotation). Normal while a rollout runs; a node that stays here is stuck: see the Rollout dashboard.",
		Targets:     []Target{{Expr: by("pool, node, state", pooled("node_off_target"))}},
		Columns:     []Column{{Title: "Pool", Label: "pool"}, {Title: "Node", Label: "node"}, {Title: "MCD state", Label: "state"}},
	}
}

func failingBuildsTable() Panel {
	return Panel{
		Kind: Table, Title: "Failing builds", Span: 12, Height: 8,
		Description: "MachineOSBuilds that failed, were interrupted, or are retrying with failed or stuck build pods, with the parsed cause (docs/classes.md) and the line of the error text that decided it.",
		Targets:     []Target{{Expr: by("pool, machineosbuild, class, excerpt", pooled("mosb_failure_info"))}},
		Columns: []Column{
			{Title: "Pool", Label: "pool"}, {Title: "Build", Label: "machineosbuild"},
			{Title: "Class", Label: "class"}, {Title: "Excerpt", Label: "excerpt"},
		},
	}
}

func buildsByPhaseGraph() Panel {
	return Panel{
		Kind: Graph, Title: "Builds by phase", Span: 6, Height: 8, Stack: true,
		Description: "Exported MachineOSBuilds (each pool's current build and its recent history) by phase. Failed or Interrupted growing means new builds are failing.",
		Unit:        UnitCount, Min: ptr(0.0), Decimals: ptr(0),
		Targets: []Target{{Expr: "sum by (phase) (" + pooled("mosb_build_phase") + ")", Legend: "{{phase}}"}},
	}
}
