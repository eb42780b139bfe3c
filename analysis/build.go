package analysis

import (
	"slices"
	"sort"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ocl-exporter/ocl_exporter/classify"
)

// BuildPhase is the state of a MachineOSBuild, read from its conditions.
type BuildPhase string

// The phases of a MachineOSBuild: the openshift/api BuildProgress
// condition types, all five written together by the MCO
// (openshift/machine-config-operator@7ff337a: pkg/apihelpers/machineosbuild.go), Initial before any.
const (
	BuildInitial     BuildPhase = "Initial"
	BuildPrepared    BuildPhase = "Prepared"
	BuildBuilding    BuildPhase = "Building"
	BuildSucceeded   BuildPhase = "Succeeded"
	BuildFailed      BuildPhase = "Failed"
	BuildInterrupted BuildPhase = "Interrupted"
)

// BuildPhases lists every phase, for one-hot series.
var BuildPhases = []BuildPhase{BuildInitial, BuildPrepared, BuildBuilding, BuildSucceeded, BuildFailed, BuildInterrupted}

// phaseConditions maps the condition the MCO sets True to the phase. The
// MCO writes all five with at most one True; terminal ones come first
// because conditions freeze once a terminal one is True.
var phaseConditions = []struct {
	condition mcfgv1.BuildProgress
	phase     BuildPhase
}{
	{mcfgv1.MachineOSBuildFailed, BuildFailed},
	{mcfgv1.MachineOSBuildInterrupted, BuildInterrupted},
	{mcfgv1.MachineOSBuildSucceeded, BuildSucceeded},
	{mcfgv1.MachineOSBuilding, BuildBuilding},
	{mcfgv1.MachineOSBuildPrepared, BuildPrepared},
}

// Names and labels of the build Job and its pods
// (openshift/machine-config-operator@7ff337a pkg/controller/build/
// buildrequest).
const (
	buildJobPrefix      = "build-"
	imageBuildContainer = "image-build"
	labelJobName        = "job-name"
	labelBatchJobName   = "batch.kubernetes.io/job-name"
	reasonOOMKilled     = "OOMKilled"
	reasonFailedCreate  = "FailedCreate"
	// A container starting, not failing.
	reasonContainerCreating = "ContainerCreating"
	reasonPodInitializing   = "PodInitializing"
	kindJob                 = "Job"
	conditionInterrupted    = string(mcfgv1.MachineOSBuildInterrupted)
	conditionFailed         = string(mcfgv1.MachineOSBuildFailed)
	// annotationJobUID is set on the build once its Job is created
	// (imagebuilder/jobimagebuilder.go start, 4.18 on).
	annotationJobUID = prefix + "job-uid"
)

// Build is what the exporter reports about one MachineOSBuild.
type Build struct {
	Name            string
	MachineOSConfig string
	Pool            string
	RenderedConfig  string
	// Image is the digested pull spec, empty until the build pushed it.
	Image string
	// PreBuilt marks the synthetic build the MCO creates when it seeds a
	// MachineOSConfig with an install-time image; no Job ever runs for it.
	PreBuilt bool
	Phase    BuildPhase
	// Created, Started and Ended are zero when the field is unset.
	Created, Started, Ended time.Time
	// BarePod is the pod 4.16 or 4.17 ran the build in without a Job,
	// when it is there: where its logs are.
	BarePod string
	// PodFailures is how many build pods failed: the Job retries three
	// times, so a build still Building may already have failed pods.
	PodFailures int
	// PodsDeleted is how many of PodFailures no failed pod is left to
	// explain: a drain evicts a build pod through the API, which deletes
	// it, and the Job counts it failed. Not evidence of a broken build.
	PodsDeleted int
	// JobGone, for a build not over when Jobs are readable (nil
	// otherwise): it had a Job (its builder reference or job-uid
	// annotation says so), and that Job is not there. The MCO marks such
	// a build Interrupted when it sees the Job deleted; it did not when
	// the machine-os-builder was down at the time, or before the fix of
	// 4.18.z (#5025) when a pod of the Job had failed.
	JobGone *bool
	// Failure is the cause of a failed or interrupted build, or of a
	// running build whose pods fail or cannot start; nil otherwise.
	Failure *classify.Result
	// Stuck is why the current attempt of a running build cannot run: its
	// pod is unschedulable or waits on a known cause (an image pull
	// back-off never fails the pod), or the Job cannot create a pod at all
	// (quota). The Job never fails such an attempt, so the build would
	// wait forever. Nil otherwise.
	Stuck *classify.Result
	// FailedPods counts the failed build pods still present by the cause
	// of each one's own failure, so an eviction retried before a
	// Containerfile error stays visible next to it.
	FailedPods map[classify.Class]int
}

