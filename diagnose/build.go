package diagnose

import (
	"fmt"
	"slices"
	"strings"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ocl-exporter/ocl_exporter/analysis"
	"github.com/ocl-exporter/ocl_exporter/classify"
	"github.com/ocl-exporter/ocl_exporter/source"
)

// Limits the alerts wait for before they fire; a wait shorter than its
// limit is Running, not Failed. diagnose_test.go checks them against
// alerts/*rules.yaml.
const (
	// RepeatedPodFailures is how many failed pods of a running build make
	// it failing (OCLMachineOSBuildFailed), not a healthy retry.
	RepeatedPodFailures = 2
	// BuildMaxDuration is ocl:build_max_duration_seconds.
	BuildMaxDuration = time.Hour
	// BuildNotStartedAfter is OCLMachineOSBuildNotStarted's threshold.
	BuildNotStartedAfter = 30 * time.Minute
	// NotSeededAfter is OCLPrebuiltImageNotSeeded's for.
	NotSeededAfter = 30 * time.Minute
	// LeftoversAfter is OCLBuildObjectsLeftBehind's for.
	LeftoversAfter = 6 * time.Hour
	// StalledAfter is OCLRolloutStalled's for.
	StalledAfter = 30 * time.Minute
	// PausedAfter is OCLPoolPausedWithPendingImage's for.
	PausedAfter = 6 * time.Hour
	// UpdatingTooLongAfter is OCLNodeNotOnDesiredImage's for.
	UpdatingTooLongAfter = time.Hour
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
}

// resourceMachineOSConfigs is the resource without which nothing can be
// diagnosed.
const resourceMachineOSConfigs = "machineosconfigs.machineconfiguration.openshift.io"

