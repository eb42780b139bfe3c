package dashboards

var (
	runningFor = by("pool, machineosbuild", "time() - "+buildStart+" unless on (machineosbuild) "+buildEnd)
	buildTook  = by("pool, machineosbuild", buildEnd+" - "+buildStart)
	podFails   = by("pool, machineosbuild", pooled("mosb_build_job_failed_pods"))
	// An hour of building is long for an OS image (the default limit of
	// OCLMachineOSBuildTooLong).
	slowBuild = &Thresholds{Base: Green, Steps: []Step{{3600, Orange}}}
)

// Builds drills into stage 2: where each MachineOSBuild is, how long it
// took, why it failed, and what it left behind.
var Builds = Dashboard{
	UID:         "ocl-builds",
	Title:       "OCL / Builds",
	Description: "On-Cluster Layering stage 2: MachineOSBuilds by phase, their durations, failures and causes, build pod retries, leftover build objects and pools waiting for a build.",
	Rows: []Row{
		{Title: "Phases", Panels: []Panel{
			buildsByPhaseGraph(),
			{
				Kind: Table, Title: "Builds and their phase", Span: 6, Height: 8,
				Description: "Every exported MachineOSBuild (each pool's current build and its recent history) and the phase it is in.",
				Targets:     []Target{{Expr: by("pool, machineosbuild, phase", pooled("mosb_build_phase")+" == 1")}},
				Columns:     []Column{{Title: "Pool", Label: "pool"}, {Title: "Build", Label: "machineosbuild"}, {Title: "Phase", Label: "phase"}},
			},
		}},
		{Title: "Durations", Panels: []Panel{
			{
				Kind: Table, Title: "Build times", Span: 12, Height: 8,
				Description: "Per build: how long it waited between creation and the start of its build Job, how long a finished build took (end minus start), how long a running one has been building, and its failed build pods (the Job retries 3 times; the build reads Failed at 4).",
				Targets: []Target{
					{Expr: by("pool, machineosbuild", buildStart+" - "+pooled("mosb_creation_timestamp_seconds"))},
					{Expr: buildTook},
					{Expr: runningFor},
					{Expr: podFails},
				},
				Columns: []Column{
					{Title: "Pool", Label: "pool"}, {Title: "Build", Label: "machineosbuild"},
					{Title: "Waited to start", Target: 0, Unit: UnitSeconds},
					{Title: "Took", Target: 1, Unit: UnitSeconds},
					{Title: "Running for", Target: 2, Unit: UnitSeconds},
					{Title: "Failed pods", Target: 3, Unit: UnitCount},
				},
			},
			{
				Kind: Graph, Title: "Duration of finished builds", Span: 6, Height: 8,
				Unit: UnitSeconds, Min: ptr(0.0), Thresholds: slowBuild,
				Description: "End minus start of every finished build (Succeeded, Failed or Interrupted), from status.buildStart and status.buildEnd.",
				Targets:     []Target{{Expr: buildTook, Legend: "{{pool}} {{machineosbuild}}"}},
			},
			{
				Kind: Graph, Title: "Running builds: time since start", Span: 6, Height: 8,
				Unit: UnitSeconds, Min: ptr(0.0),
				Description: "How long each build without an end time has been building, against the limit OCLMachineOSBuildTooLong alerts at (the recording rule ocl:build_max_duration_seconds in alerts/). A line that keeps climbing past the usual build time is a hung build.",
				Targets: []Target{
					{Expr: runningFor, Legend: "{{pool}} {{machineosbuild}}"},
					{Expr: "max(" + clustered("ocl:build_max_duration_seconds") + ")", Legend: "alert limit"},
				},
			},
		}},
		{Title: "Failures", Panels: []Panel{
			failingBuildsTable(),
			{
				Kind: Graph, Title: "Failing builds by class", Span: 6, Height: 8,
				Unit: UnitCount, Min: ptr(0.0), Decimals: ptr(0),
				Description: "Failing or retrying builds by parsed cause (docs/classes.md) over time.",
				Targets:     []Target{{Expr: "count by (class) (" + pooled("mosb_failure_class") + ")", Legend: "{{class}}"}},
			},
			{
				Kind: Table, Title: "Failed build pods by cause", Span: 6, Height: 8,
				Description: "Failed pods of each build still present, by the cause of each pod's own failure: an eviction the Job retried shows here even when the build later failed for another reason, or succeeded.",
				Targets:     []Target{{Expr: by("pool, machineosbuild, class", pooled("mosb_build_failed_pods_present"))}},
				Columns: []Column{
					{Title: "Pool", Label: "pool"}, {Title: "Build", Label: "machineosbuild"},
					{Title: "Class", Label: "class"}, {Title: "Pods", Target: 0, Unit: UnitCount},
				},
			},
			{
				Kind: Table, Title: "Build pods that cannot run", Span: 6, Height: 8,
				Description: "Running builds whose current pod is unschedulable, refused by a ResourceQuota or stuck on an image pull: the Job never fails such a pod (OCLBuildPodsFailing).",
				Targets:     []Target{{Expr: by("pool, machineosbuild, class", pooled("mosb_build_pod_stuck"))}},
				Columns: []Column{
					{Title: "Pool", Label: "pool"}, {Title: "Build", Label: "machineosbuild"}, {Title: "Class", Label: "class"},
				},
			},
			{
				Kind: Graph, Title: "Failed build pods", Span: 6, Height: 8,
				Unit: UnitCount, Min: ptr(0.0), Decimals: ptr(0),
				Thresholds:  &Thresholds{Base: Green, Steps: []Step{{0.5, Orange}, {3.5, Red}}},
				Description: "Failed pods of each build's Job. Above 0 on a running build it is retrying (an eviction, an OOM kill); at 4 the build reads Failed.",
				Targets:     []Target{{Expr: podFails + " > 0", Legend: "{{pool}} {{machineosbuild}}"}},
			},
		}},
		{Title: "Leftovers and waits", Panels: []Panel{
			{
				Kind: Table, Title: "Leftover build objects", Span: 6, Height: 8,
				Description: "ConfigMaps, Secrets and Jobs labelled on-cluster-layering that belong to builds that are neither running nor succeeded (failed, interrupted or deleted builds). Not filtered by pool: the objects do not carry one.",
				Targets: []Target{{Expr: by("machineosbuild, kind", clustered("ocl_build_ephemeral_objects")+" > 0 unless on (machineosbuild) ("+
					clustered("mosb_build_phase", `phase=~"Initial|Prepared|Building|Succeeded"`)+" == 1)")}},
				Columns: []Column{{Title: "Build", Label: "machineosbuild"}, {Title: "Kind", Label: "kind"}, {Title: "Objects", Target: 0, Unit: UnitCount}},
			},
			{
				Kind: Table, Title: "Pools waiting for a build", Span: 6, Height: 8,
				Description: "MachineOSConfigs whose pool's rendered config has no MachineOSBuild yet, and for how long (since the MachineOSConfig was created or the pool last started updating). Minutes are normal; longer means the build controller is not creating it.",
				Targets:     []Target{{Expr: by("pool, machineosconfig", "time() - "+pooled("mosc_waiting_for_build_since_timestamp_seconds"))}},
				Columns:     []Column{{Title: "Pool", Label: "pool"}, {Title: "MachineOSConfig", Label: "machineosconfig"}, {Title: "Waiting for", Target: 0, Unit: UnitSeconds}},
			},
		}},
	},
}
