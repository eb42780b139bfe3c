package analysis

import (
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ocl-exporter/ocl_exporter/classify"
)

// Rollout is stage 3: how the pools, and the nodes they manage, apply
// their configuration and, for layered pools, the built image.
type Rollout struct {
	Pools []PoolRollout
	// Nodes holds every node some pool manages, in the view's order.
	Nodes []NodeRollout
}

// PoolRollout is one MachineConfigPool.
type PoolRollout struct {
	Name string
	// Layered is true when a MachineOSConfig targets the pool.
	// LayeredUnknown: the view holds no MachineOSConfig at all, so
	// Layered says nothing, and neither does an image a node runs.
	Layered, LayeredUnknown bool
	// HasImage is true when the pool's MachineOSConfig names a current
	// image (status.currentImagePullSpec): before its first build there is
	// none, and no node can be on it.
	HasImage bool
	// Paused is spec.paused: the MCO targets no node to a new config or
	// image until it is unpaused (builds still run).
	Paused bool
	// TargetKnown is true when the pool has a rendered config and image
	// mode concerns it: layered with an image, or with nodes still booted
	// into a layered image (reverting). Machines.OnTarget counts against
	// that target.
	TargetKnown bool
	// Conditions holds the status of each of PoolConditionTypes, in that
	// order: ConditionStatusTrue, False, Unknown, or "" when the pool does
	// not report the condition.
	Conditions []string
	Machines   MachineCounts
	// Stopped is why the node controller holds the pool's update, or nil:
	// set while Updating is False with one of its stop messages.
	Stopped *classify.Result
	// MaxUnavailable is the most nodes the node controller updates at
	// once, computed as it does (maxUnavailable); 0 when
	// spec.maxUnavailable does not parse (the MCO then updates none).
	MaxUnavailable int
}

// MachineCounts are the pool's machine counts. All but OnCurrentImage are
// the MCO's own, from the pool status.
type MachineCounts struct {
	Total, Ready, Updated, Unavailable, Degraded int32
	// OnCurrentImage counts the pool's nodes whose currentImage is the
	// MachineOSConfig's status.currentImagePullSpec. Only meaningful for a
	// layered pool with an image (HasImage).
	OnCurrentImage int
	// OnTarget counts the pool's nodes done with the pool's target: the
	// pool's rendered config (spec.configuration.name) as currentConfig,
	// and as currentImage the MachineOSConfig's image, or none for a pool
	// that is not layered. A change that only adds a file keeps the image
	// (RequiresRebuild, openshift/machine-config-operator@7ff337a
	// pkg/controller/common/helpers.go) and a revert drops it, so neither
	// shows in OnCurrentImage. Meaningful when TargetKnown.
	OnTarget int
	// Nodes counts the nodes the pool's selector picks, as the exporter
	// sees them: the pool's own MachineCount is written only by the node
	// controller's syncStatusOnly, which a failing sync skips.
	Nodes int
	// Working counts the nodes whose MCD is Working, Failing those whose
	// update fails (NodeRollout.Failure): the pool-level answers the
	// rollout rules need, so they need not read every node's series.
	Working, Failing int
	// OffImage, OffConfig and OffTarget count the nodes image mode
	// concerns (NodeRollout.ImageTracked) whose desiredImage, desiredConfig
	// or either differs from the current one: the pool-level sums of
	// node_layered_image_mismatch and node_config_mismatch.
	OffImage, OffConfig, OffTarget int
}

// NodeRollout is one node and the pool that manages it.
type NodeRollout struct {
	Name, Pool string
	// ImageTracked is true when the node's image matters: its pool is
	// layered, or it still carries an image annotation while its pool is
	// no longer layered (reverting to the pool's non-layered config).
	ImageTracked bool
	// ImageMismatch is true while desiredImage differs from currentImage,
	// an absent annotation counting as empty: a layered node not yet on
	// its image, or a reverting node still booted into one.
	ImageMismatch bool
	// ConfigMismatch is true while desiredConfig differs from
	// currentConfig: a node not yet on its rendered config, which a
	// layer-only change moves without a new image.
	ConfigMismatch bool
	// State is the MCD's state annotation when it is one of MCDStates,
	// else "".
	State string
	// Phase is the update phase its MachineConfigNode reports (one of
	// UpdatePhases), or "" when the node has no MachineConfigNode.
	Phase string
	// Failure is set while the node's update is failing.
	Failure *NodeFailure
	// UpdatingSince is when the node's current update began: the earliest
	// update step its MachineConfigNode reports started (True or
	// Unknown), else when the pool turned Updating; zero when neither.
	UpdatingSince time.Time
}