// PhaseOf returns the phase of a MachineOSBuild. A synthetic pre-built
// build is Succeeded: the MCO creates it finished.
func PhaseOf(b *mcfgv1.MachineOSBuild) BuildPhase {
	if IsPreBuilt(b) {
		return BuildSucceeded
	}
	for _, pc := range phaseConditions {
		if ConditionTrue(b.Status.Conditions, string(pc.condition)) {
			return pc.phase
		}
	}
	return BuildInitial
}

// IsPreBuilt reports whether b is a synthetic build of a pre-built image.
func IsPreBuilt(b *mcfgv1.MachineOSBuild) bool {
	return b.Labels[LabelPreBuiltImage] == "true"
}

// terminal reports whether the build is over.
func (p BuildPhase) terminal() bool {
	return p == BuildSucceeded || p == BuildFailed || p == BuildInterrupted
}

// Builds reports the exported MachineOSBuilds: per MachineOSConfig the
// current build, the newest for its pool's rendered config (the MCO may
// fail that one before making it current) and the history most recent
// others. Of the builds whose
// MachineOSConfig is gone, all together, the history+1 most recent: each
// may name a different missing MachineOSConfig, so a bound per name would
// bound nothing. The MCO never prunes successful builds, so this bounds the
// series.
func (c *Cluster) Builds(history int) []Build {
	var out []Build
	for _, b := range c.exportedBuilds(max(history, 0)) {
		out = append(out, c.build(b))
	}
	return out
}

func (c *Cluster) exportedBuilds(history int) []*mcfgv1.MachineOSBuild {
	var out []*mcfgv1.MachineOSBuild
	done := map[string]bool{}
	for _, m := range c.MachineOSConfigs {
		done[m.Name] = true
		current := c.CurrentBuild(m)
		if current != nil {
			out = append(out, current)
		}
		newest := c.NewestBuildForPool(m)
		if newest != nil && newest != current {
			out = append(out, newest)
		}
		n := 0
		for _, b := range c.BuildsFor(m.Name) {
			if b != current && b != newest && n < history {
				out = append(out, b)
				n++
			}
		}
	}
	var orphans []*mcfgv1.MachineOSBuild
	for _, b := range c.MachineOSBuilds {
		if !done[b.Spec.MachineOSConfig.Name] {
			orphans = append(orphans, b)
		}
	}
	newestFirst(orphans)
	return append(out, orphans[:min(len(orphans), history+1)]...)
}

func (c *Cluster) build(b *mcfgv1.MachineOSBuild) Build {
	job := c.buildJob(b)
	pods := c.buildPods(b)
	failedPods := failedPodClasses(pods)
	out := Build{
		Name:            b.Name,
		MachineOSConfig: b.Spec.MachineOSConfig.Name,
		Pool:            c.buildPool(b),
		RenderedConfig:  b.Spec.MachineConfig.Name,
		Image:           string(b.Status.DigestedImagePushSpec),
		PreBuilt:        IsPreBuilt(b),
		Phase:           PhaseOf(b),
		Created:         b.CreationTimestamp.Time,
		Started:         timeOf(b.Status.BuildStart),
		Ended:           timeOf(b.Status.BuildEnd),
		PodFailures:     podFailures(job, pods),
		FailedPods:      failedPods,
	}
	out.PodsDeleted = max(out.PodFailures-total(failedPods), 0)
	if i := slices.IndexFunc(pods, func(p *corev1.Pod) bool { return barePodOf(p, b) }); i >= 0 {
		out.BarePod = pods[i].Name
	}
	if !out.Phase.terminal() {
		if c.Captured(KindJob) {
			gone := job == nil && hadJob(b)
			out.JobGone = &gone
		}
		out.Stuck = c.stuck(jobName(b), pods)
	}
	out.Failure = c.failure(b, out, job, pods)
	return out
}

// ShownFailures is how many failed pods show a cause other than an
// eviction: what makes a running build failing rather than disrupted. A
// pod the Job counts but that is gone (PodsDeleted) shows nothing.
func (b Build) ShownFailures() int {
	return total(b.FailedPods) - b.FailedPods[classify.PodEvicted]
}

func total(counts map[classify.Class]int) int {
	n := 0
	for _, v := range counts {
		n += v
	}
	return n
}

