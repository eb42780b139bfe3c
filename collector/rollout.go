package collector

import (
	"github.com/ocl-exporter/ocl_exporter/analysis"
)

// rolloutStage exports stage 3: pools and their nodes applying the
// configuration and, for layered pools, the built image.
type rolloutStage struct {
	imageMismatch, configMismatch, offTarget, mcdState *Spec
	updatePhase                                        *Spec
	failureClass, failureInfo                          *Spec
	poolCondition, poolLayered, poolPaused             *Spec
	poolStopped, poolMaxUnavailable                    *Spec
	poolCounts                                         []poolCount
}

// poolCount is one of a pool's machine counts. The counts overlap (ready
// machines are machines too, working nodes are off their target), so each
// is a gauge of its own, as kube-state-metrics exports
// kube_deployment_status_replicas and _replicas_updated: a state label over
// them would make sum() mean nothing.
type poolCount struct {
	spec *Spec
	// value is the count, and false where the pool does not have it.
	value func(p *analysis.PoolRollout) (float64, bool)
}

// always is a count every pool has.
func always(get func(m *analysis.MachineCounts) int) func(p *analysis.PoolRollout) (float64, bool) {
	return func(p *analysis.PoolRollout) (float64, bool) { return float64(get(&p.Machines)), true }
}

func newPoolCounts() []poolCount {
	status := func(suffix, help string, get func(m *analysis.MachineCounts) int32) poolCount {
		return poolCount{
			newSpec("ocl_pool_status_machines"+suffix, help, "pool"),
			always(func(m *analysis.MachineCounts) int { return int(get(m)) }),
		}
	}
	nodes := func(suffix, help string, get func(m *analysis.MachineCounts) int) poolCount {
		return poolCount{newSpec("ocl_pool_nodes"+suffix, help, "pool"), always(get)}
	}
	return []poolCount{
		status("", "Machines of the MachineConfigPool, as its status.machineCount says.",
			func(m *analysis.MachineCounts) int32 { return m.Total }),
		status("_ready", "Ready machines of the MachineConfigPool, as its status.readyMachineCount says.",
			func(m *analysis.MachineCounts) int32 { return m.Ready }),
		status("_updated", "Updated machines of the MachineConfigPool, as its status.updatedMachineCount says.",
			func(m *analysis.MachineCounts) int32 { return m.Updated }),
		status("_unavailable", "Unavailable machines of the MachineConfigPool, as its status.unavailableMachineCount says.",
			func(m *analysis.MachineCounts) int32 { return m.Unavailable }),
		status("_degraded", "Degraded machines of the MachineConfigPool, as its status.degradedMachineCount says.",
			func(m *analysis.MachineCounts) int32 { return m.Degraded }),
		nodes("", "Nodes the MachineConfigPool's node selector picks, counted by the exporter.",
			func(m *analysis.MachineCounts) int { return m.Nodes }),
		{newSpec("ocl_pool_nodes_on_current_image",
			"Nodes of the layered pool whose currentImage is its MachineOSConfig's current image.", "pool"),
			func(p *analysis.PoolRollout) (float64, bool) { return float64(p.Machines.OnCurrentImage), p.HasImage }},
		{newSpec("ocl_pool_nodes_on_target",
			"Nodes of the pool whose currentConfig and currentImage are the pool's rendered config and image.", "pool"),
			func(p *analysis.PoolRollout) (float64, bool) { return float64(p.Machines.OnTarget), p.TargetKnown }},
		nodes("_working", "Nodes of the pool whose machine-config-daemon state is Working.",
			func(m *analysis.MachineCounts) int { return m.Working }),
		nodes("_failing", "Nodes of the pool whose update fails (the nodes of node_update_failure_class).",
			func(m *analysis.MachineCounts) int { return m.Failing }),
		nodes("_off_image", "Nodes of the pool whose desiredImage differs from their currentImage.",
			func(m *analysis.MachineCounts) int { return m.OffImage }),
		nodes("_off_config", "Nodes of the pool whose desiredConfig differs from their currentConfig.",
			func(m *analysis.MachineCounts) int { return m.OffConfig }),
		nodes("_off_target", "Nodes of the pool whose desiredImage or desiredConfig differs from the current one.",
			func(m *analysis.MachineCounts) int { return m.OffTarget }),
	}
}