// NodeFailure is the cause of a node's failing update.
type NodeFailure struct {
	Class classify.Class
	// Excerpt is the classifier's excerpt of the message that decided
	// Class ("" when no message says anything).
	Excerpt string
	// Since is when its MachineConfigNode turned NodeDegraded (or its
	// image pull failed), else when the pool turned NodeDegraded; zero
	// when neither says.
	Since time.Time
}

// MCD states, the values of the node's state annotation
// (openshift/machine-config-operator@7ff337a pkg/daemon/constants).
const (
	MCDStateDone           = "Done"
	MCDStateWorking        = "Working"
	MCDStateDegraded       = "Degraded"
	MCDStateUnreconcilable = "Unreconcilable"
)

// MCDStates is the closed set of MCD states, in a stable order.
var MCDStates = []string{MCDStateDone, MCDStateWorking, MCDStateDegraded, MCDStateUnreconcilable}

// PoolConditionTypes are the pool conditions stage 3 reports. The last
// two, with NodeDegraded and RenderDegraded, are those for which the build
// controller refuses to build (shouldPreventBuildDueToDegradation).
var PoolConditionTypes = []mcfgv1.MachineConfigPoolConditionType{
	mcfgv1.MachineConfigPoolUpdated,
	mcfgv1.MachineConfigPoolUpdating,
	mcfgv1.MachineConfigPoolDegraded,
	mcfgv1.MachineConfigPoolNodeDegraded,
	mcfgv1.MachineConfigPoolRenderDegraded,
	mcfgv1.MachineConfigPoolImageBuildDegraded,
	mcfgv1.MachineConfigPoolPinnedImageSetsDegraded,
	mcfgv1.MachineConfigPoolSynchronizerDegraded,
}

// Condition statuses as label values, kube-state-metrics style.
const (
	ConditionStatusTrue    = "true"
	ConditionStatusFalse   = "false"
	ConditionStatusUnknown = "unknown"
)

// ConditionStatuses is the closed set of condition statuses.
var ConditionStatuses = []string{ConditionStatusTrue, ConditionStatusFalse, ConditionStatusUnknown}

// PhasePending is the phase of a node whose MachineConfigNode reports no
// update step at all: no conditions yet, or none but False.
const PhasePending = "Pending"

// UpdatePhases lists the MachineConfigNode update steps in the order the
// MCD goes through them, children after their parent: UpdateExecuted holds
// cordon, drain and the files and OS steps (AppliedFilesAndOS without the
// ImageModeStatusReporting gate; AppliedFiles, AppliedOSImage and
// ImagePulledFromRegistry with it), UpdatePostActionComplete holds the
// reboot, UpdateComplete the uncordon.
var UpdatePhases = []string{
	string(mcfgv1.MachineConfigNodeUpdatePrepared),
	string(mcfgv1.MachineConfigNodeUpdateExecuted),
	string(mcfgv1.MachineConfigNodeUpdateCordoned),
	string(mcfgv1.MachineConfigNodeUpdateDrained),
	string(mcfgv1.MachineConfigNodeUpdateFiles),
	string(mcfgv1.MachineConfigNodeUpdateFilesAndOS),
	string(mcfgv1.MachineConfigNodeUpdateOS),
	string(mcfgv1.MachineConfigNodeImagePulledFromRegistry),
	string(mcfgv1.MachineConfigNodeUpdatePostActionComplete),
	string(mcfgv1.MachineConfigNodeUpdateRebooted),
	string(mcfgv1.MachineConfigNodeUpdateComplete),
	string(mcfgv1.MachineConfigNodeUpdateUncordoned),
	string(mcfgv1.MachineConfigNodeResumed),
	string(mcfgv1.MachineConfigNodeUpdated),
	PhasePending,
}