// hadJob reports whether the MCO recorded a Job for the build: its
// builder reference or the job-uid annotation, both written once the Job
// exists. 4.16 and 4.17 ran bare pods and wrote neither.
func hadJob(b *mcfgv1.MachineOSBuild) bool {
	bl := b.Status.Builder
	return (bl != nil && bl.Job != nil && bl.Job.Name != "") || b.Annotations[annotationJobUID] != ""
}

// buildPool is the pool of the build's MachineOSConfig, else the pool
// label the MCO puts on the build, else the MachineOSConfig's name, which
// the API makes equal to its pool's.
func (c *Cluster) buildPool(b *mcfgv1.MachineOSBuild) string {
	for _, m := range c.MachineOSConfigs {
		if m.Name == b.Spec.MachineOSConfig.Name {
			return m.Spec.MachineConfigPool.Name
		}
	}
	if p := b.Labels[LabelTargetPool]; p != "" {
		return p
	}
	return b.Spec.MachineOSConfig.Name
}

func timeOf(t *metav1.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.Time
}

// jobName is the build's Job as its status names it, else the name the
// MCO gives it.
func jobName(b *mcfgv1.MachineOSBuild) string {
	if bl := b.Status.Builder; bl != nil && bl.Job != nil && bl.Job.Name != "" {
		return bl.Job.Name
	}
	return buildJobPrefix + b.Name
}

func (c *Cluster) buildJob(b *mcfgv1.MachineOSBuild) *batchv1.Job {
	name := jobName(b)
	for _, j := range c.Jobs {
		if j.Namespace == c.Namespace && j.Name == name {
			return j
		}
	}
	return nil
}

// buildPods returns the pods that ran the build, newest first: those the
// Job controller created for its Job (the pod template carries no MCO
// labels, only the Job's), and the bare pod of OpenShift 4.16 and 4.17.
func (c *Cluster) buildPods(b *mcfgv1.MachineOSBuild) []*corev1.Pod {
	job := jobName(b)
	var out []*corev1.Pod
	for _, p := range c.Pods {
		if p.Namespace == c.Namespace && (p.Labels[labelJobName] == job || p.Labels[labelBatchJobName] == job || barePodOf(p, b)) {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return newer(out[i].ObjectMeta, out[j].ObjectMeta) })
	return out
}

// barePodOf says whether p is the pod 4.16 or 4.17 ran b in, with no Job:
// ImageBuildRequest.getBuildName names it build-<rendered config> on both
// (release-4.16 and release-4.17 pkg/controller/build/image_build_request.go);
// 4.16 labels it buildPod (getObjectMeta), 4.17 on-cluster-layering and
// annotates it with its MachineOSBuild (getLabelsForObjectMeta,
// getAnnotationsForObjectMeta). A rendered config belongs to one pool and
// those releases made one MachineOSBuild per pool and config
// (<pool>-<rendered>-builder), so the name links the pod to its build.
func barePodOf(p *corev1.Pod, b *mcfgv1.MachineOSBuild) bool {
	if b.Spec.MachineConfig.Name == "" || p.Name != buildJobPrefix+b.Spec.MachineConfig.Name ||
		metav1.HasLabel(p.ObjectMeta, labelJobName) || metav1.HasLabel(p.ObjectMeta, labelBatchJobName) {
		return false
	}
	if mosb, ok := p.Annotations[LabelMachineOSBuild]; ok {
		return mosb == b.Name
	}
	return metav1.HasLabel(p.ObjectMeta, LabelOnClusterLayering) || metav1.HasLabel(p.ObjectMeta, LabelBuildPod416)
}

func newer(a, b metav1.ObjectMeta) bool {
	if a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.Name > b.Name
	}
	return b.CreationTimestamp.Before(&a.CreationTimestamp)
}

// podFailures is the Job's count of failed pods; pods may be gone while
// the Job still counts them. Without the Job, the failed pods left.
func podFailures(job *batchv1.Job, pods []*corev1.Pod) int {
	if job != nil {
		return int(job.Status.Failed)
	}
	n := 0
	for _, p := range pods {
		if buildPodFailed(p) {
			n++
		}
	}
	return n
}

