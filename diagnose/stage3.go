package diagnose

// Stage 3: the pool's nodes move to its rendered config and image.

import (
	"fmt"
	"slices"
	"strings"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/ocl-exporter/ocl_exporter/analysis"
	"github.com/ocl-exporter/ocl_exporter/classify"
)

// buildAwaited reports whether the newest build of the pool's rendered
// config has not finished: the node controller targets no node meanwhile
// ("waiting for OS image build", pkg/controller/node/status.go), as
// OCLRolloutStalled reads it.
func (b *reportBuilder) buildAwaited(pool string) bool {
	f, ok := b.moscs[pool]
	if !ok {
		u, signs := b.unseen[pool]
		return signs && u.BuildRunning()
	}
	nb, ok := b.builds[f.NewestBuild]
	return ok && (nb.Phase == analysis.BuildInitial || nb.Phase == analysis.BuildPrepared || nb.Phase == analysis.BuildBuilding)
}

// buildBlocks reports whether the build the pool waits for (current, or
// newest for its rendered config) failed or was interrupted: nothing rolls
// out until it is fixed, and after a failed rebuild the node controller
// stops writing the pool's status (canLayeredContinue, 4.16 and 4.17
// canLayeredPoolContinue), so the build's check says why, as
// OCLRolloutStalled leaves it to the build alerts.
func (b *reportBuilder) buildBlocks(pool string) bool {
	f, ok := b.moscs[pool]
	if !ok {
		return false
	}
	for _, name := range []string{f.CurrentBuild, f.NewestBuild} {
		if bd, ok := b.builds[name]; ok && (bd.Phase == analysis.BuildFailed || bd.Phase == analysis.BuildInterrupted) {
			return true
		}
	}
	return false
}

func (b *reportBuilder) nodes(pool string) []analysis.NodeRollout {
	var out []analysis.NodeRollout
	for _, n := range b.rollout.Nodes {
		if n.Pool == pool {
			out = append(out, n)
		}
	}
	slices.SortFunc(out, func(x, y analysis.NodeRollout) int { return strings.Compare(x.Name, y.Name) })
	return out
}

func (b *reportBuilder) rolloutChecks(pool string, r *analysis.PoolRollout, nodes []analysis.NodeRollout, layered bool) []Check {
	failing := b.nodeFailures(nodes, layered)
	progress, offTarget := b.progressCheck(pool, r, nodes)
	pause := b.pausedCheck(pool, r, offTarget)
	overMax := b.maxUnavailableCheck(pool, r, nodes)
	checks := []Check{failing.done(), progress.done(), overMax.done(), pause.done()}
	if !layered {
		return checks
	}
	return append(checks, b.poolConditionCheck(pool, failing.Status == Failed).done())
}

// nodeFailureAlerts are the classes of a node failure that an alert of
// their own pages for, split off OCLNodeUpdateFailing (whose rule then
// excludes them): the finding links that alert's runbook.
// TestNodeFailureRunbooksAreTheRules reads the rules' class matchers and
// names a class missing here.
var nodeFailureAlerts = map[classify.Class]string{}

// nodeFailureAlert is the alert that pages for a node failing with class c.
func nodeFailureAlert(c classify.Class) string {
	if a, ok := nodeFailureAlerts[c]; ok {
		return a
	}
	return alertNodeUpdateFailing
}

// nodeFailures lists the nodes whose update fails. Without
// MachineConfigNodes (a 4.18 must-gather gathers none), what only they
// report of a layered pool's nodes stays unknown.
func (b *reportBuilder) nodeFailures(nodes []analysis.NodeRollout, layered bool) *pending {
	failing := check(CheckNodes)
	for _, n := range nodes {
		if n.Failure == nil {
			continue
		}
		failing.fail(Finding{
			Object: Object{Kind: "Node", Name: n.Name}, Field: "metadata.annotations[" + analysis.NodeAnnotationReason + "]",
			Message: fmt.Sprintf("node %s fails to update (MCD state %s)", n.Name, orNone(n.State)),
			Class:   n.Failure.Class, Excerpt: n.Failure.Excerpt, Since: timePtr(n.Failure.Since),
			Runbook: b.runbook(nodeFailureAlert(n.Failure.Class)), Commands: nodeCommands(n.Name, b.c.Namespace),
		})
	}
	if layered && failing.Status == Passed && !b.c.Captured(analysis.KindMachineConfigNode) {
		failing.notCaptured(Finding{Object: Object{Kind: "Resource", Name: resourceMachineConfigNodes},
			Message: "the snapshot holds no MachineConfigNode at all: a failed image pull or update step that only a node's MachineConfigNode reports is unknown"})
	}
	return failing
}