// phaseStep is each update step's position in UpdatePhases. Updated and
// Pending are not steps: they are decided before the steps are read.
var phaseStep = func() map[string]int {
	m := make(map[string]int, len(UpdatePhases))
	for i, p := range UpdatePhases[:len(UpdatePhases)-2] {
		m[p] = i
	}
	return m
}()

// MCNFailureConditions are the MachineConfigNode conditions whose reason
// and message nodeFailure reads. Of the others only the type and status
// are read (updatePhase), and the source keeps no more of them.
var MCNFailureConditions = []string{
	string(mcfgv1.MachineConfigNodeNodeDegraded),
	string(mcfgv1.MachineConfigNodeImagePulledFromRegistry),
	string(mcfgv1.MachineConfigNodeUpdateOS),
	string(mcfgv1.MachineConfigNodeUpdateDrained),
	string(mcfgv1.MachineConfigNodeUpdateCordoned),
}

// Reasons and message prefixes the MCO writes on MachineConfigNode
// conditions (openshift/machine-config-operator@7ff337a
// pkg/upgrademonitor/upgrade_monitor.go, pkg/daemon).
const (
	reasonNotYetOccurred = "NotYetOccurred"
	// msgPullFailed starts ImagePulledFromRegistry=False when a pull
	// failed. A reset writes False too, but keeps the old message behind
	// "Action during update to ...", so only this prefix means failure.
	msgPullFailed = "Failed to pull"
	// msgDrainFailing starts the Drained condition (left Unknown) while the
	// drain controller's attempts fail, from the first failed attempt; the
	// MCD reports the same drain as Degraded only after an hour.
	msgDrainFailing = "Error: Node Drain has not succeeded"
	// msgCordonFailed starts the Cordoned condition (left Unknown) once the
	// drain controller's cordon gave up (cordonOrUncordonNode's 5-step
	// backoff, pkg/controller/drain/drain_controller.go). Its requeues
	// fail the same way until the cause is removed; the MCD reports the
	// node Degraded only after its 1-hour drain wait, as drain_failed.
	msgCordonFailed = "Error: Failed to Cordon node"
)

// AnalyzeRollout reports every pool and every node a pool manages.
func AnalyzeRollout(c *Cluster) Rollout {
	pools := make(map[string]*poolState, len(c.MachineConfigPools))
	for _, p := range c.MachineConfigPools {
		pools[p.Name] = &poolState{pool: p}
	}
	for _, m := range c.MachineOSConfigs {
		if ps := pools[m.Spec.MachineConfigPool.Name]; ps != nil {
			ps.mosc = m
		}
	}
	mcns := make(map[string]*mcfgv1.MachineConfigNode, len(c.MachineConfigNodes))
	for _, m := range c.MachineConfigNodes {
		mcns[m.Name] = m
	}

	selectors := c.NodePools()
	out := Rollout{Nodes: make([]NodeRollout, 0, len(c.Nodes))}
	for _, n := range c.Nodes {
		ps := pools[selectors.PoolOf(n.Labels)]
		if ps == nil {
			continue // no pool manages it, so the MCO does not update it
		}
		nr := analyzeNode(n, ps, mcns[n.Name])
		ps.count(n.Annotations, &nr)
		out.Nodes = append(out.Nodes, nr)
	}

	out.Pools = make([]PoolRollout, 0, len(c.MachineConfigPools))
	for _, p := range c.MachineConfigPools {
		r := pools[p.Name].rollout(!c.Captured(KindMachineOSConfig))
		r.Stopped = c.updateStopped(p)
		out.Pools = append(out.Pools, r)
	}
	return out
}

// poolState is a pool and what is learnt about it while reading nodes.
type poolState struct {
	pool *mcfgv1.MachineConfigPool
	mosc *mcfgv1.MachineOSConfig
	// reports is what the NodeDegraded message says per node, parsed on
	// first use.
	reports                        map[string][]string
	onCurrentImage, onTarget       int
	working, failing               int
	offImage, offConfig, offTarget int
	// imageTracked: some node of the pool is layered or still booted
	// into a layered image.
	imageTracked bool
	// nodes is how many nodes the pool's selector picks.
	nodes int
}