// failure explains a failed or interrupted build, a running build whose
// Job is gone or whose pods failed, one whose current attempt is stuck,
// and one 4.16 or 4.17 never started over a legacy Secret (refusedStart).
// The failed pods
// decide over a stuck one, so the class of a build that retries the same
// error stays the same from its first failed pod to its Failed phase. It
// returns nil for a build that is fine.
func (c *Cluster) failure(b *mcfgv1.MachineOSBuild, out Build, job *batchv1.Job, pods []*corev1.Pod) *classify.Result {
	phase := out.Phase
	switch {
	case phase == BuildFailed && c.failedBeforeJob(b, job, pods):
		return &classify.Result{Class: classify.ContainerfileInvalid}
	case out.JobGone != nil && *out.JobGone:
		// The build's Job was deleted before it finished: what the MCO
		// calls an interrupted build, although this one still reads running.
		return &classify.Result{Class: classify.BuildInterrupted}
	case phase == BuildFailed || phase == BuildInterrupted || (!phase.terminal() && out.PodFailures > 0):
		r := causeOf(c.failureMessages(b, job, pods))
		return &r
	case phase == BuildInitial:
		if r := c.refusedStart(b); r != nil {
			return r
		}
	}
	return out.Stuck
}

// failedBeforeJob reports a build the MCO failed without running it. Only
// startBuild does that, when the rendered Containerfile does not validate
// (ContainerfileValidationError, openshift/machine-config-operator@7ff337a
// pkg/controller/build/reconciler.go): it writes Failed conditions and
// nothing else, so no builder, build start, Job or pod exists, and the
// cause is only in the machine-os-builder's log. A Job's failure leaves
// the start time and the builder reference behind, and without Jobs and
// Pods in the view nothing can be concluded.
func (c *Cluster) failedBeforeJob(b *mcfgv1.MachineOSBuild, job *batchv1.Job, pods []*corev1.Pod) bool {
	return b.Status.BuildStart == nil && b.Status.Builder == nil && job == nil && len(pods) == 0 &&
		c.Captured(KindJob) && c.Captured(KindPod) && len(c.jobEventMessages(jobName(b))) == 0
}

// stuck returns why a running build's attempt cannot run, or nil. With a
// pod not finished, that pod's scheduling and waiting reasons; with none,
// the Job's FailedCreate events since its newest pod was created (a
// ResourceQuota refusing the pod leaves no pod at all). Only a known cause
// counts: ContainerCreating and the like are a pod starting.
func (c *Cluster) stuck(job string, pods []*corev1.Pod) *classify.Result {
	var msgs []classify.Message
	live := false
	for _, p := range pods {
		if !podDone(p) {
			live = true
			msgs = append(msgs, schedulingMessages(p)...)
			msgs = append(msgs, waitingMessages(p)...)
		}
	}
	if !live {
		var since time.Time
		if len(pods) > 0 {
			since = pods[0].CreationTimestamp.Time
		}
		msgs = c.jobCreateFailures(job, since)
	}
	if r := causeOf(msgs); r.Class != classify.Unknown {
		return &r
	}
	return nil
}

// failedPodClasses counts the failed pods by the cause of each.
func failedPodClasses(pods []*corev1.Pod) map[classify.Class]int {
	var out map[classify.Class]int
	for _, p := range pods {
		if !buildPodFailed(p) {
			continue
		}
		if out == nil {
			out = map[classify.Class]int{}
		}
		out[causeOf(podMessages(p)).Class]++
	}
	return out
}

// BuildWait says whether a MachineOSConfig waits for the MCO to create the
// build of its pool's rendered config: the "takes a long time for the
// image to start building" case.
type BuildWait struct {
	MachineOSConfig string
	Pool            string
	Waiting         bool
	// Since is when the wait began at the latest, zero unless Waiting: the
	// MachineOSConfig's creation, or the pool's last move to Updating=True
	// if later (a new rendered config).
	Since time.Time
}

// BuildWaits reports, per MachineOSConfig, whether its pool's rendered
// config has no MachineOSBuild yet. A MachineOSConfig whose pool is missing
// or not rendered yet is not waiting for a build.
func (c *Cluster) BuildWaits() []BuildWait {
	var out []BuildWait
	for _, m := range c.MachineOSConfigs {
		w := BuildWait{MachineOSConfig: m.Name, Pool: m.Spec.MachineConfigPool.Name}
		if p := c.Pool(w.Pool); p != nil && p.Spec.Configuration.Name != "" && !c.hasBuildFor(m.Name, p.Spec.Configuration.Name) {
			w.Waiting = true
			w.Since = m.CreationTimestamp.Time
			if u := FindPoolCondition(p, mcfgv1.MachineConfigPoolUpdating); u != nil && u.Status == corev1.ConditionTrue && u.LastTransitionTime.After(w.Since) {
				w.Since = u.LastTransitionTime.Time
			}
		}
		out = append(out, w)
	}
	return out
}

func (c *Cluster) hasBuildFor(mosc, renderedConfig string) bool {
	for _, b := range c.BuildsFor(mosc) {
		if b.Spec.MachineConfig.Name == renderedConfig {
			return true
		}
	}
	return false
}
