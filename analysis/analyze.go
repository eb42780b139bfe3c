package analysis

// Findings is everything the analysis concludes from one view of the
// cluster, stage by stage: what the collectors export and what diagnose
// reports, computed once per view.
type Findings struct {
	// Stage 1: the MachineOSConfigs, the machine-os-builder and the
	// operator.
	Configs        []MachineOSConfigFinding
	Builder        BuilderFinding
	Operator       *OperatorFinding // Degraded; nil when not readable
	UpgradeBlocked *OperatorFinding // Upgradeable=False; nil when not readable
	DegradedEvents []DegradedEvent
	// Stage 2: the builds, the builds awaited and what builds left behind.
	Builds     []Build
	BuildWaits []BuildWait
	Ephemeral  []EphemeralCount
	Orphaned   []Orphan
	// Stage 3: the pools and their nodes.
	Rollout Rollout
	// Unseen are the pools with signs of image mode in a view that holds
	// no MachineOSConfig at all (UnseenLayeredPools).
	Unseen []UnseenLayering
}

// Analyze reads c into its findings. history is how many builds of each
// MachineOSConfig are kept besides the current one (Cluster.Builds).
func Analyze(c *Cluster, history int) *Findings {
	unseen := UnseenLayeredPools(c)
	builder := Builder(c)
	builder.UnseenLayered = len(unseen)
	return &Findings{
		Configs:        MachineOSConfigFindings(c),
		Builder:        builder,
		Operator:       Operator(c),
		UpgradeBlocked: UpgradeBlocked(c),
		DegradedEvents: DegradedEvents(c),
		Builds:         c.Builds(history),
		BuildWaits:     c.BuildWaits(),
		Ephemeral:      c.EphemeralObjects(),
		Orphaned:       c.OrphanedObjects(),
		Rollout:        AnalyzeRollout(c),
		Unseen:         unseen,
	}
}
