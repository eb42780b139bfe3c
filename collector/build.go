package collector

import (
	"strconv"
	"time"

	"github.com/ocl-exporter/ocl_exporter/analysis"
)

// buildStage exports stage 2: MachineOSBuilds, their Job and pods, the
// cause of a failure, and the objects failed builds leave behind.
type buildStage struct {
	phase, info               *Spec
	created, started, ended   *Spec
	podFailures, failedPods   *Spec
	podsDeleted, jobGone      *Spec
	podStuck                  *Spec
	failureClass, failureInfo *Spec
	ephemeral, orphaned       *Spec
	waiting, waitingSince     *Spec
}

func newBuildStage() *buildStage {
	build := []string{"machineosbuild", "machineosconfig", "pool"}
	with := func(extra ...string) []string { return append(append([]string(nil), build...), extra...) }
	return &buildStage{
		phase: newSpec("mosb_build_phase",
			"1 for the phase the MachineOSBuild is in, 0 for the other phases.",
			with("phase")...),
		info: newSpec("mosb_info",
			"Always 1 per MachineOSBuild, with the rendered MachineConfig it builds and the image it pushed.",
			with("rendered_machine_config", "image", "pre_built")...),
		created: newSpec("mosb_creation_timestamp_seconds",
			"Unix time the MachineOSBuild was created.",
			build...),
		started: newSpec("mosb_build_start_timestamp_seconds",
			"Unix time the MachineOSBuild's build started (status.buildStart).",
			build...),
		ended: newSpec("mosb_build_end_timestamp_seconds",
			"Unix time the MachineOSBuild succeeded, failed or was interrupted (status.buildEnd).",
			build...),
		podFailures: newSpec("mosb_build_job_failed_pods",
			"Build pods the MachineOSBuild's Job counts as failed (its status.failed), present or deleted.",
			build...),
		failedPods: newSpec("mosb_build_failed_pods_present",
			"Failed build pods of the MachineOSBuild still present, by the cause of each pod's own failure.",
			with("class")...),
		podsDeleted: newSpec("mosb_build_pods_deleted",
			"Failed build pods the MachineOSBuild's Job counts that are gone, with no pod left to say why.",
			build...),
		jobGone: newSpec("mosb_build_job_gone",
			"1 while the unfinished MachineOSBuild's Job is gone, 0 while it is there or was never created.",
			build...),
		podStuck: newSpec("mosb_build_pod_stuck",
			"1 with the cause while the current build pod of the running MachineOSBuild cannot run.",
			with("class")...),
		failureClass: newSpec("mosb_failure_class",
			"1 with the cause while the MachineOSBuild has failed, was interrupted, or has failing or stuck pods.",
			with("class")...),
		failureInfo: newSpec("mosb_failure_info",
			"Always 1 per failing MachineOSBuild, with the excerpt that decided its failure class.",
			with("class", "excerpt")...),
		ephemeral: newSpec("ocl_build_ephemeral_objects",
			"Ephemeral build objects of the MachineOSBuild still present in the MCO namespace, by kind.",
			"kind", "machineosbuild"),
		orphaned: newSpec("ocl_build_orphaned_objects",
			"Ephemeral build objects naming a MachineOSBuild that no longer exists.",
			build...),
		waiting: newSpec("mosc_waiting_for_build",
			"1 while the pool's rendered config has no MachineOSBuild of the MachineOSConfig yet, 0 otherwise.",
			"machineosconfig", "pool"),
		waitingSince: newSpec("mosc_waiting_for_build_since_timestamp_seconds",
			"Unix time the MachineOSConfig started waiting for its build.",
			"machineosconfig", "pool"),
	}
}

func (s *buildStage) specs() []*Spec {
	return []*Spec{
		s.phase, s.info, s.created, s.started, s.ended, s.podFailures, s.failedPods, s.podsDeleted,
		s.jobGone, s.podStuck, s.failureClass, s.failureInfo, s.ephemeral, s.orphaned, s.waiting, s.waitingSince,
	}
}

func (s *buildStage) collect(f *analysis.Findings, ch chan<- *sample) {
	for _, b := range f.Builds {
		s.collectBuild(b, ch)
	}
	for _, e := range f.Ephemeral {
		ch <- s.ephemeral.gauge(float64(e.Count), e.Kind, e.MachineOSBuild)
	}
	for _, o := range f.Orphaned {
		ch <- s.orphaned.gauge(float64(o.Count), o.MachineOSBuild, o.MachineOSConfig, o.Pool)
	}
	for _, w := range f.BuildWaits {
		ch <- s.waiting.gauge(boolean(w.Waiting), w.MachineOSConfig, w.Pool)
		if w.Waiting && !w.Since.IsZero() {
			ch <- s.waitingSince.gauge(unixSeconds(w.Since), w.MachineOSConfig, w.Pool)
		}
	}
}

func (s *buildStage) collectBuild(b analysis.Build, ch chan<- *sample) {
	id := []string{b.Name, b.MachineOSConfig, b.Pool}
	with := func(extra ...string) []string { return append(append([]string(nil), id...), extra...) }

	for _, p := range analysis.BuildPhases {
		ch <- s.phase.gauge(boolean(p == b.Phase), with(string(p))...)
	}
	ch <- s.info.gauge(1, with(b.RenderedConfig, b.Image, strconv.FormatBool(b.PreBuilt))...)
	for _, ts := range []struct {
		spec *Spec
		t    time.Time
	}{{s.created, b.Created}, {s.started, b.Started}, {s.ended, b.Ended}} {
		if !ts.t.IsZero() {
			ch <- ts.spec.gauge(unixSeconds(ts.t), id...)
		}
	}
	ch <- s.podFailures.gauge(float64(b.PodFailures), id...)
	ch <- s.podsDeleted.gauge(float64(b.PodsDeleted), id...)
	if b.JobGone != nil {
		ch <- s.jobGone.gauge(boolean(*b.JobGone), id...)
	}
	for class, n := range b.FailedPods {
		ch <- s.failedPods.gauge(float64(n), with(string(class))...)
	}
	if st := b.Stuck; st != nil {
		ch <- s.podStuck.gauge(1, with(string(st.Class))...)
	}
	if f := b.Failure; f != nil {
		ch <- s.failureClass.gauge(1, with(string(f.Class))...)
		ch <- s.failureInfo.gauge(1, with(string(f.Class), f.Excerpt)...)
	}
}

// unixSeconds is t as a Unix timestamp, with sub-second precision.
func unixSeconds(t time.Time) float64 {
	return float64(t.UnixNano()) / 1e9
}