// New diagnoses one view of the cluster. status is the source's view of
// which resources it could read.
func New(c *analysis.Cluster, status []source.ResourceStatus, o Options) *Report {
	b := newBuilder(c, o)
	r := &Report{SchemaVersion: SchemaVersion, Time: c.Now.UTC(), Namespace: c.Namespace, Cluster: b.clusterChecks(status)}
	for _, name := range b.poolNames() {
		if o.Pool == "" || o.Pool == name {
			r.Pools = append(r.Pools, b.pool(name))
		}
	}
	r.Verdict, r.Summary = verdict(r, status, o, len(c.MachineOSConfigs))
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

func verdict(r *Report, status []source.ResourceStatus, o Options, moscs int) (Verdict, string) {
	for _, st := range status {
		if st.Resource == resourceMachineOSConfigs && !st.Available {
			return Unknown, "cannot read MachineOSConfigs: " + reason(st, o)
		}
	}
	if o.Pool != "" && len(r.Pools) == 0 {
		return Unknown, fmt.Sprintf("no MachineConfigPool or MachineOSConfig names pool %q", o.Pool)
	}
	var bad []string
	if slices.ContainsFunc(r.Cluster, func(c Check) bool { return c.Status == Failed }) {
		bad = append(bad, "cluster")
	}
	for _, p := range r.Pools {
		if p.Verdict == Problem {
			bad = append(bad, "pool "+p.Name)
		}
	}
	switch {
	case len(bad) > 0 && moscs == 0:
		// Exit 1, not 2: a node failing to update is a problem to fix,
		// whether or not a pool uses image mode yet.
		return Problem, fmt.Sprintf("no pool uses image mode, but %d failed check(s): %s", r.FailedChecks(), strings.Join(bad, ", "))
	case len(bad) > 0:
		return Problem, fmt.Sprintf("%d failed check(s): %s", r.FailedChecks(), strings.Join(bad, ", "))
	case moscs == 0:
		return Unknown, "no MachineOSConfig exists: no pool uses image mode (On-Cluster Layering), and no node fails to update"
	}
	if n := r.countChecks(NotCaptured); n > 0 {
		return Healthy, fmt.Sprintf("no problem found; %d check(s) not decided: the snapshot did not capture what they read", n)
	}
	return Healthy, "no problem found"
}

// builder holds the analysis findings one report reads, computed once.
type builder struct {
	c       *analysis.Cluster
	o       Options
	now     time.Time
	moscs   map[string]analysis.MachineOSConfigFinding // by pool
	objects map[string]*mcfgv1.MachineOSConfig         // by name
	builds  map[string]analysis.Build                  // current and newest builds by name
	waits   map[string]analysis.BuildWait              // by MachineOSConfig
	rollout analysis.Rollout
	left    map[string]int // ephemeral objects by build
	builder analysis.BuilderFinding
	op      *analysis.OperatorFinding
}

func newBuilder(c *analysis.Cluster, o Options) *builder {
	b := &builder{
		c: c, o: o, now: c.Now,
		moscs: map[string]analysis.MachineOSConfigFinding{}, objects: map[string]*mcfgv1.MachineOSConfig{},
		builds: map[string]analysis.Build{}, waits: map[string]analysis.BuildWait{}, left: map[string]int{},
		rollout: analysis.AnalyzeRollout(c), builder: analysis.Builder(c), op: analysis.Operator(c),
	}
	for _, f := range analysis.MachineOSConfigFindings(c) {
		b.moscs[f.Pool] = f
	}
	for _, m := range c.MachineOSConfigs {
		b.objects[m.Name] = m
	}
	for _, bd := range c.Builds(0) {
		b.builds[bd.Name] = bd
	}
	for _, w := range c.BuildWaits() {
		b.waits[w.MachineOSConfig] = w
	}
	for _, e := range c.EphemeralObjects() {
		b.left[e.MachineOSBuild] += e.Count
	}
	return b
}

// poolNames lists every pool and every pool a MachineOSConfig names.
func (b *builder) poolNames() []string {
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

func (b *builder) runbook(alert string) *Runbook {
	return &Runbook{Alert: alert, URL: b.o.RunbookBase + alert + ".md"}
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// clusterChecks are the checks every pool depends on.
func (b *builder) clusterChecks(status []source.ResourceStatus) []Check {
	access := check(CheckExporterAccess)
	for _, st := range status {
		if st.Problem == source.ProblemNotCaptured {
			access.notCaptured(Finding{Object: Object{Kind: "Resource", Name: st.Resource}, Message: st.Reason})
			continue
		}
		if !st.Available {
			msg := reason(st, b.o)
			if msg == "" {
				msg = "not listed yet"
			}
			access.fail(Finding{
				Object: Object{Kind: "Resource", Name: st.Resource}, Message: msg,
				Runbook: b.runbook(alertResourceUnavailable), Commands: accessCommands(st.Resource, b.c.Namespace),
			})
		}
	}

	operator := check(CheckOperator)
	if op := b.op; op != nil && op.Degraded && (op.Reason == reasonBuilderFailed || op.Class != classify.Unknown) {
		operator.fail(Finding{
			Object: Object{Kind: "ClusterOperator", Name: source.ClusterOperatorName}, Field: "status.conditions[type=Degraded]",
			Message: fmt.Sprintf("Degraded=True with reason %s", op.Reason),
			Class:   op.Class, Excerpt: op.Excerpt, Since: timePtr(op.Since),
			Runbook: b.runbook(alertOperatorDegraded), Commands: operatorCommands(b.c.Namespace),
		})
	}

	builder := check(CheckBuilder)
	switch {
	case b.builder.MachineOSConfigs > 0 && b.builder.Unknown:
		builder.notCaptured(notCapturedFinding(Object{Kind: "Deployment", Namespace: b.c.Namespace, Name: source.BuilderDeploymentName}))
	case b.builder.MachineOSConfigs > 0 && !b.builder.Ready:
		builder.fail(Finding{
			Object: Object{Kind: "Deployment", Namespace: b.c.Namespace, Name: source.BuilderDeploymentName}, Field: "status.readyReplicas",
			Message: fmt.Sprintf("%d MachineOSConfig(s) exist, but the machine-os-builder has no ready pod", b.builder.MachineOSConfigs),
			Class:   classify.BuilderUnavailable,
			Runbook: b.runbook(alertBuilderNotReady), Commands: builderCommands(b.c.Namespace),
		})
	}
	return []Check{access.done(), operator.done(), builder.done()}
}

// reasonBuilderFailed is the operator's Degraded reason when it cannot run
// the machine-os-builder.
const reasonBuilderFailed = "MachineOSBuilderFailed"

// pool walks one pool through the stages. After a failed stage a later
// one is evaluated when it has evidence of its own (evidence), else it is
// not reached.
func (b *builder) pool(name string) Pool {
	p := Pool{Name: name, Verdict: Healthy}
	f, layered := b.moscs[name]
	var rollout *analysis.PoolRollout
	for i := range b.rollout.Pools {
		if b.rollout.Pools[i].Name == name {
			rollout = &b.rollout.Pools[i]
		}
	}
	nodes := b.nodes(name)
	switch {
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
func (b *builder) evidence(s *Stage, f analysis.MachineOSConfigFinding, nodes []analysis.NodeRollout) bool {
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

func (b *builder) poolSummary(p Pool, r *analysis.PoolRollout, nodes []analysis.NodeRollout) string {
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
	switch {
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

func (b *builder) stage(n int, checks []Check) Stage {
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

func (b *builder) configChecks(f analysis.MachineOSConfigFinding) []Check {
	m := b.objects[f.Name]
	mosc := Object{Kind: "MachineOSConfig", Name: f.Name}
	created := m.CreationTimestamp.Time
	ns := b.c.Namespace

	pool := check(CheckPool)
	if f.PoolUnknown {
		pool.notCaptured(notCapturedFinding(Object{Kind: "MachineConfigPool", Name: f.Pool}))
	}
	if f.PoolMissing {
		pool.fail(Finding{
			Object: mosc, Field: "spec.machineConfigPool.name",
			Message: fmt.Sprintf("MachineConfigPool %s does not exist", f.Pool),
			Class:   classify.PoolNotFound, Since: timePtr(created),
			Runbook: b.runbook(alertPoolMissing), Commands: poolMissingCommands(f.Name),
		})
	}

	secrets := check(CheckSecrets)
	for _, s := range f.Secrets {
		if s.Unknown {
			secrets.notCaptured(notCapturedFinding(Object{Kind: "Secret", Namespace: ns, Name: s.Name}))
		}
		if !s.Missing {
			continue
		}
		field := "spec." + s.Field + ".name"
		if s.Field == analysis.FieldBaseImagePullSecret && m.Spec.BaseImagePullSecret == nil {
			field = "spec." + s.Field + " (unset: the default " + analysis.DefaultBasePullSecret + ")"
		}
		fd := Finding{
			Object: mosc, Field: field,
			Message: fmt.Sprintf("Secret %s does not exist in %s", s.Name, ns),
			Class:   classify.SecretNotFound, Since: timePtr(created),
			Runbook: b.runbook(alertSecretMissing), Commands: secretCommands(f.Name, s.Name, ns),
		}
		if op := b.op; op != nil && op.Degraded && op.Class == classify.SecretNotFound {
			fd.Excerpt, fd.Since = op.Excerpt, timePtr(op.Since)
		}
		secrets.fail(fd)
	}

	push := check(CheckPushSpec)
	if !f.PushSpecValid {
		push.fail(Finding{
			Object: mosc, Field: "spec.renderedImagePushSpec",
			Message: fmt.Sprintf("%q is not a fully qualified, lower-case image reference with a tag", f.PushSpec),
			Class:   classify.PushSpecInvalid, Since: timePtr(created),
			Runbook: b.runbook(alertPushSpecInvalid), Commands: pushSpecCommands(f.Name),
		})
	}
	checks := []Check{pool.done(), secrets.done(), push.done()}

	pb := f.PreBuilt
	if pb == nil {
		return checks
	}
	if pb.Annotated {
		img := check(CheckPrebuiltImage)
		if !pb.Digested {
			img.fail(Finding{
				Object: mosc, Field: "metadata.annotations[" + analysis.AnnotationPreBuiltImage + "]",
				Message: fmt.Sprintf("pre-built image %q is not a name@sha256 digest", pb.Image),
				Class:   classify.Unknown, Since: timePtr(created),
				Runbook: b.runbook(alertPrebuiltInvalid), Commands: prebuiltCommands(f.Name, f.Pool, ns),
			})
		}
		checks = append(checks, img.done())
	}
	seeded := check(CheckPrebuiltSeeded)
	if !pb.Seeded && (!pb.Annotated || pb.Digested) {
		fd := Finding{
			Object: mosc, Field: "status.conditions[type=" + analysis.ConditionSeeded + "]",
			Message: "the pre-built image has not been seeded", Since: timePtr(created),
			Commands: prebuiltCommands(f.Name, f.Pool, ns),
		}
		if b.now.Sub(created) >= NotSeededAfter {
			fd.Class, fd.Runbook = classify.Unknown, b.runbook(alertPrebuiltNotSeeded)
			seeded.fail(fd)
		} else {
			seeded.run(fd)
		}
	}
	checks = append(checks, seeded.done())
	mc := check(CheckPrebuiltMachineConfig)
	mcObject := Object{Kind: "MachineConfig", Name: analysis.PreBuiltImageMachineConfigPrefix + f.Pool}
	if pb.Seeded && pb.MachineConfigUnknown {
		mc.notCaptured(notCapturedFinding(mcObject))
	} else if pb.Seeded && !pb.MachineConfig {
		mc.fail(Finding{
			Object:  mcObject,
			Message: "the component MachineConfig of the seeded pre-built image does not exist",
			Class:   classify.Unknown,
			Runbook: b.runbook(alertPrebuiltMCMissing), Commands: prebuiltCommands(f.Name, f.Pool, ns),
		})
	}
	return append(checks, mc.done())
}

func (b *builder) buildChecks(f analysis.MachineOSConfigFinding) []Check {
	ns := b.c.Namespace
	created := check(CheckBuildCreated)
	if w := b.waits[f.Name]; w.Waiting && (f.PreBuilt == nil || !f.PreBuilt.Annotated) {
		rendered := ""
		if p := b.c.Pool(f.Pool); p != nil {
			rendered = p.Spec.Configuration.Name
		}
		fd := Finding{
			Object: Object{Kind: "MachineConfigPool", Name: f.Pool}, Field: "spec.configuration.name",
			Message: fmt.Sprintf("no MachineOSBuild of %s builds rendered config %s yet", f.Name, rendered),
			Since:   timePtr(w.Since), Commands: notStartedCommands(f.Name, f.Pool, ns),
		}
		switch {
		case !b.builder.Ready && !b.builder.Unknown:
			fd.Class, fd.Runbook = classify.BuilderUnavailable, b.runbook(alertBuilderNotReady)
			created.fail(fd)
		case b.now.Sub(w.Since) > BuildNotStartedAfter:
			fd.Class, fd.Runbook = classify.Unknown, b.runbook(alertBuildNotStarted)
			created.fail(fd)
		default:
			created.run(fd)
		}
	}

	result, pods, duration, leftovers := check(CheckBuildResult), check(CheckBuildPods), check(CheckBuildDuration), check(CheckBuildLeftover)
	bd, ok := b.builds[f.CurrentBuild]
	if m := b.objects[f.Name]; !ok && m != nil {
		if cur := b.c.CurrentBuild(m); cur != nil {
			bd, ok = b.builds[cur.Name]
		}
	}
	// A build the MCO failed before making it current (an invalid
	// Containerfile) is what the pool waits for, as OCLMachineOSBuildFailed
	// reads it.
	if nb, found := b.builds[f.NewestBuild]; found && nb.Phase == analysis.BuildFailed {
		bd, ok = nb, true
	}
	if !ok {
		for _, p := range []*pending{result, pods, duration, leftovers} {
			p.Status = NotReached
		}
		return []Check{created.done(), pods.done(), duration.done(), result.done(), leftovers.done()}
	}
	mosb := Object{Kind: "MachineOSBuild", Name: bd.Name}
	cmds := buildCommands(bd.Name, ns)
	switch bd.Phase {
	case analysis.BuildSucceeded:
	case analysis.BuildFailed, analysis.BuildInterrupted:
		alert := alertBuildFailed
		if bd.Phase == analysis.BuildInterrupted {
			alert = alertBuildInterrupted
		}
		fd := Finding{
			Object: mosb, Field: "status.conditions[type=" + string(bd.Phase) + "]",
			Message: fmt.Sprintf("MachineOSBuild %s is %s after %d failed build pod(s)", bd.Name, bd.Phase, bd.PodFailures),
			Since:   timePtr(firstSet(bd.Ended, bd.Created)), Runbook: b.runbook(alert), Commands: cmds,
		}
		if n := b.left[bd.Name]; n > 0 {
			fd.Message += fmt.Sprintf("; %d ephemeral object(s) kept for inspection", n)
		}
		setCause(&fd, bd.Failure)
		result.fail(fd)
		if n := b.left[bd.Name]; n > 0 && b.now.Sub(firstSet(bd.Ended, bd.Created)) > LeftoversAfter {
			leftovers.fail(Finding{
				Object: mosb, Message: fmt.Sprintf("%d ConfigMap(s), Secret(s) and Job(s) of the build are still in %s", n, ns),
				Class: classify.Unknown, Since: timePtr(bd.Ended),
				Runbook: b.runbook(alertBuildObjectsLeftBehind), Commands: leftoverCommands(bd.Name, ns),
			})
		}
	default:
		start := firstSet(bd.Started, bd.Created)
		running := Finding{Object: mosb, Field: "status.conditions", Message: fmt.Sprintf("MachineOSBuild %s is %s", bd.Name, bd.Phase), Since: timePtr(start)}
		// The alerts' split: pods failing again and again are
		// OCLMachineOSBuildFailed's, a current pod that cannot run is
		// OCLBuildPodsFailing's, and one failure whose retry runs pages
		// nobody but stays in the report.
		switch {
		case bd.PodFailures >= RepeatedPodFailures:
			fd := Finding{
				Object: Object{Kind: "Job", Namespace: ns, Name: "build-" + bd.Name}, Field: "status.failed",
				Message: fmt.Sprintf("%d build pods failed and the Job still retries", bd.PodFailures),
				Since:   timePtr(start), Runbook: b.runbook(alertBuildFailed), Commands: cmds,
			}
			setCause(&fd, bd.Failure)
			result.fail(fd)
		case bd.Stuck != nil:
			fd := Finding{
				Object: Object{Kind: "Job", Namespace: ns, Name: "build-" + bd.Name}, Field: "status.active",
				Message: "the current build pod cannot run; the Job waits for it and never fails",
				Since:   timePtr(start), Runbook: b.runbook(alertBuildPodsFailing), Commands: cmds,
			}
			setCause(&fd, bd.Stuck)
			pods.fail(fd)
		case b.now.Sub(start) > BuildMaxDuration:
			duration.fail(Finding{
				Object: mosb, Field: "status.buildStart",
				Message: fmt.Sprintf("MachineOSBuild %s has been running for %s, longer than %s", bd.Name, b.now.Sub(start).Round(time.Minute), BuildMaxDuration),
				Class:   classify.Unknown, Since: timePtr(start), Runbook: b.runbook(alertBuildTooLong), Commands: cmds,
			})
		}
		if bd.PodFailures > 0 && bd.PodFailures < RepeatedPodFailures {
			running.Message += fmt.Sprintf("; %d build pod failed and the Job retries it", bd.PodFailures)
			if bd.Failure != nil {
				running.Class, running.Excerpt = bd.Failure.Class, bd.Failure.Excerpt
			}
		}
		if result.Status != Failed {
			running.Commands = cmds
			result.run(running)
		}
	}
	return []Check{created.done(), pods.done(), duration.done(), result.done(), leftovers.done()}
}

func setCause(fd *Finding, r *classify.Result) {
	fd.Class = classify.Unknown
	if r != nil {
		fd.Class, fd.Excerpt = r.Class, r.Excerpt
	}
}

func firstSet(ts ...time.Time) time.Time {
	for _, t := range ts {
		if !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}

// buildAwaited reports whether the newest build of the pool's rendered
// config has not finished: the node controller targets no node meanwhile
// ("waiting for OS image build", pkg/controller/node/status.go), as
// OCLRolloutStalled reads it.
func (b *builder) buildAwaited(pool string) bool {
	f, ok := b.moscs[pool]
	if !ok {
		return false
	}
	nb, ok := b.builds[f.NewestBuild]
	return ok && (nb.Phase == analysis.BuildInitial || nb.Phase == analysis.BuildPrepared || nb.Phase == analysis.BuildBuilding)
}

func (b *builder) nodes(pool string) []analysis.NodeRollout {
	var out []analysis.NodeRollout
	for _, n := range b.rollout.Nodes {
		if n.Pool == pool {
			out = append(out, n)
		}
	}
	slices.SortFunc(out, func(x, y analysis.NodeRollout) int { return strings.Compare(x.Name, y.Name) })
	return out
}

func (b *builder) rolloutChecks(pool string, r *analysis.PoolRollout, nodes []analysis.NodeRollout, layered bool) []Check {
	ns := b.c.Namespace
	mcp := b.c.Pool(pool)
	failing := check(CheckNodes)
	for _, n := range nodes {
		if n.Failure == nil {
			continue
		}
		failing.fail(Finding{
			Object: Object{Kind: "Node", Name: n.Name}, Field: "metadata.annotations[" + analysis.NodeAnnotationReason + "]",
			Message: fmt.Sprintf("node %s fails to update (MCD state %s)", n.Name, orNone(n.State)),
			Class:   n.Failure.Class, Excerpt: n.Failure.Excerpt, Since: timePtr(b.nodeDegradedSince(n.Name, mcp)),
			Runbook: b.runbook(alertNodeUpdateFailing), Commands: nodeCommands(n.Name, ns),
		})
	}

	progress := check(CheckProgress)
	var waiting, working []string
	moving := false
	for _, n := range nodes {
		// Any node of the pool updating or failing moves the rollout,
		// as OCLRolloutStalled reads node_mcd_state.
		if n.Failure != nil || n.State == analysis.MCDStateWorking || n.State == analysis.MCDStateDegraded || n.State == analysis.MCDStateUnreconcilable {
			moving = true
		}
		if !n.ImageTracked || !n.ImageMismatch && !n.ConfigMismatch {
			continue
		}
		waiting = append(waiting, n.Name)
		if n.State == analysis.MCDStateWorking && n.Failure == nil {
			working = append(working, n.Name)
			if since := b.nodeUpdatingSince(n.Name, mcp); !since.IsZero() && b.now.Sub(since) > UpdatingTooLongAfter {
				progress.fail(Finding{
					Object: Object{Kind: "Node", Name: n.Name}, Field: "metadata.annotations[" + analysis.NodeAnnotationState + "]",
					Message: fmt.Sprintf("node %s has been updating (Working) for %s without reaching its desired image or config", n.Name, Ago(b.now.Sub(since))),
					Class:   classify.Unknown, Since: timePtr(since),
					Runbook: b.runbook(alertNodeNotOnDesiredImage), Commands: nodeCommands(n.Name, ns),
				})
			}
		}
	}
	// The MCO sets desiredImage only on the nodes it picks, so the nodes
	// waiting their turn show at the pool, as machines off its image, or
	// off its config (a change that kept the image, a revert).
	offImage, offTarget := 0, 0
	if r != nil && r.Layered && r.HasImage {
		offImage = int(r.Machines.Total) - r.Machines.OnCurrentImage
	}
	if r != nil && r.TargetKnown && (layered || slices.ContainsFunc(nodes, func(n analysis.NodeRollout) bool { return n.ImageTracked })) {
		offTarget = int(r.Machines.Total) - r.Machines.OnTarget
	}
	paused := r != nil && r.Paused
	if (len(waiting) > 0 || offTarget > 0) && progress.Status != Failed {
		fd := Finding{
			Object: Object{Kind: "MachineConfigPool", Name: pool}, Field: "status.updatedMachineCount",
			Message:  fmt.Sprintf("%d machine(s) not on the pool's config and image, %d updating%s", max(offTarget, len(waiting)), len(working), nodeList(waiting)),
			Commands: rolloutCommands(pool),
		}
		since := poolUpdatingSince(mcp)
		fd.Since = timePtr(since)
		if !moving && !paused && !b.buildAwaited(pool) && !since.IsZero() && b.now.Sub(since) > StalledAfter {
			fd.Message = fmt.Sprintf("%d machine(s) not on the pool's config and image and none is updating%s", max(offTarget, len(waiting)), nodeList(waiting))
			fd.Class, fd.Runbook = classify.Unknown, b.runbook(alertRolloutStalled)
			progress.fail(fd)
		} else {
			progress.run(fd)
		}
	}
	pause := check(CheckPaused)
	if paused && offImage > 0 {
		fd := Finding{
			Object: Object{Kind: "MachineConfigPool", Name: pool}, Field: "spec.paused",
			Message:  fmt.Sprintf("the pool is paused: the MCO updates none of its %d machine(s) waiting for the image", offImage),
			Commands: pausedCommands(pool),
		}
		// The nodes wait since the pool's current image was built.
		var since time.Time
		if f, ok := b.moscs[pool]; ok {
			since = b.builds[f.CurrentBuild].Ended
		}
		fd.Since = timePtr(since)
		if !since.IsZero() && b.now.Sub(since) > PausedAfter {
			fd.Class, fd.Runbook = classify.Unknown, b.runbook(alertPoolPaused)
			pause.fail(fd)
		} else {
			pause.run(fd)
		}
	}
	checks := []Check{failing.done(), progress.done(), pause.done()}
	if !layered {
		return checks
	}

	cond := check(CheckPoolCond)
	if mcp != nil {
		nodeFailing := failing.Status == Failed
		buildFailed := false
		if f, ok := b.moscs[pool]; ok {
			buildFailed = b.builds[f.CurrentBuild].Phase == analysis.BuildFailed
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
			cond.fail(Finding{
				Object: Object{Kind: "MachineConfigPool", Name: pool}, Field: "status.conditions[type=" + string(t.cond) + "]",
				Message: fmt.Sprintf("%s=True (reason %s) and no node or build failure explains it", t.cond, orNone(c.Reason)),
				Class:   classify.Unknown, Excerpt: r.Excerpt, Since: timePtr(c.LastTransitionTime.Time),
				Runbook: b.runbook(alertPoolDegraded), Commands: poolConditionCommands(pool),
			})
		}
	}
	return append(checks, cond.done())
}

// nodeList names the nodes, if any, after a message.
func nodeList(nodes []string) string {
	if len(nodes) == 0 {
		return ""
	}
	return " (" + strings.Join(nodes, ", ") + ")"
}

// poolUpdatingSince is when the pool last turned Updating=True, or zero.
func poolUpdatingSince(mcp *mcfgv1.MachineConfigPool) time.Time {
	if mcp != nil {
		if u := analysis.FindPoolCondition(mcp, mcfgv1.MachineConfigPoolUpdating); u != nil && u.Status == corev1.ConditionTrue {
			return u.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

// nodeUpdatingSince is when the node's current update began: the earliest
// update step its MachineConfigNode reports started (True or Unknown),
// else when the pool turned Updating.
func (b *builder) nodeUpdatingSince(node string, mcp *mcfgv1.MachineConfigPool) time.Time {
	var first time.Time
	for _, m := range b.c.MachineConfigNodes {
		if m.Name != node {
			continue
		}
		for _, c := range m.Status.Conditions {
			if c.Type == string(mcfgv1.MachineConfigNodeUpdated) || c.Status == metav1.ConditionFalse || !slices.Contains(analysis.UpdatePhases, c.Type) {
				continue
			}
			if first.IsZero() || c.LastTransitionTime.Time.Before(first) {
				first = c.LastTransitionTime.Time
			}
		}
	}
	if first.IsZero() {
		return poolUpdatingSince(mcp)
	}
	return first
}

// nodeDegradedSince is when the node's MachineConfigNode turned
// NodeDegraded, else when the pool did.
func (b *builder) nodeDegradedSince(node string, mcp *mcfgv1.MachineConfigPool) time.Time {
	for _, m := range b.c.MachineConfigNodes {
		if m.Name != node {
			continue
		}
		for _, t := range []struct {
			cond   mcfgv1.StateProgress
			status metav1.ConditionStatus
		}{
			{mcfgv1.MachineConfigNodeNodeDegraded, metav1.ConditionTrue},
			{mcfgv1.MachineConfigNodeImagePulledFromRegistry, metav1.ConditionFalse},
		} {
			if c := analysis.FindCondition(m.Status.Conditions, string(t.cond)); c != nil && c.Status == t.status {
				return c.LastTransitionTime.Time
			}
		}
	}
	if mcp != nil {
		if c := analysis.FindPoolCondition(mcp, mcfgv1.MachineConfigPoolNodeDegraded); c != nil && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