// progressCheck follows the nodes to the pool's target, and returns how
// many machines are off it.
func (b *reportBuilder) progressCheck(pool string, r *analysis.PoolRollout, nodes []analysis.NodeRollout) (*pending, int) {
	progress := check(CheckProgress)
	var waiting, working []string
	// Any node of the pool updating or failing moves the rollout: the
	// pool's working and failing counts, as OCLRolloutStalled reads them.
	moving := r != nil && r.Machines.Working+r.Machines.Failing > 0
	for _, n := range nodes {
		if !n.ImageTracked || !n.ImageMismatch && !n.ConfigMismatch {
			continue
		}
		waiting = append(waiting, n.Name)
		if n.State == analysis.MCDStateWorking && n.Failure == nil {
			working = append(working, n.Name)
			if since := n.UpdatingSince; !since.IsZero() && b.now.Sub(since) > b.limits.UpdatingTooLongAfter {
				progress.fail(Finding{
					Object: Object{Kind: "Node", Name: n.Name}, Field: "metadata.annotations[" + analysis.NodeAnnotationState + "]",
					Message: fmt.Sprintf("node %s has been updating (Working) for %s without reaching its desired image or config", n.Name, Ago(b.now.Sub(since))),
					Class:   classify.Unknown, Since: timePtr(since),
					Runbook: b.runbook(alertNodeNotOnDesiredImage), Commands: nodeCommands(n.Name, b.c.Namespace),
				})
			}
		}
	}
	// The MCO sets desiredImage only on the nodes it picks, so the nodes
	// waiting their turn show at the pool, as machines off its image, or
	// off its config (a change that kept the image, a revert).
	offTarget := 0
	if r != nil && r.TargetKnown {
		// The nodes the exporter counts too: the pool's machineCount
		// freezes with its status when the node controller's sync fails.
		offTarget = max(int(r.Machines.Total), r.Machines.Nodes) - r.Machines.OnTarget
	}
	paused := r != nil && r.Paused
	if (len(waiting) > 0 || offTarget > 0) && progress.Status != Failed {
		fd := Finding{
			Object: Object{Kind: "MachineConfigPool", Name: pool}, Field: "status.updatedMachineCount",
			Message:  fmt.Sprintf("%d machine(s) not on the pool's config and image, %d updating%s", max(offTarget, len(waiting)), len(working), nodeList(waiting)),
			Commands: rolloutCommands(pool),
		}
		since := analysis.PoolUpdatingSince(b.c.Pool(pool))
		fd.Since = timePtr(since)
		if !moving && !paused && !b.buildAwaited(pool) && !b.buildBlocks(pool) && !since.IsZero() && b.now.Sub(since) > b.limits.StalledAfter {
			fd.Message = fmt.Sprintf("%d machine(s) not on the pool's config and image and none is updating%s", max(offTarget, len(waiting)), nodeList(waiting))
			fd.Class, fd.Runbook = classify.Unknown, b.runbook(alertRolloutStalled)
			progress.fail(fd)
		} else {
			progress.run(fd)
		}
	}
	return progress, offTarget
}

// pausedCheck fails a pool left paused while offTarget machines wait.
func (b *reportBuilder) pausedCheck(pool string, r *analysis.PoolRollout, offTarget int) *pending {
	pause := check(CheckPaused)
	if r == nil || !r.Paused || offTarget == 0 {
		return pause
	}
	fd := Finding{
		Object: Object{Kind: "MachineConfigPool", Name: pool}, Field: "spec.paused",
		Message:  fmt.Sprintf("the pool is paused: the MCO updates none of its %d machine(s) waiting for its image or config", offTarget),
		Commands: pausedCommands(pool),
	}
	// The nodes wait since the pool's current image was built, or,
	// for a change that kept the image, since the pool left Updated.
	var since time.Time
	if f, ok := b.moscs[pool]; ok {
		since = b.builds[f.CurrentBuild].Ended
	}
	if u := analysis.FindPoolCondition(b.c.Pool(pool), mcfgv1.MachineConfigPoolUpdated); since.IsZero() && u != nil && u.Status == corev1.ConditionFalse {
		since = u.LastTransitionTime.Time
	}
	fd.Since = timePtr(since)
	if !since.IsZero() && b.now.Sub(since) > b.limits.PausedAfter {
		fd.Class, fd.Runbook = classify.Unknown, b.runbook(alertPoolPaused)
		pause.fail(fd)
	} else {
		pause.run(fd)
	}
	return pause
}