// count adds a node of the pool to the machine counts the MCO does not
// report.
func (ps *poolState) count(annotations map[string]string, nr *NodeRollout) {
	ps.nodes++
	ps.imageTracked = ps.imageTracked || nr.ImageTracked
	if nr.State == MCDStateWorking {
		ps.working++
	}
	if nr.Failure != nil {
		ps.failing++
	}
	if nr.ImageTracked {
		ps.offImage += boolInt(nr.ImageMismatch)
		ps.offConfig += boolInt(nr.ConfigMismatch)
		ps.offTarget += boolInt(nr.ImageMismatch || nr.ConfigMismatch)
	}
	image := ""
	if ps.mosc != nil {
		image = string(ps.mosc.Status.CurrentImagePullSpec)
	}
	current := annotations[NodeAnnotationCurrentImage]
	if image != "" && current == image {
		ps.onCurrentImage++
	}
	if current == image && annotations[NodeAnnotationCurrentConfig] == ps.pool.Spec.Configuration.Name {
		ps.onTarget++
	}
}

func (ps *poolState) rollout(layeredUnknown bool) PoolRollout {
	st := ps.pool.Status
	r := PoolRollout{
		Name:           ps.pool.Name,
		Layered:        ps.mosc != nil,
		LayeredUnknown: layeredUnknown,
		HasImage:       ps.mosc != nil && ps.mosc.Status.CurrentImagePullSpec != "",
		Paused:         ps.pool.Spec.Paused,
		Conditions:     make([]string, len(PoolConditionTypes)),
		Machines: MachineCounts{
			Total:          st.MachineCount,
			Ready:          st.ReadyMachineCount,
			Updated:        st.UpdatedMachineCount,
			Unavailable:    st.UnavailableMachineCount,
			Degraded:       st.DegradedMachineCount,
			OnCurrentImage: ps.onCurrentImage,
			OnTarget:       ps.onTarget,
			Nodes:          ps.nodes,
			Working:        ps.working,
			Failing:        ps.failing,
			OffImage:       ps.offImage,
			OffConfig:      ps.offConfig,
			OffTarget:      ps.offTarget,
		},
		MaxUnavailable: maxUnavailable(ps.pool, ps.nodes),
	}
	// The target matters where image mode does: a layered pool once it
	// has an image, or a pool with nodes still booted into one, unless
	// its MachineOSConfig may be there uncaptured, with an image of its own.
	r.TargetKnown = ps.pool.Spec.Configuration.Name != "" && (r.Layered && r.HasImage || !r.Layered && !layeredUnknown && ps.imageTracked)
	for i, t := range PoolConditionTypes {
		if cond := FindPoolCondition(ps.pool, t); cond != nil {
			r.Conditions[i] = conditionStatus(string(cond.Status))
		}
	}
	return r
}

// nodeReports returns what the pool's NodeDegraded message quotes of node.
func (ps *poolState) nodeReports(node string) []string {
	if ps.reports == nil {
		ps.reports = map[string][]string{}
		if cond := FindPoolCondition(ps.pool, mcfgv1.MachineConfigPoolNodeDegraded); cond != nil && cond.Status == corev1.ConditionTrue {
			ps.reports = parseNodeReports(cond.Message)
		}
	}
	return ps.reports[node]
}

// conditionStatus maps a condition status to its label value; anything
// but True or False is unknown.
func conditionStatus(s string) string {
	switch s {
	case string(metav1.ConditionTrue):
		return ConditionStatusTrue
	case string(metav1.ConditionFalse):
		return ConditionStatusFalse
	}
	return ConditionStatusUnknown
}

