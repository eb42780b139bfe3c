package diagnose

// A pool's walk through the stages, and its summary.

import (
	"fmt"
	"slices"
	"strings"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"

	"github.com/ocl-exporter/ocl_exporter/analysis"
)

// pool walks one pool through the stages. After a failed stage a later
// one is evaluated when it has evidence of its own (evidence), else it is
// not reached.
func (b *reportBuilder) pool(name string) Pool {
	p := Pool{Name: name, Verdict: Healthy}
	f, layered := b.moscs[name]
	var rollout *analysis.PoolRollout
	for i := range b.rollout.Pools {
		if b.rollout.Pools[i].Name == name {
			rollout = &b.rollout.Pools[i]
		}
	}
	nodes := b.nodes(name)
	unseen, signs := b.unseen[name]
	switch {
	case signs:
		p.Layered = true
		p.Stages = b.unseenStages(name, unseen, rollout, nodes)
	case layered:
		p.Layered, p.MachineOSConfig = true, f.Name
		p.Stages = []Stage{
			b.stage(StageConfig, b.configChecks(f)),
			b.stage(StageBuild, b.buildChecks(f)),
			b.stage(StageRollout, b.rolloutChecks(name, rollout, nodes, true)),
		}
	case !b.c.Captured(analysis.KindMachineOSConfig):
		p.Stages = b.layeringUnknownStages(name, rollout, nodes)
	case slices.ContainsFunc(nodes, func(n analysis.NodeRollout) bool { return n.ImageTracked || n.Failure != nil }):
		// Reverting from image mode (the nodes still leave a layered
		// image), or not layered with a node failing to update: a pool
		// about to be layered or just reverted is part of the same story,
		// and node_update_failure_class reports the node either way.
		p.Stages = []Stage{b.stage(StageRollout, b.rolloutChecks(name, rollout, nodes, false))}
	}
	failedBefore := false
	for i := range p.Stages {
		s := &p.Stages[i]
		if failedBefore && !b.evidence(s, f, nodes) {
			s.Status = NotReached
			for j := range s.Checks {
				s.Checks[j] = Check{ID: s.Checks[j].ID, Title: s.Checks[j].Title, Status: NotReached}
			}
			continue
		}
		if s.Status == Failed {
			p.Verdict, failedBefore = Problem, true
		}
	}
	if (p.Layered || !b.c.Captured(analysis.KindMachineOSConfig)) && p.Verdict == Healthy && notCapturedChecks(p) > 0 {
		// Nothing failed in what the snapshot holds; what it did not
		// capture (a pool's MachineOSConfig, the MachineConfigNodes) may.
		p.Verdict = Unknown
	}
	p.Summary = b.poolSummary(p, rollout, nodes)
	return p
}

// evidence reports whether a stage after a failed one has objects of its
// own to evaluate: a MachineOSBuild of the MachineOSConfig for the build
// stage; for the rollout, a node whose update fails or is under way (MCD
// state Working or Degraded), not merely waiting for an image. Without any,
// the stage was not reached; with some, it shows what happened before the
// earlier stage failed (a build that failed, nodes mid-rollout), which is
// often the cause to fix.
func (b *reportBuilder) evidence(s *Stage, f analysis.MachineOSConfigFinding, nodes []analysis.NodeRollout) bool {
	switch s.Number {
	case StageBuild:
		return slices.ContainsFunc(b.c.MachineOSBuilds, func(m *mcfgv1.MachineOSBuild) bool {
			return m.Spec.MachineOSConfig.Name == f.Name
		})
	case StageRollout:
		return s.Status == Failed || slices.ContainsFunc(nodes, func(n analysis.NodeRollout) bool {
			return n.Failure != nil || n.State == analysis.MCDStateWorking || n.State == analysis.MCDStateDegraded
		})
	}
	return false
}

func (b *reportBuilder) poolSummary(p Pool, r *analysis.PoolRollout, nodes []analysis.NodeRollout) string {
	if failed := failedStages(p); len(failed) > 0 {
		parts := make([]string, len(failed))
		for i, fs := range failed {
			msg := fs.finding.Message
			if cl := fs.finding.Class; cl != "" {
				msg += " (" + string(cl) + ")"
			}
			parts[i] = fmt.Sprintf("stage %d %s failed: %s", fs.stage.Number, fs.stage.Name, msg)
		}
		return strings.Join(parts, "; then ")
	}
	machines := ""
	if r != nil {
		machines = fmt.Sprintf("%d machine(s), %d updated", r.Machines.Total, r.Machines.Updated)
	}
	u, signs := b.unseen[p.Name]
	switch {
	case signs:
		return unseenSummary(u)
	case !p.Layered && !b.c.Captured(analysis.KindMachineOSConfig):
		return "whether it uses image mode is unknown: the snapshot holds no MachineOSConfig, and nothing else it holds shows image mode: " + machines
	case p.Verdict == Unknown:
		return fmt.Sprintf("no failure found, but %d check(s) not decided: the snapshot did not capture what they read: %s", notCapturedChecks(p), machines)
	case !p.Layered && len(p.Stages) == 0:
		return "not layered: " + machines
	case !p.Layered:
		return "reverting from image mode: " + machines
	}
	for _, s := range p.Stages {
		if s.Status == Running {
			return fmt.Sprintf("stage %d %s in progress: %s", s.Number, s.Name, machines)
		}
	}
	onImage := 0
	if r != nil {
		onImage = r.Machines.OnCurrentImage
	}
	return fmt.Sprintf("healthy: %d of %d node(s) on the current image", onImage, len(nodes))
}

// notCapturedChecks counts a pool's checks not decided.
func notCapturedChecks(p Pool) int {
	n := 0
	for _, s := range p.Stages {
		for _, c := range s.Checks {
			if c.Status == NotCaptured {
				n++
			}
		}
	}
	return n
}

// failedStage is a failed stage and the first finding of its first failed
// check.
type failedStage struct {
	stage   Stage
	finding Finding
}

// failedStages lists a pool's failed stages in the order they started to
// fail, by the earliest "since" of their failed findings, stages whose
// findings do not tell last, in stage order. A build that failed before a
// Secret went missing reads in that order.
func failedStages(p Pool) []failedStage {
	var out []failedStage
	since := map[int]time.Time{}
	for _, s := range p.Stages {
		if s.Status != Failed {
			continue
		}
		fs := failedStage{stage: s}
		for _, c := range s.Checks {
			if c.Status != Failed {
				continue
			}
			if fs.finding.Message == "" {
				fs.finding = c.Findings[0]
			}
			for _, f := range c.Findings {
				if f.Since != nil && (since[s.Number].IsZero() || f.Since.Before(since[s.Number])) {
					since[s.Number] = *f.Since
				}
			}
		}
		out = append(out, fs)
	}
	slices.SortStableFunc(out, func(x, y failedStage) int {
		tx, ty := since[x.stage.Number], since[y.stage.Number]
		if tx.IsZero() != ty.IsZero() {
			if tx.IsZero() {
				return 1
			}
			return -1
		}
		return tx.Compare(ty)
	})
	return out
}

func (b *reportBuilder) stage(n int, checks []Check) Stage {
	s := Stage{Number: n, Name: stageNames[n], Status: Passed, Checks: checks}
	for _, c := range checks {
		switch {
		case c.Status == Failed:
			s.Status = Failed
		case c.Status == Running && (s.Status == Passed || s.Status == NotCaptured):
			s.Status = Running
		case c.Status == NotCaptured && s.Status == Passed:
			s.Status = NotCaptured
		}
	}
	return s
}
