package collector

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

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
			"1 for the phase the MachineOSBuild is in (Initial, Prepared, Building, Succeeded, Failed, Interrupted, read from its conditions; a synthetic pre-built build is Succeeded), 0 for the other phases.",
			with("phase")...),
		info: newSpec("mosb_info",
			"Always 1 per exported MachineOSBuild: the rendered MachineConfig it builds, the digested image once pushed (empty before), and pre_built=\"true\" for the synthetic build of an install-time pre-built image.",
			with("rendered_machine_config", "image", "pre_built")...),
		created: newSpec("mosb_creation_timestamp_seconds",
			"Unix time the MachineOSBuild was created.",
			build...),
		started: newSpec("mosb_build_start_timestamp_seconds",
			"Unix time the MachineOSBuild's build Job started (status.buildStart); absent until it starts.",
			build...),
		ended: newSpec("mosb_build_end_timestamp_seconds",
			"Unix time the MachineOSBuild succeeded, failed or was interrupted (status.buildEnd); absent while it runs.",
			build...),
		podFailures: newSpec("mosb_build_job_failed_pods",
			"Build pods the MachineOSBuild's Job counts as failed (its status.failed), present or deleted.",
			build...),
		failedPods: newSpec("mosb_build_failed_pods_present",
			"Failed build pods of the MachineOSBuild still present, by the cause of each pod's own failure.",
			with("class")...),
		podsDeleted: newSpec("mosb_build_pods_deleted",
			"Failed build pods the MachineOSBuild's Job counts but that are gone, with no failed pod left to say why (Job status.failed less the failed pods present): a drain evicts a build pod through the API, which deletes it. Not counted as the build failing.",
			build...),
		jobGone: newSpec("mosb_build_job_gone",
			"1 while the MachineOSBuild is not Succeeded, Failed or Interrupted although it had a Job (builder reference or job-uid annotation) and that Job is gone: deleted while the machine-os-builder was down, or by an MCO that did not mark the build Interrupted; 0 for a build not over whose Job is there or was never created. No series for a finished build or when Jobs are not readable.",
			build...),
		podStuck: newSpec("mosb_build_pod_stuck",
			"1 with the parsed cause (class) while the current attempt of a running MachineOSBuild cannot run: its pod is unschedulable or waits on a known cause such as an image pull back-off, or a ResourceQuota refuses to create it. The Job never fails such an attempt. No series otherwise.",
			with("class")...),
		failureClass: newSpec("mosb_failure_class",
			"1 with the parsed cause (class) while the MachineOSBuild is Failed or Interrupted, or still running with failed or stuck build pods; no series while the build is fine.",
			with("class")...),
		failureInfo: newSpec("mosb_failure_info",
			"Always 1, one series per failing MachineOSBuild: the line that decided its failure class (at most 200 bytes, empty when nothing explains it), for alert descriptions.",
			with("class", "excerpt")...),
		ephemeral: newSpec("ocl_build_ephemeral_objects",
			"Ephemeral build objects (kind ConfigMap, Secret, Job labelled machineconfiguration.openshift.io/on-cluster-layering) still present in the MCO namespace for the MachineOSBuild; they exist while a build runs and are left behind when it fails, 0 when none of that kind is left.",
			"kind", "machineosbuild"),
		orphaned: newSpec("ocl_build_orphaned_objects",
			"Ephemeral build objects (ConfigMap, Secret, Job labelled machineconfiguration.openshift.io/on-cluster-layering) of a MachineOSBuild that no longer exists, with the MachineOSConfig and pool their labels name: nothing of the MCO deletes them any more. No series when every such object has its build, or when MachineOSBuilds are not readable.",
			build...),
		waiting: newSpec("mosc_waiting_for_build",
			"1 while the pool's rendered MachineConfig has no MachineOSBuild of this MachineOSConfig yet (the build has not been created), 0 otherwise.",
			"machineosconfig", "pool"),
		waitingSince: newSpec("mosc_waiting_for_build_since_timestamp_seconds",
			"Unix time the MachineOSConfig started waiting for its build: its creation, or the pool's last change to Updating=True if later; present only while mosc_waiting_for_build is 1.",
			"machineosconfig", "pool"),
	}
}

func (s *buildStage) specs() []*Spec {
	return []*Spec{
		s.phase, s.info, s.created, s.started, s.ended, s.podFailures, s.failedPods, s.podsDeleted,
		s.jobGone, s.podStuck, s.failureClass, s.failureInfo, s.ephemeral, s.orphaned, s.waiting, s.waitingSince,
	}
}

func (s *buildStage) collect(f *analysis.Findings, ch chan<- prometheus.Metric) {
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

func (s *buildStage) collectBuild(b analysis.Build, ch chan<- prometheus.Metric) {
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
