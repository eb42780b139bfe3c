package dashboards

// Rollout drills into stage 3: per pool and per node, how far the new
// image has got and why a node does not take it.
var Rollout = Dashboard{
	UID:         "ocl-rollout",
	Title:       "OCL / Rollout",
	Description: "On-Cluster Layering stage 3: pool machine counts and conditions, rollout progress on the current image, and per node the image mismatch, machine-config-daemon state, update step and failure cause.",
	Rows: []Row{
		{Title: "Pools", Panels: []Panel{
			{
				Kind: Table, Title: "Pool machines", Span: 12, Height: 7,
				Description: "Machine counts as each MachineConfigPool reports them, plus the machines on the MachineOSConfig's current image (layered pools only), the rollout progress, and whether the pool is paused: the MCO updates no node of a paused pool, so its nodes wait on purpose.",
				Targets: []Target{
					{Expr: machines("ocl_pool_status_machines")}, {Expr: machines("ocl_pool_status_machines_ready")}, {Expr: machines("ocl_pool_status_machines_updated")},
					{Expr: machines("ocl_pool_status_machines_unavailable")}, {Expr: machines("ocl_pool_status_machines_degraded")},
					{Expr: machines("ocl_pool_nodes_on_current_image")}, {Expr: rolloutProgress}, {Expr: poolPaused},
				},
				Columns: []Column{
					{Title: "Pool", Label: "pool"},
					{Title: "Total", Target: 0, Unit: UnitCount},
					{Title: "Ready", Target: 1, Unit: UnitCount},
					{Title: "Updated", Target: 2, Unit: UnitCount},
					{Title: "Unavailable", Target: 3, Unit: UnitCount},
					{Title: "Degraded", Target: 4, Unit: UnitCount},
					{Title: "On current image", Target: 5, Unit: UnitCount},
					{Title: "Rollout", Target: 6, Unit: UnitRatio},
					{Title: "Paused", Target: 7, Unit: UnitCount},
				},
			},
			{
				Kind: Table, Title: "Pool conditions", Span: 6, Height: 8,
				Description: "Status of each pool's Updated, Updating, Degraded, NodeDegraded, RenderDegraded, ImageBuildDegraded, PinnedImageSetsDegraded and PoolSynchronizerDegraded conditions (none listed when the pool does not report one). The MCO builds nothing for a pool NodeDegraded, RenderDegraded, PinnedImageSetsDegraded or PoolSynchronizerDegraded.",
				Targets:     []Target{{Expr: by("pool, condition, status", pooled("ocl_pool_condition")+" == 1")}},
				Columns:     []Column{{Title: "Pool", Label: "pool"}, {Title: "Condition", Label: "condition"}, {Title: "Status", Label: "status"}},
			},
			rolloutProgressGraph(),
		}},
		{Title: "Nodes", Panels: []Panel{
			nodesOffImageTable(),
			{
				Kind: Graph, Title: "Nodes off their desired image", Span: 6, Height: 8,
				Unit: UnitCount, Min: ptr(0.0), Decimals: ptr(0),
				Description: "Per pool, nodes whose currentImage is not their desiredImage: the nodes the MCO is updating now (it targets at most maxUnavailable at a time, none while the pool is paused; nodes waiting their turn are not counted here but in the pool table's machines off the current image). A rollout is this line at 1 or so, node after node, and back to 0.",
				Targets:     []Target{{Expr: offImage, Legend: "{{pool}}"}},
			},
			{
				Kind: Graph, Title: "Nodes working and failing", Span: 12, Height: 8, Stack: true,
				Unit: UnitCount, Min: ptr(0.0), Decimals: ptr(0),
				Description: "Nodes whose machine-config-daemon is Working, and nodes whose update fails (Degraded, Unreconcilable, or an update error not yet Degraded), from the pools' counts (ocl_pool_nodes_working, ocl_pool_nodes_failing); the others are Done. Failing nodes do not update until fixed.",
				Targets: []Target{
					{Expr: "sum(" + machines("ocl_pool_nodes_working") + ")", Legend: "working"},
					{Expr: "sum(" + machines("ocl_pool_nodes_failing") + ")", Legend: "failing"},
				},
			},
			{
				Kind: Table, Title: "Nodes in the middle of an update", Span: 6, Height: 8,
				Description: "The update step each node's MachineConfigNode reports, for nodes not Updated (the last step in progress, else the last one done): a node stuck on one step for long shows where.",
				Targets:     []Target{{Expr: by("pool, node, phase", pooled("node_update_phase", `phase!="Updated"`))}},
				Columns:     []Column{{Title: "Pool", Label: "pool"}, {Title: "Node", Label: "node"}, {Title: "Update step", Label: "phase"}},
			},
			{
				Kind: Graph, Title: "Nodes by update step", Span: 6, Height: 8, Stack: true,
				Unit: UnitCount, Min: ptr(0.0), Decimals: ptr(0),
				Description: "Nodes in an update by the step their MachineConfigNode reports; the nodes Updated (done) are not counted, so the graph reads only the nodes moving.",
				Targets:     []Target{{Expr: "count by (phase) (" + pooled("node_update_phase", `phase!="Updated"`) + ")", Legend: "{{phase}}"}},
			},
		}},
		{Title: "Failures", Panels: []Panel{
			{
				Kind: Table, Title: "Nodes failing to update", Span: 12, Height: 8,
				Description: "Nodes whose update fails, with the parsed cause (docs/classes.md) and the part of the node's reason annotation, MachineConfigNode or pool message that decided it.",
				Targets:     []Target{{Expr: by("pool, node, class, excerpt", pooled("node_update_failure_info"))}},
				Columns: []Column{
					{Title: "Pool", Label: "pool"}, {Title: "Node", Label: "node"},
					{Title: "Class", Label: "class"}, {Title: "Excerpt", Label: "excerpt"},
				},
			},
			{
				Kind: Graph, Title: "Failing nodes by class", Span: 6, Height: 8,
				Unit: UnitCount, Min: ptr(0.0), Decimals: ptr(0),
				Description: "Nodes failing to update by parsed cause, over time.",
				Targets:     []Target{{Expr: "count by (class) (" + pooled("node_update_failure_class") + ")", Legend: "{{class}}"}},
			},
			{
				Kind: Graph, Title: "Degraded machines per pool", Span: 6, Height: 8,
				Unit: UnitCount, Min: ptr(0.0), Decimals: ptr(0), Thresholds: bad,
				Description: "Degraded machines as each pool counts them: a degraded machine blocks the pool's rollout.",
				Targets:     []Target{{Expr: machines("ocl_pool_status_machines_degraded"), Legend: "{{pool}}"}},
			},
		}},
	},
}