func analyzeNode(n *metav1.PartialObjectMetadata, ps *poolState, mcn *mcfgv1.MachineConfigNode) NodeRollout {
	desired, hasDesired := n.Annotations[NodeAnnotationDesiredImage]
	current, hasCurrent := n.Annotations[NodeAnnotationCurrentImage]
	nr := NodeRollout{
		Name:           n.Name,
		Pool:           ps.pool.Name,
		ImageTracked:   ps.mosc != nil || hasDesired || hasCurrent,
		ImageMismatch:  desired != current,
		ConfigMismatch: n.Annotations[NodeAnnotationDesiredConfig] != n.Annotations[NodeAnnotationCurrentConfig],
		State:          mcdState(n.Annotations[NodeAnnotationState]),
	}
	var conds []metav1.Condition
	if mcn != nil {
		conds = mcn.Status.Conditions
		nr.Phase = updatePhase(conds)
	}
	nr.Failure = nodeFailure(n, nr.State, conds, ps)
	if nr.Failure != nil {
		nr.Failure.Since = failingSince(conds, ps.pool)
	}
	nr.UpdatingSince = updatingSince(conds, ps.pool)
	return nr
}

// updatingSince: see NodeRollout.UpdatingSince.
func updatingSince(conds []metav1.Condition, pool *mcfgv1.MachineConfigPool) time.Time {
	var first time.Time
	for _, c := range conds {
		if _, step := phaseStep[c.Type]; !step || c.Status == metav1.ConditionFalse {
			continue
		}
		if first.IsZero() || c.LastTransitionTime.Time.Before(first) {
			first = c.LastTransitionTime.Time
		}
	}
	if first.IsZero() {
		return PoolUpdatingSince(pool)
	}
	return first
}

// PoolUpdatingSince is when the pool last turned Updating=True, or zero
// (no pool included).
func PoolUpdatingSince(p *mcfgv1.MachineConfigPool) time.Time {
	if p == nil {
		return time.Time{}
	}
	if u := FindPoolCondition(p, mcfgv1.MachineConfigPoolUpdating); u != nil && u.Status == corev1.ConditionTrue {
		return u.LastTransitionTime.Time
	}
	return time.Time{}
}

// failingSince: see NodeFailure.Since.
func failingSince(conds []metav1.Condition, pool *mcfgv1.MachineConfigPool) time.Time {
	for _, t := range []struct {
		cond   mcfgv1.StateProgress
		status metav1.ConditionStatus
	}{
		{mcfgv1.MachineConfigNodeNodeDegraded, metav1.ConditionTrue},
		{mcfgv1.MachineConfigNodeImagePulledFromRegistry, metav1.ConditionFalse},
	} {
		if c := FindCondition(conds, string(t.cond)); c != nil && c.Status == t.status {
			return c.LastTransitionTime.Time
		}
	}
	if c := FindPoolCondition(pool, mcfgv1.MachineConfigPoolNodeDegraded); c != nil && c.Status == corev1.ConditionTrue {
		return c.LastTransitionTime.Time
	}
	return time.Time{}
}

func mcdState(s string) string {
	switch s {
	case MCDStateDone, MCDStateWorking, MCDStateDegraded, MCDStateUnreconcilable:
		return s
	}
	return ""
}

// updatePhase is the step a MachineConfigNode's update is in. The MCD marks
// a step Unknown while in it and True when done, and resets every step to
// False when an update starts and once it is complete. So Updated=True is
// done, else the phase is the last step in progress, else the last step
// done (the next has not started yet). The result depends on the set of
// conditions, not their order or how many there are.
func updatePhase(conds []metav1.Condition) string {
	lastUnknown, lastTrue := -1, -1
	for i := range conds {
		c := &conds[i]
		if c.Type == string(mcfgv1.MachineConfigNodeUpdated) {
			if c.Status == metav1.ConditionTrue {
				return c.Type
			}
			continue
		}
		step, ok := phaseStep[c.Type]
		if !ok {
			continue
		}
		switch c.Status {
		case metav1.ConditionTrue:
			lastTrue = max(lastTrue, step)
		case metav1.ConditionFalse:
		default:
			lastUnknown = max(lastUnknown, step)
		}
	}
	switch {
	case lastUnknown >= 0:
		return UpdatePhases[lastUnknown]
	case lastTrue >= 0:
		return UpdatePhases[lastTrue]
	}
	return PhasePending
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