// poolConditionCheck fails a degraded condition of a layered pool that
// no node or build failure explains.
func (b *reportBuilder) poolConditionCheck(pool string, nodeFailing bool) *pending {
	cond := check(CheckPoolCond)
	mcp := b.c.Pool(pool)
	if mcp == nil {
		return cond
	}
	buildFailed := false
	if f, ok := b.moscs[pool]; ok {
		buildFailed = b.builds[f.CurrentBuild].Phase == analysis.BuildFailed
	}
	if u, signs := b.unseen[pool]; signs {
		buildFailed = u.Failure() != nil // the build stage shows it
	}
	for _, t := range []struct {
		cond      mcfgv1.MachineConfigPoolConditionType
		explained bool
	}{
		{mcfgv1.MachineConfigPoolRenderDegraded, false},
		{mcfgv1.MachineConfigPoolNodeDegraded, nodeFailing},
		{mcfgv1.MachineConfigPoolImageBuildDegraded, buildFailed},
	} {
		c := analysis.FindPoolCondition(mcp, t.cond)
		if c == nil || c.Status != corev1.ConditionTrue || t.explained {
			continue
		}
		r := classify.Classify(classify.Message{Origin: classify.OriginPoolCondition, Reason: c.Reason, Text: c.Message})
		msg := fmt.Sprintf("%s=True (reason %s) and no node or build failure explains it", t.cond, orNone(c.Reason))
		if t.cond == mcfgv1.MachineConfigPoolImageBuildDegraded && !b.c.Captured(analysis.KindMachineOSBuild) {
			msg = fmt.Sprintf("%s=True (reason %s): a build failed, and the snapshot holds no MachineOSBuild to say why", t.cond, orNone(c.Reason))
		}
		cond.fail(Finding{
			Object: Object{Kind: "MachineConfigPool", Name: pool}, Field: "status.conditions[type=" + string(t.cond) + "]",
			Message: msg,
			Class:   classify.Unknown, Excerpt: r.Excerpt, Since: timePtr(c.LastTransitionTime.Time),
			Runbook: b.runbook(alertPoolDegraded), Commands: poolConditionCommands(pool),
		})
	}
	return cond
}

// nodeList names the nodes, if any, after a message.
func nodeList(nodes []string) string {
	if len(nodes) == 0 {
		return ""
	}
	return " (" + strings.Join(nodes, ", ") + ")"
}

// maxUnavailableCheck fails when more of the pool's nodes have been off
// their target for limits.OverMaxUnavailableAfter than the MCO's maxUnavailable
// allows, as OCLPoolMaxUnavailableExceeded reads it (a snapshot has no
// history, so each node's own UpdatingSince stands for it).
func (b *reportBuilder) maxUnavailableCheck(pool string, r *analysis.PoolRollout, nodes []analysis.NodeRollout) *pending {
	c := check(CheckMaxUnavailable)
	if r == nil || r.MaxUnavailable == 0 || r.Machines.OffTarget <= r.MaxUnavailable {
		return c
	}
	var moving []string
	var since time.Time
	for _, n := range nodes {
		if !n.ImageTracked || !n.ImageMismatch && !n.ConfigMismatch {
			continue
		}
		if !n.UpdatingSince.IsZero() && b.now.Sub(n.UpdatingSince) <= b.limits.OverMaxUnavailableAfter {
			continue
		}
		moving = append(moving, n.Name)
		if n.UpdatingSince.After(since) {
			since = n.UpdatingSince
		}
	}
	fd := Finding{
		Object: Object{Kind: "MachineConfigPool", Name: pool}, Field: "spec.maxUnavailable",
		Message:  fmt.Sprintf("%d node(s) are updating at once, more than the %d maxUnavailable allows%s", r.Machines.OffTarget, r.MaxUnavailable, nodeList(moving)),
		Since:    timePtr(since),
		Commands: rolloutCommands(pool),
	}
	if len(moving) > r.MaxUnavailable {
		fd.Class, fd.Runbook = classify.Unknown, b.runbook(alertMaxUnavailable)
		c.fail(fd)
	} else {
		c.run(fd)
	}
	return c
}
