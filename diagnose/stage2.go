package diagnose

// Stage 2: the MachineOSBuild of the pool's rendered config is created, builds and pushes.

import (
	"fmt"
	"time"

	"github.com/ocl-exporter/ocl_exporter/analysis"
	"github.com/ocl-exporter/ocl_exporter/classify"
)

func (b *reportBuilder) buildChecks(f analysis.MachineOSConfigFinding) []Check {
	created := b.buildCreatedCheck(f)
	bd, ok := b.awaitedBuild(f)
	if !ok {
		status := NotReached
		if !b.c.Captured(analysis.KindMachineOSBuild) {
			// A gather cut before them: none is unknown, not "not yet".
			created = check(CheckBuildCreated)
			created.notCaptured(Finding{Object: Object{Kind: "Resource", Name: resourceMachineOSBuilds},
				Message: "the snapshot holds no MachineOSBuild: whether a build of the pool's rendered config exists, and how it went, is unknown"})
			status = NotCaptured
		}
		checks := []Check{created.done()}
		for _, id := range []string{CheckBuildPods, CheckBuildDuration, CheckBuildResult, CheckBuildLeftover} {
			p := check(id)
			p.Status = status
			checks = append(checks, p.done())
		}
		return checks
	}
	result := b.buildResultCheck(bd)
	pods := b.buildPodsCheck(bd, result.Status == Failed)
	duration := b.buildDurationCheck(bd, result.Status == Failed || pods.Status == Failed)
	leftovers := b.buildLeftoversCheck(f, bd)
	return []Check{created.done(), pods.done(), duration.done(), result.done(), leftovers.done()}
}

// awaitedBuild is the build the pool waits for: the MachineOSConfig's
// current one, or the newest when the MCO failed it before making it
// current (an invalid Containerfile), as OCLMachineOSBuildFailed reads it.
func (b *reportBuilder) awaitedBuild(f analysis.MachineOSConfigFinding) (analysis.Build, bool) {
	if nb, found := b.builds[f.NewestBuild]; found && nb.Phase == analysis.BuildFailed {
		return nb, true
	}
	bd, ok := b.builds[f.CurrentBuild]
	if m := b.objects[f.Name]; !ok && m != nil {
		if cur := b.c.CurrentBuild(m); cur != nil {
			bd, ok = b.builds[cur.Name]
		}
	}
	return bd, ok
}

// buildOver reports whether the build reached a final phase.
func buildOver(bd analysis.Build) bool {
	switch bd.Phase {
	case analysis.BuildSucceeded, analysis.BuildFailed, analysis.BuildInterrupted:
		return true
	}
	return false
}

// buildCreatedCheck follows the wait for a MachineOSBuild of the pool's
// rendered config, and a requested rebuild no build runs for yet.
func (b *reportBuilder) buildCreatedCheck(f analysis.MachineOSConfigFinding) *pending {
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
		case !b.machineOSBuilder.Ready && !b.machineOSBuilder.Unknown:
			fd.Class, fd.Runbook = classify.BuilderUnavailable, b.runbook(alertBuilderNotReady)
			created.fail(fd)
		case b.now.Sub(w.Since) > b.limits.BuildNotStartedAfter:
			fd.Class, fd.Runbook = classify.Unknown, b.runbook(alertBuildNotStarted)
			b.builderLogCause(&fd, f.Name)
			created.fail(fd)
		default:
			created.run(fd)
		}
	}
	if f.RebuildRequested && !b.building[f.Name] {
		created.run(Finding{
			Object: Object{Kind: "MachineOSConfig", Name: f.Name}, Field: "metadata.annotations",
			Message:  "a rebuild is requested (annotation " + analysis.AnnotationRebuild + ") and no build of it runs yet; the builder acts on it only when it sees it added",
			Commands: notStartedCommands(f.Name, f.Pool, ns),
		})
	}
	return created
}

// buildResultCheck fails a build that failed or was interrupted, and a
// running one that will not finish: its Job is gone, or its pods failed
// again and again (OCLMachineOSBuildFailed's). Otherwise a running build
// runs, one pod failure whose retry runs included: it pages nobody but
// stays in the report.
func (b *reportBuilder) buildResultCheck(bd analysis.Build) *pending {
	result := check(CheckBuildResult)
	mosb := Object{Kind: "MachineOSBuild", Name: bd.Name}
	cmds := buildCommands(bd, b.c.Namespace)
	start := firstSet(bd.Started, bd.Created)
	switch {
	case bd.Phase == analysis.BuildSucceeded:
	case bd.Phase == analysis.BuildFailed, bd.Phase == analysis.BuildInterrupted:
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
	case bd.JobGone != nil && *bd.JobGone:
		fd := Finding{
			Object: mosb, Field: "status.builder.job",
			Message: fmt.Sprintf("its Job build-%s is gone while the build reads %s: the MCO never marked it Interrupted, and nothing retries it", bd.Name, bd.Phase),
			Since:   timePtr(start), Runbook: b.runbook(alertBuildInterrupted), Commands: cmds,
		}
		setCause(&fd, bd.Failure)
		result.fail(fd)
	case bd.ShownFailures() >= b.limits.RepeatedPodFailures:
		fd := Finding{
			Object: Object{Kind: "Job", Namespace: b.c.Namespace, Name: "build-" + bd.Name}, Field: "status.failed",
			Message: fmt.Sprintf("%d build pods failed and the Job still retries", bd.ShownFailures()),
			Since:   timePtr(start), Runbook: b.runbook(alertBuildFailed), Commands: cmds,
		}
		setCause(&fd, bd.Failure)
		result.fail(fd)
	default:
		running := Finding{Object: mosb, Field: "status.conditions", Message: fmt.Sprintf("MachineOSBuild %s is %s", bd.Name, bd.Phase), Since: timePtr(start), Commands: cmds}
		if bd.PodFailures > 0 {
			running.Message += fmt.Sprintf("; %d build pod failed and the Job retries it", bd.PodFailures)
			if bd.Failure != nil {
				running.Class, running.Excerpt = bd.Failure.Class, bd.Failure.Excerpt
			}
		}
		result.run(running)
	}
	return result
}

