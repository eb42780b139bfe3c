package diagnose

// Stage 2: the MachineOSBuild of the pool's rendered config is created, builds and pushes.

import (
	"fmt"
	"time"

	"github.com/ocl-exporter/ocl_exporter/analysis"
	"github.com/ocl-exporter/ocl_exporter/classify"
)

func (b *reportBuilder) buildChecks(f analysis.MachineOSConfigFinding) []Check {
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
	cmds := buildCommands(bd, ns)
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
		if n := b.left[bd.Name]; n > 0 && b.now.Sub(firstSet(bd.Ended, bd.Created)) > b.limits.LeftoversAfter {
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
				Object: Object{Kind: "Job", Namespace: ns, Name: "build-" + bd.Name}, Field: "status.failed",
				Message: fmt.Sprintf("%d build pods failed and the Job still retries", bd.ShownFailures()),
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
		case b.now.Sub(start) > b.limits.BuildMaxDuration:
			duration.fail(Finding{
				Object: mosb, Field: "status.buildStart",
				Message: fmt.Sprintf("MachineOSBuild %s has been running for %s, longer than %s", bd.Name, b.now.Sub(start).Round(time.Minute), b.limits.BuildMaxDuration),
				Class:   classify.Unknown, Since: timePtr(start), Runbook: b.runbook(alertBuildTooLong), Commands: cmds,
			})
		}
		if bd.PodFailures > 0 && bd.ShownFailures() < b.limits.RepeatedPodFailures {
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
