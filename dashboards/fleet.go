package dashboards

// fleetCount selects one fleet recording rule (cluster:ocl_*, at the end of
// alerts/rollout-rules.yaml) per cluster. max, because a cluster's
// Prometheus pair records it twice.
func fleetCount(record string) string {
	return "max by (cluster) (" + record + "{" + clusterMatcher + "})"
}

// The fleet recording rules, one count per cluster.
const (
	layeredPools     = "cluster:ocl_layered_pools:sum"
	buildsRunning    = "cluster:ocl_builds_running:count"
	buildsFailing    = "cluster:ocl_builds_failing:count"
	nodesFailing     = "cluster:ocl_nodes_failing:count"
	nodesOffImage    = "cluster:ocl_nodes_off_image:count"
	poolsRollingOut  = "cluster:ocl_pools_rolling_out:count"
	alertsFiringRule = "cluster:ocl_alerts_firing:count"
)

// fleetGraph draws one fleet count per cluster over time.
func fleetGraph(title, record, description string) Panel {
	return Panel{
		Kind: Graph, Title: title, Span: 6, Height: 8, Unit: UnitCount, Min: ptr(0.0), Decimals: ptr(0),
		Description: description,
		Targets:     []Target{{Expr: fleetCount(record), Legend: "{{cluster}}"}},
	}
}

// Fleet answers, across the clusters a Thanos or ACM observability hub
// sees: which clusters have failing builds, failing nodes, rollouts in
// progress. It reads only the fleet recording rules, so a hub needs seven
// series per cluster for it; drill into one cluster with OCL / Overview.
var Fleet = Dashboard{
	UID:         "ocl-fleet",
	Title:       "OCL / Fleet",
	Fleet:       true,
	Description: "On-Cluster Layering across clusters (Thanos, ACM observability): which clusters have failing builds, failing nodes and rollouts in progress. Pick a cluster in OCL / Overview to see why.",
	Rows: []Row{
		{Title: "Clusters", Panels: []Panel{
			{
				Kind: Table, Title: "Clusters", Span: 12, Height: 10,
				Description: "One row per cluster whose exporter is scraped (a cluster whose exporter is down has no row; its OCLExporterDown alert fires there): layered pools, builds running and failing, nodes failing to update, pools rolling out and their nodes not yet on the desired image, OCL alerts firing.",
				Targets: []Target{
					{Expr: fleetCount(layeredPools)},
					{Expr: fleetCount(buildsRunning)},
					{Expr: fleetCount(buildsFailing)},
					{Expr: fleetCount(nodesFailing)},
					{Expr: fleetCount(poolsRollingOut)},
					{Expr: fleetCount(nodesOffImage)},
					{Expr: fleetCount(alertsFiringRule)},
				},
				Columns: []Column{
					{Title: "Cluster", Label: "cluster"},
					{Title: "Layered pools", Target: 0, Unit: UnitCount},
					{Title: "Builds running", Target: 1, Unit: UnitCount},
					{Title: "Builds failing", Target: 2, Unit: UnitCount},
					{Title: "Nodes failing", Target: 3, Unit: UnitCount},
					{Title: "Pools rolling out", Target: 4, Unit: UnitCount},
					{Title: "Nodes off their image", Target: 5, Unit: UnitCount},
					{Title: "OCL alerts firing", Target: 6, Unit: UnitCount},
				},
			},
		}},
		{Title: "Failures", Panels: []Panel{
			fleetGraph("Failing builds per cluster", buildsFailing,
				"MachineOSBuilds that failed, were interrupted or are retrying, per cluster. OCL / Builds of that cluster says why."),
			fleetGraph("Nodes failing to update per cluster", nodesFailing,
				"Nodes whose update fails (machine-config-daemon Degraded or Unreconcilable, MachineConfigNode NodeDegraded, image pull failing), per cluster."),
		}},
		{Title: "Rollouts", Panels: []Panel{
			fleetGraph("Nodes off their desired image per cluster", nodesOffImage,
				"Nodes whose currentImage is not yet their desiredImage, per cluster: non-zero while a rollout runs, and it should come back to 0."),
			fleetGraph("OCL alerts firing per cluster", alertsFiringRule,
				"Alerts of this bundle firing now, per cluster."),
		}},
	},
}