// buildPodsCheck fails a running build whose current pod cannot run: the
// Job waits for it and never fails (OCLBuildPodsFailing's), unless the
// build's result already fails.
func (b *reportBuilder) buildPodsCheck(bd analysis.Build, resultFailed bool) *pending {
	pods := check(CheckBuildPods)
	if buildOver(bd) || resultFailed || bd.Stuck == nil {
		return pods
	}
	fd := Finding{
		Object: Object{Kind: "Job", Namespace: b.c.Namespace, Name: "build-" + bd.Name}, Field: "status.active",
		Message: "the current build pod cannot run; the Job waits for it and never fails",
		Since:   timePtr(firstSet(bd.Started, bd.Created)), Runbook: b.runbook(alertBuildPodsFailing), Commands: buildCommands(bd, b.c.Namespace),
	}
	setCause(&fd, bd.Stuck)
	pods.fail(fd)
	return pods
}

// buildDurationCheck fails a running build past limits.BuildMaxDuration,
// and one the MCO refused (never to start, with a known cause) past
// limits.BuildRefusedAfter, unless its result or pods already fail.
func (b *reportBuilder) buildDurationCheck(bd analysis.Build, failing bool) *pending {
	duration := check(CheckBuildDuration)
	if buildOver(bd) || failing {
		return duration
	}
	mosb, cmds := Object{Kind: "MachineOSBuild", Name: bd.Name}, buildCommands(bd, b.c.Namespace)
	start := firstSet(bd.Started, bd.Created)
	switch {
	case bd.Phase == analysis.BuildInitial && bd.Failure != nil && b.now.Sub(bd.Created) > b.limits.BuildRefusedAfter:
		// One the MCO will never start: the alert does not wait the hour.
		fd := Finding{
			Object: mosb, Field: "status.conditions",
			Message: fmt.Sprintf("MachineOSBuild %s was created %s ago and the MCO will never start it", bd.Name, b.now.Sub(bd.Created).Round(time.Minute)),
			Since:   timePtr(bd.Created), Runbook: b.runbook(alertBuildTooLong), Commands: cmds,
		}
		setCause(&fd, bd.Failure)
		duration.fail(fd)
	case b.now.Sub(start) > b.limits.BuildMaxDuration:
		duration.fail(Finding{
			Object: mosb, Field: "status.buildStart",
			Message: fmt.Sprintf("MachineOSBuild %s has been running for %s, longer than %s", bd.Name, b.now.Sub(start).Round(time.Minute), b.limits.BuildMaxDuration),
			Class:   classify.Unknown, Since: timePtr(start), Runbook: b.runbook(alertBuildTooLong), Commands: cmds,
		})
	}
	return duration
}

// buildLeftoversCheck fails the objects of the MachineOSConfig's deleted
// builds, orphaned past limits.OrphanedAfter, and those a failed build
// keeps past limits.LeftoversAfter.
func (b *reportBuilder) buildLeftoversCheck(f analysis.MachineOSConfigFinding, bd analysis.Build) *pending {
	ns := b.c.Namespace
	leftovers := check(CheckBuildLeftover)
	// Orphaned since their newest object at the earliest: the alert's
	// for starts when the exporter first sees them, which no object keeps.
	for _, o := range b.orphans[f.Name] {
		if b.now.Sub(o.Newest) > b.limits.OrphanedAfter {
			leftovers.fail(Finding{
				Object:  Object{Kind: "MachineOSBuild", Name: o.MachineOSBuild},
				Message: fmt.Sprintf("%d ConfigMap(s), Secret(s) and Job(s) in %s name MachineOSBuild %s, which no longer exists: nothing will delete them", o.Count, ns, o.MachineOSBuild),
				Class:   classify.Unknown, Runbook: b.runbook(alertBuildObjectsOrphaned), Commands: leftoverCommands(o.MachineOSBuild, ns),
			})
		}
	}
	failed := bd.Phase == analysis.BuildFailed || bd.Phase == analysis.BuildInterrupted
	if n := b.left[bd.Name]; failed && n > 0 && b.now.Sub(firstSet(bd.Ended, bd.Created)) > b.limits.LeftoversAfter {
		leftovers.fail(Finding{
			Object: Object{Kind: "MachineOSBuild", Name: bd.Name}, Message: fmt.Sprintf("%d ConfigMap(s), Secret(s) and Job(s) of the build are still in %s", n, ns),
			Class: classify.Unknown, Since: timePtr(bd.Ended),
			Runbook: b.runbook(alertBuildObjectsLeftBehind), Commands: leftoverCommands(bd.Name, ns),
		})
	}
	return leftovers
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
