package dashboards

// bad colours any non-zero count red; watch colours it yellow (normal
// during a rollout, worth a look when it stays).
var (
	bad   = &Thresholds{Base: Green, Steps: []Step{{0.5, Red}}}
	watch = &Thresholds{Base: Green, Steps: []Step{{0.5, Yellow}}}
)

// Overview answers at a glance: which pools are layered, where each build
// is, why it failed, how far each rollout is, which nodes are stuck.
var Overview = Dashboard{
	UID:         "ocl-overview",
	Title:       "OCL / Overview",
	Description: "On-Cluster Layering (image mode): layered pools, their builds, rollouts, failures and alerts. Drill down with OCL / Builds and OCL / Rollout.",
	Rows: []Row{
		{Title: "At a glance", Panels: []Panel{
			{
				Kind: SingleStat, Title: "Layered pools", Span: 2, Height: 4, Unit: UnitCount, Decimals: ptr(0),
				Description: "MachineConfigPools a MachineOSConfig targets (image mode).",
				Targets:     []Target{{Expr: "sum(" + pooled("ocl_pool_layered") + ")" + orZero}},
			},
			{
				Kind: SingleStat, Title: "Builds running", Span: 2, Height: 4, Unit: UnitCount, Decimals: ptr(0),
				Description: "Exported MachineOSBuilds not finished yet: Initial, Prepared or Building.",
				Targets:     []Target{{Expr: "count(" + pooled("mosb_build_phase", `phase=~"Initial|Prepared|Building"`) + " == 1)" + orZero}},
			},
			{
				Kind: SingleStat, Title: "Builds failing", Span: 2, Height: 4, Unit: UnitCount, Decimals: ptr(0), Thresholds: bad,
				Description: "MachineOSBuilds that failed, were interrupted, or are retrying after a build pod failed. The Failing builds table of OCL / Builds says why.",
				Targets:     []Target{{Expr: "count(count by (machineosbuild) (" + pooled("mosb_failure_class") + "))" + orZero}},
			},
			{
				Kind: SingleStat, Title: "Nodes off their desired image", Span: 2, Height: 4, Unit: UnitCount, Decimals: ptr(0), Thresholds: watch,
				Description: "Nodes of layered pools whose currentImage is not yet their desiredImage. Non-zero during a rollout; it should come back to 0.",
				Targets:     []Target{{Expr: "sum(" + offImage + ")" + orZero}},
			},
			{
				Kind: SingleStat, Title: "Nodes failing to update", Span: 2, Height: 4, Unit: UnitCount, Decimals: ptr(0), Thresholds: bad,
				Description: "Nodes whose update fails: machine-config-daemon Degraded or Unreconcilable, MachineConfigNode NodeDegraded, or the image pull failing.",
				Targets:     []Target{{Expr: "count(" + pooled("node_update_failure_class") + ")" + orZero}},
			},
			{
				Kind: SingleStat, Title: "Firing OCL alerts", Span: 2, Height: 4, Unit: UnitCount, Decimals: ptr(0), Thresholds: bad,
				Description: "Alerts of this bundle (names starting with OCL) firing now, in every pool.",
				Targets:     []Target{{Expr: "count(" + clustered("ALERTS", `alertname=~"OCL.*"`, `alertstate="firing"`) + ")" + orZero}},
			},
		}},
		{Title: "Pools", Panels: []Panel{
			{
				Kind: Table, Title: "Pools", Span: 8, Height: 8,
				Description: "Every MachineConfigPool: layered (1) or not (0), paused (1: the MCO updates none of its nodes, so a rollout waits on purpose), its machines, how many run the MachineOSConfig's current image, and the rollout progress (layered pools only).",
				Targets: []Target{
					{Expr: by("pool", pooled("ocl_pool_layered"))},
					{Expr: poolPaused},
					{Expr: machines("ocl_pool_status_machines")},
					{Expr: machines("ocl_pool_nodes_on_current_image")},
					{Expr: rolloutProgress},
					{Expr: machines("ocl_pool_status_machines_degraded")},
				},
				Columns: []Column{
					{Title: "Pool", Label: "pool"},
					{Title: "Layered", Target: 0, Unit: UnitCount},
					{Title: "Paused", Target: 1, Unit: UnitCount},
					{Title: "Machines", Target: 2, Unit: UnitCount},
					{Title: "On current image", Target: 3, Unit: UnitCount},
					{Title: "Rollout", Target: 4, Unit: UnitRatio},
					{Title: "Degraded", Target: 5, Unit: UnitCount},
				},
			},
			{
				Kind: Gauge, Title: "Layered nodes on the current image", Span: 4, Height: 8,
				Unit: UnitRatio, Decimals: ptr(0), Min: ptr(0.0), Max: ptr(1.0),
				Thresholds:  &Thresholds{Base: Yellow, Steps: []Step{{0.999, Green}}},
				Description: "Share of all machines in layered pools that run their MachineOSConfig's current image: 100% when every rollout is done.",
				Targets: []Target{{Expr: "sum(" + pooled("ocl_pool_nodes_on_current_image") + ") / (sum(" +
					pooled("ocl_pool_status_machines") + " and on (pool) (" + pooled("ocl_pool_layered") + " == 1)) > 0)"}},
			},
		}},
		{Title: "Builds", Panels: []Panel{
			{
				Kind: Table, Title: "Current build per pool", Span: 6, Height: 8,
				Description: "The MachineOSBuild each MachineOSConfig currently points at (its current-machine-os-build annotation) and the phase it is in.",
				Targets: []Target{{Expr: by("pool, machineosbuild, phase",
					"("+pooled("mosb_build_phase")+" == 1) and on (machineosbuild) "+pooled("mosc_current_build_info"))}},
				Columns: []Column{{Title: "Pool", Label: "pool"}, {Title: "Build", Label: "machineosbuild"}, {Title: "Phase", Label: "phase"}},
			},
			buildsByPhaseGraph(),
		}},
		{Title: "Failures", Panels: []Panel{
			{
				Kind: Table, Title: "Failure classes now", Span: 6, Height: 8,
				Description: "What is failing, by parsed cause (docs/classes.md): failing builds, nodes failing to update, and the machine-config ClusterOperator while it is Degraded.",
				Targets: []Target{
					{Expr: "count by (class) (" + pooled("mosb_failure_class") + ")"},
					{Expr: "count by (class) (" + pooled("node_update_failure_class") + ")"},
					{Expr: by("class", clustered("ocl_operator_degraded")+" == 1")},
				},
				Columns: []Column{
					{Title: "Class", Label: "class"},
					{Title: "Builds", Target: 0, Unit: UnitCount},
					{Title: "Nodes", Target: 1, Unit: UnitCount},
					{Title: "Operator degraded", Target: 2, Unit: UnitCount},
				},
			},
			{
				Kind: Graph, Title: "Failure classes over time", Span: 6, Height: 8,
				Unit: UnitCount, Min: ptr(0.0), Decimals: ptr(0),
				Description: "Failing builds and nodes by parsed cause, and the class of the operator's Degraded message, over time: when each problem started and ended.",
				Targets: []Target{
					{Expr: "count by (class) (" + pooled("mosb_failure_class") + ")", Legend: "build: {{class}}"},
					{Expr: "count by (class) (" + pooled("node_update_failure_class") + ")", Legend: "node: {{class}}"},
					{Expr: by("class", clustered("ocl_operator_degraded")+" == 1"), Legend: "operator: {{class}}"},
				},
			},
		}},
		{Title: "Rollout", Panels: []Panel{rolloutProgressGraph(), nodesOffImageTable()}},
		{Title: "Alerts and exporter", Panels: []Panel{
			{
				Kind: Table, Title: "Active OCL alerts", Span: 8, Height: 8,
				Description: "OCL alerts pending or firing now, for every pool (an alert about the operator or a secret has no pool). Each links its runbook in Alertmanager and the console's Alerting page.",
				Targets: []Target{{Expr: by("alertname, alertstate, severity, pool, machineosbuild, node",
					clustered("ALERTS", `alertname=~"OCL.*"`))}},
				Columns: []Column{
					{Title: "Alert", Label: "alertname"}, {Title: "State", Label: "alertstate"},
					{Title: "Severity", Label: "severity"}, {Title: "Pool", Label: "pool"},
					{Title: "Build", Label: "machineosbuild"}, {Title: "Node", Label: "node"},
				},
			},
			{
				Kind: Table, Title: "Resources the exporter cannot read", Span: 4, Height: 8,
				Description: "Watched resources whose last list or watch failed (CRD not served, permission denied, API server unreachable): the metrics built from them are missing or stale.",
				Targets:     []Target{{Expr: by("resource", clustered("ocl_exporter_resource_available")+" == 0")}},
				Columns:     []Column{{Title: "Resource", Label: "resource"}},
			},
			{
				Kind: Graph, Title: "Exporter API errors per second", Span: 12, Height: 6,
				Unit: UnitCount, Min: ptr(0.0),
				Description: "Failed list and watch requests of the exporter to the API server. Sustained errors mean the dashboards show stale state.",
				Targets: []Target{
					{Expr: "sum by (resource) (rate(" + clustered("ocl_exporter_list_total", `result="error"`) + "[$__rate_interval]))", Legend: "list {{resource}}"},
					{Expr: "sum by (resource) (rate(" + clustered("ocl_exporter_watch_total", `result="error"`) + "[$__rate_interval]))", Legend: "watch {{resource}}"},
				},
			},
		}},
	},
}