func newRolloutStage() *rolloutStage {
	return &rolloutStage{
		imageMismatch: newSpec("node_layered_image_mismatch",
			"1 while the node's desiredImage annotation differs from its currentImage, 0 once they match.",
			"node", "pool"),
		configMismatch: newSpec("node_config_mismatch",
			"1 while the node's desiredConfig annotation differs from its currentConfig, 0 once they match.",
			"node", "pool"),
		offTarget: newSpec("node_off_target",
			"1 for each node whose desiredImage or desiredConfig differs from the current one, with its daemon's state.",
			"node", "pool", "state"),
		mcdState: newSpec("node_mcd_state",
			"1 for the state the node's machine-config-daemon reports, 0 for the others.",
			"node", "pool", "state"),
		updatePhase: newSpec("node_update_phase",
			"Always 1, with the update step the node's MachineConfigNode reports.",
			"node", "pool", "phase"),
		failureClass: newSpec("node_update_failure_class",
			"1 with the cause while the node's update fails.",
			"node", "pool", "class"),
		failureInfo: newSpec("node_update_failure_info",
			"1 while the node's update fails, with the excerpt that decided its class.",
			"node", "pool", "class", "excerpt"),
		poolCondition: newSpec("ocl_pool_condition",
			"1 for the status of the MachineConfigPool condition, 0 for the other two.",
			"pool", "condition", "status"),
		poolLayered: newSpec("ocl_pool_layered",
			"1 if a MachineOSConfig targets the MachineConfigPool, 0 if not.",
			"pool"),
		poolPaused: newSpec("ocl_pool_paused",
			"1 if the MachineConfigPool is paused, 0 if not.",
			"pool"),
		poolMaxUnavailable: newSpec("ocl_pool_max_unavailable",
			"The most nodes of the MachineConfigPool the MCO updates at once.",
			"pool"),
		poolCounts: newPoolCounts(),
		poolStopped: newSpec("ocl_pool_update_stopped_info",
			"1 while the node controller holds the layered pool's update, with the class and excerpt of its message.",
			"pool", "class", "excerpt"),
	}
}

func (s *rolloutStage) specs() []*Spec {
	specs := []*Spec{
		s.imageMismatch, s.configMismatch, s.offTarget, s.mcdState, s.updatePhase, s.failureClass, s.failureInfo,
		s.poolCondition, s.poolLayered, s.poolPaused, s.poolStopped, s.poolMaxUnavailable,
	}
	for _, c := range s.poolCounts {
		specs = append(specs, c.spec)
	}
	return specs
}

func (s *rolloutStage) collect(f *analysis.Findings, ch chan<- *sample) {
	r := f.Rollout
	for i := range r.Pools {
		s.collectPool(&r.Pools[i], ch)
	}
	for i := range r.Nodes {
		s.collectNode(&r.Nodes[i], ch)
	}
}

func (s *rolloutStage) collectPool(p *analysis.PoolRollout, ch chan<- *sample) {
	if !p.LayeredUnknown { // no MachineOSConfig captured: whether it is layered is unknown
		ch <- s.poolLayered.gauge(boolean(p.Layered), p.Name)
	}
	ch <- s.poolPaused.gauge(boolean(p.Paused), p.Name)
	if p.MaxUnavailable > 0 {
		ch <- s.poolMaxUnavailable.gauge(float64(p.MaxUnavailable), p.Name)
	}
	for i, t := range analysis.PoolConditionTypes {
		for _, st := range analysis.ConditionStatuses {
			ch <- s.poolCondition.gauge(boolean(p.Conditions[i] == st), p.Name, string(t), st)
		}
	}
	for _, c := range s.poolCounts {
		if v, ok := c.value(p); ok {
			ch <- c.spec.gauge(v, p.Name)
		}
	}
	if r := p.Stopped; r != nil {
		ch <- s.poolStopped.gauge(1, p.Name, string(r.Class), r.Excerpt)
	}
}

func (s *rolloutStage) collectNode(n *analysis.NodeRollout, ch chan<- *sample) {
	if n.ImageTracked {
		ch <- s.imageMismatch.gauge(boolean(n.ImageMismatch), n.Name, n.Pool)
		ch <- s.configMismatch.gauge(boolean(n.ConfigMismatch), n.Name, n.Pool)
		if n.ImageMismatch || n.ConfigMismatch {
			ch <- s.offTarget.gauge(1, n.Name, n.Pool, n.State)
		}
	}
	for _, st := range analysis.MCDStates {
		ch <- s.mcdState.gauge(boolean(n.State == st), n.Name, n.Pool, st)
	}
	if n.Phase != "" {
		ch <- s.updatePhase.gauge(1, n.Name, n.Pool, n.Phase)
	}
	if f := n.Failure; f != nil {
		ch <- s.failureClass.gauge(1, n.Name, n.Pool, string(f.Class))
		ch <- s.failureInfo.gauge(1, n.Name, n.Pool, string(f.Class), f.Excerpt)
	}
}
