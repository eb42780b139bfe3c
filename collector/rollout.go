package collector

import (
	"github.com/ocl-exporter/ocl_exporter/analysis"
)

// rolloutStage exports stage 3: pools and their nodes applying the
// configuration and, for layered pools, the built image.
type rolloutStage struct {
	imageMismatch, configMismatch, offTarget, mcdState   *Spec
	updatePhase                                          *Spec
	failureClass, failureInfo                            *Spec
	poolCondition, poolMachines, poolLayered, poolPaused *Spec
	poolStopped, poolMaxUnavailable                      *Spec
}

func newRolloutStage() *rolloutStage {
	return &rolloutStage{
		imageMismatch: newSpec("node_layered_image_mismatch",
			"1 while the node's desiredImage annotation differs from its currentImage annotation (the node has not booted the layered image it is targeted to, or is still booted into one while reverting to a non-layered pool), 0 once they match. Reported for nodes of layered pools and for nodes that still carry an image annotation.",
			"node", "pool"),
		configMismatch: newSpec("node_config_mismatch",
			"1 while the node's desiredConfig annotation differs from its currentConfig annotation (the node has not finished applying the rendered config it is targeted to, as after a MachineConfig change that keeps the layered image), 0 once they match. Reported for the same nodes as node_layered_image_mismatch.",
			"node", "pool"),
		offTarget: newSpec("node_off_target",
			"1 for each node whose desiredImage or desiredConfig differs from the current one (node_layered_image_mismatch or node_config_mismatch is 1), with the state its machine-config-daemon reports (Done, Working, Degraded, Unreconcilable; empty when missing or unknown); no series for a node on its target, so rules and timelines read the nodes a rollout is moving instead of every node.",
			"node", "pool", "state"),
		mcdState: newSpec("node_mcd_state",
			"1 for the state the machine-config-daemon reports in the node's state annotation (Done, Working, Degraded, Unreconcilable), 0 for the others; all 0 when the annotation is missing or unknown.",
			"node", "pool", "state"),
		updatePhase: newSpec("node_update_phase",
			"Always 1; the phase label is the update step the node's MachineConfigNode reports: the last step in progress, else the last step done, Updated when the node is up to date, Pending when no step has started. No series for a node without a MachineConfigNode.",
			"node", "pool", "phase"),
		failureClass: newSpec("node_update_failure_class",
			"1 while the node's update is failing (MCD state Degraded or Unreconcilable, MachineConfigNode NodeDegraded, or a failed image pull), with the most specific cause found in the node reason, MachineConfigNode and pool messages; no series otherwise.",
			"node", "pool", "class"),
		failureInfo: newSpec("node_update_failure_info",
			"1 while the node's update is failing, with the class and the excerpt (at most 200 bytes) of the message that decided it; no series otherwise.",
			"node", "pool", "class", "excerpt"),
		poolCondition: newSpec("ocl_pool_condition",
			"1 for the status (true, false, unknown) of the MachineConfigPool condition, 0 for the other two; all three 0 when the pool does not report the condition.",
			"pool", "condition", "status"),
		poolMachines: newSpec("ocl_pool_machines",
			"Machines of the MachineConfigPool by state: total, ready, updated, unavailable and degraded as the pool status counts them; for layered pools whose MachineOSConfig has an image, on_current_image: nodes whose currentImage annotation is the MachineOSConfig's status.currentImagePullSpec; for layered pools with an image and pools with nodes still booted into a layered image, on_target: nodes whose currentConfig is the pool's rendered config and whose currentImage is the pool's image (none when not layered); nodes: the nodes the pool's selector picks, counted by the exporter (the pool's own machine count freezes when the node controller's sync fails before it writes the status); working and failing: nodes whose machine-config-daemon is Working, and nodes whose update fails (as node_update_failure_class); off_image, off_config and off_target: nodes whose desiredImage, desiredConfig, or either differs from the current one (the sums of node_layered_image_mismatch and node_config_mismatch).",
			"pool", "state"),
		poolLayered: newSpec("ocl_pool_layered",
			"1 if a MachineOSConfig targets the MachineConfigPool (image mode), 0 if not; absent when a snapshot does not capture MachineOSConfigs.",
			"pool"),
		poolPaused: newSpec("ocl_pool_paused",
			"1 if the MachineConfigPool is paused (spec.paused): the MCO targets none of its nodes to a new config or image until it is unpaused, though builds still run. 0 if not.",
			"pool"),
		poolMaxUnavailable: newSpec("ocl_pool_max_unavailable",
			"The most nodes of the MachineConfigPool the MCO updates at once, computed as its node controller does: spec.maxUnavailable (1 when unset), an integer or a percentage of the pool's nodes rounded down, at least 1, always 1 for the arbiter pool. No series when spec.maxUnavailable does not parse (the MCO then updates no node).",
			"pool"),
		poolStopped: newSpec("ocl_pool_update_stopped_info",
			"1 while the node controller holds the layered pool's update (Updating=False with its message: stopped by a failed or interrupted build, paused by a degraded condition), with the class (of the message, or of the failed build it names) and the excerpt (at most 200 bytes); absent otherwise.",
			"pool", "class", "excerpt"),
	}
}

func (s *rolloutStage) specs() []*Spec {
	return []*Spec{
		s.imageMismatch, s.configMismatch, s.offTarget, s.mcdState, s.updatePhase, s.failureClass, s.failureInfo,
		s.poolCondition, s.poolMachines, s.poolLayered, s.poolPaused, s.poolStopped, s.poolMaxUnavailable,
	}
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
	m := p.Machines
	for _, c := range []struct {
		state string
		n     int32
	}{
		{"total", m.Total},
		{"ready", m.Ready},
		{"updated", m.Updated},
		{"unavailable", m.Unavailable},
		{"degraded", m.Degraded},
	} {
		ch <- s.poolMachines.gauge(float64(c.n), p.Name, c.state)
	}
	if p.HasImage {
		ch <- s.poolMachines.gauge(float64(m.OnCurrentImage), p.Name, "on_current_image")
	}
	if p.TargetKnown {
		ch <- s.poolMachines.gauge(float64(m.OnTarget), p.Name, "on_target")
	}
	ch <- s.poolMachines.gauge(float64(m.Nodes), p.Name, "nodes")
	ch <- s.poolMachines.gauge(float64(m.Working), p.Name, "working")
	ch <- s.poolMachines.gauge(float64(m.Failing), p.Name, "failing")
	ch <- s.poolMachines.gauge(float64(m.OffImage), p.Name, "off_image")
	ch <- s.poolMachines.gauge(float64(m.OffConfig), p.Name, "off_config")
	ch <- s.poolMachines.gauge(float64(m.OffTarget), p.Name, "off_target")
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
