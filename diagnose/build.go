package diagnose

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ocl-exporter/ocl_exporter/alerts"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"

	"github.com/ocl-exporter/ocl_exporter/analysis"
	"github.com/ocl-exporter/ocl_exporter/source"
)

// Options shape a report.
type Options struct {
	// RunbookBase is prefixed to "<Alert>.md"; it ends with a slash.
	RunbookBase string
	// Pool narrows the report to one pool; "" reports every pool.
	Pool string
	// Public leaves the API's error text out of the report (see
	// source.ResourceStatus.PublicReason): /status may be read by anyone
	// who can reach it.
	Public bool
	// Limits are the waits and counts the alerts fire at; the zero value
	// means alerts.RuleLimits, those of the rule files.
	Limits alerts.Limits
	// Identity is who read the cluster ("user alice"), when not the
	// exporter itself (the status page): what it may not list is named
	// as its, not the exporter's.
	Identity string
}

// resourceMachineOSConfigs is the resource without which nothing can be
// diagnosed.
const resourceMachineOSConfigs = "machineosconfigs.machineconfiguration.openshift.io"

// New diagnoses one view of the cluster. status is the source's view of
// which resources it could read.
func New(c *analysis.Cluster, status []source.ResourceStatus, o Options) *Report {
	b := newReportBuilder(c, o)
	r := &Report{SchemaVersion: SchemaVersion, Time: c.Now.UTC(), Namespace: c.Namespace, Cluster: b.clusterChecks(status), Pools: []Pool{}}
	pools := b.poolNames()
	for _, name := range pools {
		if o.Pool == "" || o.Pool == name {
			r.Pools = append(r.Pools, b.pool(name))
		}
	}
	r.Verdict, r.Summary = verdict(r, status, o, len(c.MachineOSConfigs), pools)
	r.nameLogFiles(c)
	r.clean()
	return r
}

// reason is why a resource cannot be read, as much as o lets the report say.
func reason(st source.ResourceStatus, o Options) string {
	if o.Public {
		return st.PublicReason()
	}
	return st.Reason
}

// reportBuilder holds the analysis findings one report reads, computed
// once.
type reportBuilder struct {
	c       *analysis.Cluster
	o       Options
	limits  alerts.Limits
	now     time.Time
	moscs   map[string]analysis.MachineOSConfigFinding // by pool
	objects map[string]*mcfgv1.MachineOSConfig         // by name
	builds  map[string]analysis.Build                  // current and newest builds by name
	waits   map[string]analysis.BuildWait              // by MachineOSConfig
	rollout analysis.Rollout
	left    map[string]int // ephemeral objects by build
	// building marks the MachineOSConfigs with a build not over.
	building map[string]bool
	orphans  map[string][]analysis.Orphan // by MachineOSConfig
	// machineOSBuilder is the machine-os-builder Deployment's state.
	machineOSBuilder analysis.BuilderFinding
	op               *analysis.OperatorFinding
	// unseen are the pools with signs of image mode in a view without
	// MachineOSConfigs, by name.
	unseen map[string]analysis.UnseenLayering
}

func newReportBuilder(c *analysis.Cluster, o Options) *reportBuilder {
	b := &reportBuilder{
		c: c, o: o, limits: o.Limits, now: c.Now,
		moscs: map[string]analysis.MachineOSConfigFinding{}, objects: map[string]*mcfgv1.MachineOSConfig{},
		builds: map[string]analysis.Build{}, waits: map[string]analysis.BuildWait{}, left: map[string]int{}, building: map[string]bool{}, orphans: map[string][]analysis.Orphan{},
		unseen: map[string]analysis.UnseenLayering{},
	}
	if b.limits == (alerts.Limits{}) {
		b.limits = alerts.RuleLimits
	}
	all := analysis.Analyze(c, 0)
	b.rollout, b.machineOSBuilder, b.op = all.Rollout, all.Builder, all.Operator
	for _, f := range all.Configs {
		b.moscs[f.Pool] = f
	}
	for _, u := range all.Unseen {
		b.unseen[u.Pool] = u
	}
	for _, m := range c.MachineOSConfigs {
		b.objects[m.Name] = m
	}
	for _, bd := range all.Builds {
		b.builds[bd.Name] = bd
		switch bd.Phase {
		case analysis.BuildInitial, analysis.BuildPrepared, analysis.BuildBuilding:
			b.building[bd.MachineOSConfig] = true
		}
	}
	for _, w := range all.BuildWaits {
		b.waits[w.MachineOSConfig] = w
	}
	for _, e := range all.Ephemeral {
		b.left[e.MachineOSBuild] += e.Count
	}
	for _, o := range all.Orphaned {
		b.orphans[o.MachineOSConfig] = append(b.orphans[o.MachineOSConfig], o)
	}
	return b
}

// poolNames lists every pool and every pool a MachineOSConfig names.
func (b *reportBuilder) poolNames() []string {
	var names []string
	for _, p := range b.rollout.Pools {
		names = append(names, p.Name)
	}
	for pool := range b.moscs {
		if !slices.Contains(names, pool) {
			names = append(names, pool)
		}
	}
	slices.Sort(names)
	return names
}

func (b *reportBuilder) runbook(alert string) *Runbook {
	return &Runbook{Alert: alert, URL: b.o.RunbookBase + alert + ".md"}
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

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
	if p.Layered && p.Verdict == Healthy && notCapturedChecks(p) > 0 {
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
	case p.Verdict == Unknown:
		return fmt.Sprintf("no failure found, but %d check(s) not decided: the snapshot did not capture what they read: %s", notCapturedChecks(p), machines)
	case !p.Layered && len(p.Stages) == 0 && !b.c.Captured(analysis.KindMachineOSConfig):
		return "no sign of image mode, though the snapshot holds no MachineOSConfig: " + machines
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

// pending is a check being decided.
type pending struct{ Check }

func check(id string) *pending {
	sp := spec(id)
	return &pending{Check{ID: id, Title: sp.Title, Status: Passed}}
}

func (p *pending) fail(f Finding) {
	p.Status = Failed
	p.Findings = append(p.Findings, f)
}

// run marks the check in progress, unless it already failed.
func (p *pending) run(f Finding) {
	if p.Status != Failed {
		p.Status = Running
	}
	p.Findings = append(p.Findings, f)
}

// notCaptured marks the check undecidable, unless it already failed or
// runs: the snapshot does not hold the kind it reads.
func (p *pending) notCaptured(f Finding) {
	if p.Status == Passed {
		p.Status = NotCaptured
	}
	p.Findings = append(p.Findings, f)
}

// notCapturedFinding says that o's kind was not captured, so o may exist.
func notCapturedFinding(o Object) Finding {
	return Finding{Object: o, Message: fmt.Sprintf("the snapshot holds no %s at all: whether %s exists is unknown", o.Kind, o.Name)}
}

func (p *pending) done() Check { return p.Check }

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
