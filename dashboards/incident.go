package dashboards

// The recording rules OCL / Incident draws (alerts/machineosbuild-rules.yaml
// and alerts/rollout-rules.yaml).
const (
	buildPhaseCode = "machineosbuild:mosb_build_phase:code"
	buildDuration  = "machineosbuild:mosb_build_duration_seconds"
	nodesOffTarget = "pool:ocl_nodes_off_target:count"
)

// buildPhases name the values of buildPhaseCode.
var buildPhases = []State{
	{0, "Initial", Blue}, {1, "Prepared", Blue}, {2, "Building", Yellow},
	{3, "Succeeded", Green}, {4, "Failed", Red}, {5, "Interrupted", Orange},
}

// nodeStates name the values of nodeStateCode.
var nodeStates = []State{{0, "Targeted", Blue}, {1, "Working", Yellow}, {2, "Failing", Red}}

// nodeStateCode is, for each node of the chosen pools while it is off its
// target config or image or failing, where it is: targeted but not picked
// up yet by its machine-config-daemon, Working, or failing (Degraded,
// Unreconcilable, or an update error the daemon has not turned into
// Degraded yet). It reads node_off_target and node_update_failure_class,
// which have series only for such nodes: a node at rest is a gap, and the
// cost follows the nodes in flight, not the cluster (docs/performance.md).
// Each side is reduced to one series a node before the or, which keeps
// the first it finds; each series is read once.
var nodeStateCode = by("pool, node", pooled("node_update_failure_class")) + " * 2" +
	" or " + by("pool, node", pooled("node_off_target", `state="Working"`)) +
	" or " + by("pool, node", pooled("node_off_target", `state!="Working"`)) + " * 0"

// Incident is the timeline of an incident over the range the reader
// picks: each build's phases, each node's state, the nodes off target, the
// classifier's excerpts and the OCL alerts as annotations. Grafana only:
// the console draws no state timeline.
var Incident = Dashboard{
	UID:         "ocl-incident",
	Title:       "OCL / Incident",
	GrafanaOnly: true,
	Description: "The timeline of an OCL incident over the time range you pick: build phases and node states per pool, nodes off target, the parsed causes with their excerpts, OCL alerts as annotations. ocl_exporter review writes the same timeline as text (docs/review.md).",
	Rows: []Row{
		{Title: "Builds", Panels: []Panel{
			{
				Kind: StateTimeline, Title: "Build phases", Span: 12, Height: 8, States: buildPhases,
				Description: "Each MachineOSBuild's phase over time (machineosbuild:mosb_build_phase:code): Prepared and Building, then Succeeded, Failed or Interrupted. A build the MCO deleted ends where its series ends.",
				Targets:     []Target{{Expr: by("pool, machineosbuild", pooled(buildPhaseCode)), Legend: "{{pool}} {{machineosbuild}}"}},
			},
			{
				Kind: Graph, Title: "Build duration", Span: 6, Height: 8, Unit: UnitSeconds, Min: ptr(0.0),
				Description: "How long each build ran (machineosbuild:mosb_build_duration_seconds): growing while it builds, flat once it ended. OCLMachineOSBuildTooLong fires past ocl:build_max_duration_seconds.",
				Targets:     []Target{{Expr: by("pool, machineosbuild", pooled(buildDuration)), Legend: "{{pool}} {{machineosbuild}}"}},
			},
			causesInRange("Build failures in the range", "a build", "mosb_failure_info", "machineosbuild", "Build"),
		}},
		{Title: "Rollout", Panels: []Panel{
			{
				Kind: StateTimeline, Title: "Node states", Span: 12, Height: 10, States: nodeStates,
				Description: "Each node of the pool while it is off its target config or image or failing (node_off_target, node_update_failure_class): Targeted until its machine-config-daemon picks the update up, Working while it applies it, Failing (Degraded, Unreconcilable, or an update error; the class is in the table beside). A node on its target and not failing is a gap, so only the nodes the rollout moved are drawn.",
				Targets:     []Target{{Expr: nodeStateCode, Legend: "{{pool}} {{node}}"}},
			},
			{
				Kind: Graph, Title: "Nodes off target", Span: 6, Height: 8, Unit: UnitCount, Min: ptr(0.0), Decimals: ptr(0),
				Description: "Per pool, the nodes not on their target config or image (pool:ocl_nodes_off_target:count): it rises when the pool gets a new config or image and comes back to 0 when the rollout is done.",
				Targets:     []Target{{Expr: by("pool", pooled(nodesOffTarget)), Legend: "{{pool}}"}},
			},
			causesInRange("Node failures in the range", "a failing node", "node_update_failure_info", "node", "Node"),
		}},
		{Title: "Alerts", Panels: []Panel{
			{
				Kind: Table, Title: "OCL alerts that fired in the range", Span: 12, Height: 8,
				Description: "Every OCL alert that fired at some moment of the range, with its identifying labels; the annotations mark when. Alerts without a pool (the exporter, the operator, the builder) are listed for every pool.",
				Targets: []Target{{Expr: by("alertname, severity, pool, machineosbuild, node, class",
					`max_over_time(ALERTS{alertstate="firing", alertname=~"OCL.+", `+clusterMatcher+`, pool=~"$pool|"}[$__range])`)}},
				Columns: []Column{
					{Title: "Alert", Label: "alertname"}, {Title: "Severity", Label: "severity"}, {Title: "Pool", Label: "pool"},
					{Title: "Build", Label: "machineosbuild"}, {Title: "Node", Label: "node"}, {Title: "Class", Label: "class"},
				},
			},
		}},
	},
}

// causesInRange tables every cause the classifier read for an object (of
// label object, titled column) at some moment of the range, from the
// failure info metric, with the excerpt that decided it.
func causesInRange(title, what, metric, object, column string) Panel {
	return Panel{
		Kind: Table, Title: title, Span: 6, Height: 8,
		Description: "Every cause the classifier read for " + what + " at some moment of the range, with the excerpt that decided it (docs/classes.md).",
		Targets:     []Target{{Expr: by("pool, "+object+", class, excerpt", "max_over_time("+pooled(metric)+"[$__range])")}},
		Columns: []Column{
			{Title: "Pool", Label: "pool"}, {Title: column, Label: object},
			{Title: "Class", Label: "class"}, {Title: "Excerpt", Label: "excerpt"},
		},
	}
}
