package analysis

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ocl-exporter/ocl_exporter/classify"
)

const buildNS = "openshift-machine-config-operator"

var buildT0 = time.Date(2025, 10, 17, 12, 0, 0, 0, time.UTC)

func buildAt(minutes int) metav1.Time {
	return metav1.NewTime(buildT0.Add(time.Duration(minutes) * time.Minute))
}

// buildMOSB is a MachineOSBuild of MachineOSConfig "layered" whose condition
// of type phase is True (none for Initial), as the MCO writes all five.
func buildMOSB(name string, created int, phase BuildPhase) *mcfgv1.MachineOSBuild {
	b := &mcfgv1.MachineOSBuild{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: buildAt(created)},
		Spec: mcfgv1.MachineOSBuildSpec{
			MachineOSConfig: mcfgv1.MachineOSConfigReference{Name: "layered"},
			MachineConfig:   mcfgv1.MachineConfigReference{Name: "rendered-" + name},
		},
	}
	for _, pc := range phaseConditions {
		status := metav1.ConditionFalse
		if pc.phase == phase {
			status = metav1.ConditionTrue
		}
		b.Status.Conditions = append(b.Status.Conditions, metav1.Condition{Type: string(pc.condition), Status: status, Reason: string(pc.condition)})
	}
	return b
}

// failedWith sets the message of b's Failed condition.
func failedWith(b *mcfgv1.MachineOSBuild, message string) *mcfgv1.MachineOSBuild {
	for i := range b.Status.Conditions {
		if b.Status.Conditions[i].Type == string(mcfgv1.MachineOSBuildFailed) {
			b.Status.Conditions[i].Message = message
		}
	}
	return b
}

// startedMOSB is a build whose Job started: the MCO copied its start time.
func startedMOSB(name string, phase BuildPhase) *mcfgv1.MachineOSBuild {
	b := buildMOSB(name, 0, phase)
	t := buildAt(1)
	b.Status.BuildStart = &t
	return b
}

func buildMOSC(name string) *mcfgv1.MachineOSConfig {
	return &mcfgv1.MachineOSConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: buildAt(0)},
		Spec:       mcfgv1.MachineOSConfigSpec{MachineConfigPool: mcfgv1.MachineConfigPoolReference{Name: name}},
	}
}

func buildTestJob(mosbName string, failed int32, conds ...batchv1.JobCondition) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "build-" + mosbName, Namespace: buildNS, Labels: map[string]string{LabelOnClusterLayering: "", LabelMachineOSBuild: mosbName}},
		Status:     batchv1.JobStatus{Failed: failed, Conditions: conds},
	}
}

// buildTestPod is a pod of build-<mosbName> created at minute created.
func buildTestPod(mosbName, suffix string, created int, status corev1.PodStatus) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "build-" + mosbName + "-" + suffix, Namespace: buildNS, CreationTimestamp: buildAt(created),
			Labels: map[string]string{"job-name": "build-" + mosbName, "batch.kubernetes.io/job-name": "build-" + mosbName},
		},
		Status: status,
	}
}

func buildFailedStatus(reason, message string) corev1.PodStatus {
	return corev1.PodStatus{
		Phase: corev1.PodFailed,
		InitContainerStatuses: []corev1.ContainerStatus{{Name: "image-build", State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: reason, Message: message},
		}}},
	}
}

func buildWaitingStatus(reason, message string) corev1.PodStatus {
	return corev1.PodStatus{
		Phase: corev1.PodPending,
		InitContainerStatuses: []corev1.ContainerStatus{{Name: "image-build", State: corev1.ContainerState{
			Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message},
		}}},
	}
}

func TestPhaseOf(t *testing.T) {
	for _, p := range BuildPhases {
		if got := PhaseOf(buildMOSB("b", 0, p)); got != p {
			t.Errorf("conditions of %s read as %s", p, got)
		}
	}
	empty := buildMOSB("b", 0, BuildInitial)
	empty.Status.Conditions = nil
	if got := PhaseOf(empty); got != BuildInitial {
		t.Errorf("no conditions read as %s, want Initial", got)
	}
	seeded := buildMOSB("b", 0, BuildInitial)
	seeded.Labels = map[string]string{LabelPreBuiltImage: "true"}
	if got := PhaseOf(seeded); got != BuildSucceeded {
		t.Errorf("pre-built build read as %s, want Succeeded", got)
	}
}

func TestBuildsKeepsCurrentAndRecentHistory(t *testing.T) {
	m := buildMOSC("layered")
	m.Annotations = map[string]string{AnnotationCurrentBuild: "old"}
	c := &Cluster{
		Namespace:        buildNS,
		MachineOSConfigs: []*mcfgv1.MachineOSConfig{m},
		MachineOSBuilds: []*mcfgv1.MachineOSBuild{
			buildMOSB("old", 1, BuildSucceeded), buildMOSB("b2", 2, BuildSucceeded), buildMOSB("b3", 3, BuildSucceeded),
			buildMOSB("b4", 4, BuildFailed), buildMOSB("gone-1", 5, BuildSucceeded), buildMOSB("gone-2", 6, BuildSucceeded),
		},
	}
	for _, b := range c.MachineOSBuilds[4:] {
		b.Spec.MachineOSConfig.Name = "gone"
		b.Labels = map[string]string{LabelTargetPool: "gone-pool"}
	}
	var got []string
	pools := map[string]string{}
	for _, b := range c.Builds(2) {
		got = append(got, b.Name)
		pools[b.Name] = b.Pool
	}
	want := []string{"old", "b4", "b3", "gone-2", "gone-1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Builds(2) = %v, want %v", got, want)
	}
	if pools["old"] != "layered" || pools["gone-2"] != "gone-pool" {
		t.Errorf("pools = %v, want the MachineOSConfig's pool, else the build's label", pools)
	}
	if got := c.Builds(0); len(got) != 2 {
		t.Errorf("Builds(0) = %d builds, want the current one and the newest orphan", len(got))
	}
}

// TestBuildsBoundsOrphansTogether: builds that each name a different
// missing MachineOSConfig are bounded all together, not per name.
func TestBuildsBoundsOrphansTogether(t *testing.T) {
	c := &Cluster{Namespace: buildNS}
	for i := range 10_000 {
		b := buildMOSB(fmt.Sprintf("orphan-%05d", i), i, BuildSucceeded)
		b.Spec.MachineOSConfig.Name = fmt.Sprintf("gone-%05d", i)
		c.MachineOSBuilds = append(c.MachineOSBuilds, b)
	}
	var got []string
	for _, b := range c.Builds(2) {
		got = append(got, b.Name)
	}
	if want := []string{"orphan-09999", "orphan-09998", "orphan-09997"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Builds(2) of 10,000 orphans = %d builds %.80v, want the newest 3: %v", len(got), got, want)
	}
}

func TestBuildFailure(t *testing.T) {
	const name = "layered-0123456789abcdef0123456789abcdef"
	evicted := buildTestPod(name, "aaaaa", 1, corev1.PodStatus{
		Phase: corev1.PodFailed, Reason: "Evicted",
		Message: "The node was low on resource: ephemeral-storage. Threshold quantity: 1Gi, available: 512Mi.",
	})
	running := buildTestPod(name, "bbbbb", 2, corev1.PodStatus{Phase: corev1.PodRunning})
	unknownCommand := buildTestPod(name, "ccccc", 3, buildFailedStatus("Error",
		"STEP 12/13: RUN unknown-command\n/bin/sh: line 1: unknown-command: command not found\nerror building at STEP \"RUN unknown-command\": while running runtime: exit status 127"))
	oom := buildTestPod(name, "ddddd", 3, buildFailedStatus("OOMKilled", "STEP 5/13: RUN rpm-ostree install foo"))
	interrupted := buildMOSB(name, 0, BuildInterrupted)
	interrupted.Status.Conditions[1].Reason, interrupted.Status.Conditions[1].Message = "Interrupted", "Build Interrupted"

	for _, tc := range []struct {
		name     string
		build    *mcfgv1.MachineOSBuild
		jobs     []*batchv1.Job
		pods     []*corev1.Pod
		events   []*corev1.Event
		failures int
		class    classify.Class // "" means no failure
		stuck    classify.Class // "" means the current attempt is not stuck
		failed   map[classify.Class]int
		// notCaptured is a kind the view does not hold.
		notCaptured string
	}{
		{
			name: "succeeded", build: buildMOSB(name, 0, BuildSucceeded),
		},
		{
			name: "evicted pod of a retrying build", build: buildMOSB(name, 0, BuildBuilding),
			jobs: []*batchv1.Job{buildTestJob(name, 1)}, pods: []*corev1.Pod{evicted, running},
			failures: 1, class: classify.PodEvicted, failed: map[classify.Class]int{classify.PodEvicted: 1},
		},
		{
			name: "running build, no failure", build: buildMOSB(name, 0, BuildBuilding),
			jobs: []*batchv1.Job{buildTestJob(name, 0)}, pods: []*corev1.Pod{running},
		},
		{
			name: "failed build, newest pod's log decides", build: buildMOSB(name, 0, BuildFailed),
			jobs:     []*batchv1.Job{buildTestJob(name, 4, batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"})},
			pods:     []*corev1.Pod{evicted, unknownCommand},
			failures: 4, class: classify.ContainerfileCommandFailed,
			failed: map[classify.Class]int{classify.PodEvicted: 1, classify.ContainerfileCommandFailed: 1},
		},
		{
			name: "OOMKilled image-build", build: buildMOSB(name, 0, BuildFailed),
			pods:     []*corev1.Pod{oom},
			failures: 1, class: classify.OOMKilled, failed: map[classify.Class]int{classify.OOMKilled: 1},
		},
		{
			name: "builder image pull back-off never fails the pod", build: buildMOSB(name, 0, BuildBuilding),
			jobs:  []*batchv1.Job{buildTestJob(name, 0)},
			pods:  []*corev1.Pod{buildTestPod(name, "eeeee", 1, buildWaitingStatus("ImagePullBackOff", `Back-off pulling image "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:1111111111111111111111111111111111111111111111111111111111111111"`))},
			class: classify.BuilderImagePullFailed, stuck: classify.BuilderImagePullFailed,
		},
		{
			name: "unschedulable pod", build: buildMOSB(name, 0, BuildBuilding),
			jobs: []*batchv1.Job{buildTestJob(name, 0)},
			pods: []*corev1.Pod{buildTestPod(name, "fffff", 1, corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
				Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
				Message: "0/6 nodes are available: 3 Insufficient memory, 3 node(s) had untolerated taint {node-role.kubernetes.io/master: }.",
			}}})},
			class: classify.PodUnschedulable, stuck: classify.PodUnschedulable,
		},
		{
			name: "an eviction retried into an unschedulable pod: the failure stays the eviction", build: buildMOSB(name, 0, BuildBuilding),
			jobs: []*batchv1.Job{buildTestJob(name, 1)},
			pods: []*corev1.Pod{evicted, buildTestPod(name, "fffff", 2, corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
				Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/6 nodes are available",
			}}})},
			failures: 1, class: classify.PodEvicted, stuck: classify.PodUnschedulable, failed: map[classify.Class]int{classify.PodEvicted: 1},
		},
		{
			name: "quota refuses the pod: no pod, FailedCreate on the Job", build: buildMOSB(name, 0, BuildPrepared),
			jobs:   []*batchv1.Job{buildTestJob(name, 0)},
			events: []*corev1.Event{quotaEvent(name, 3)},
			class:  classify.QuotaExceeded, stuck: classify.QuotaExceeded,
		},
		{
			name: "a FailedCreate older than the newest pod is over", build: buildMOSB(name, 0, BuildBuilding),
			jobs:     []*batchv1.Job{buildTestJob(name, 1)},
			pods:     []*corev1.Pod{unknownCommand},
			events:   []*corev1.Event{quotaEvent(name, 1)},
			failures: 1, class: classify.ContainerfileCommandFailed, failed: map[classify.Class]int{classify.ContainerfileCommandFailed: 1},
		},
		{
			name: "pod initializing is not a failure", build: buildMOSB(name, 0, BuildBuilding),
			pods: []*corev1.Pod{buildTestPod(name, "eeeee", 1, buildWaitingStatus("PodInitializing", ""))},
		},
		{
			name: "interrupted build", build: interrupted,
			class: classify.BuildInterrupted,
		},
		{
			name: "failed build whose pods are gone keeps the events", build: buildMOSB(name, 0, BuildFailed),
			events: []*corev1.Event{{
				ObjectMeta:     metav1.ObjectMeta{Name: "e1", Namespace: buildNS},
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "build-" + name + "-aaaaa"},
				Type:           corev1.EventTypeWarning, Reason: "Evicted", Message: "The node was low on resource: memory.",
				LastTimestamp: buildAt(2),
			}},
			class: classify.PodEvicted,
		},
		{
			// OCPBUGS-112465: the Failed condition carries the failure's
			// message, so the cause survives the pods and the events.
			name: "failed build whose pods are gone keeps its cause in the Failed condition", build: failedWith(startedMOSB(name, BuildFailed),
				"STEP 12/13: RUN unknown-command\n/bin/sh: line 1: unknown-command: command not found\nerror building at STEP \"RUN unknown-command\": while running runtime: exit status 127"),
			class: classify.ContainerfileCommandFailed,
		},
		{
			name: "the generic Failed message names no cause", build: failedWith(startedMOSB(name, BuildFailed), "Build Failed"),
			class: classify.Unknown,
		},
		{
			name: "failed build with nothing left", build: startedMOSB(name, BuildFailed),
			class: classify.Unknown,
		},
		{
			// startBuild's ContainerfileValidationError: Failed conditions
			// and nothing else.
			name: "failed before any Job existed", build: buildMOSB(name, 0, BuildFailed),
			class: classify.ContainerfileInvalid,
		},
		{
			name: "failed before any Job, Jobs not captured", build: buildMOSB(name, 0, BuildFailed),
			notCaptured: KindJob, class: classify.Unknown,
		},
		{
			name: "pods of another namespace are not the build's", build: startedMOSB(name, BuildFailed),
			pods:  []*corev1.Pod{func() *corev1.Pod { p := oom.DeepCopy(); p.Namespace = "other"; return p }()},
			class: classify.Unknown,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Cluster{Namespace: buildNS, MachineOSBuilds: []*mcfgv1.MachineOSBuild{tc.build}, Jobs: tc.jobs, Pods: tc.pods, Events: tc.events}
			if tc.notCaptured != "" {
				c.NotCaptured = map[string]bool{tc.notCaptured: true}
			}
			builds := c.Builds(0)
			if len(builds) != 1 {
				t.Fatalf("got %d builds, want 1", len(builds))
			}
			b := builds[0]
			if b.PodFailures != tc.failures {
				t.Errorf("PodFailures = %d, want %d", b.PodFailures, tc.failures)
			}
			var class classify.Class
			if b.Failure != nil {
				class = b.Failure.Class
				if len(b.Failure.Excerpt) > classify.MaxExcerpt {
					t.Errorf("excerpt %q is longer than %d bytes", b.Failure.Excerpt, classify.MaxExcerpt)
				}
			}
			if class != tc.class {
				t.Errorf("failure class = %q (%+v), want %q", class, b.Failure, tc.class)
			}
			var stuck classify.Class
			if b.Stuck != nil {
				stuck = b.Stuck.Class
			}
			if stuck != tc.stuck {
				t.Errorf("stuck = %q (%+v), want %q", stuck, b.Stuck, tc.stuck)
			}
			if !reflect.DeepEqual(b.FailedPods, tc.failed) {
				t.Errorf("FailedPods = %v, want %v", b.FailedPods, tc.failed)
			}
			if b.Phase != PhaseOf(tc.build) {
				t.Errorf("phase = %s, want %s", b.Phase, PhaseOf(tc.build))
			}
		})
	}
}

// quotaEvent is the Job controller's FailedCreate when a ResourceQuota
// refuses the build pod, last seen at minute at.
func quotaEvent(mosb string, at int) *corev1.Event {
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "q", Namespace: buildNS},
		InvolvedObject: corev1.ObjectReference{Kind: "Job", Name: "build-" + mosb},
		Type:           corev1.EventTypeWarning, Reason: "FailedCreate",
		Message:       `Error creating: pods "build-` + mosb + `-zzzzz" is forbidden: exceeded quota: compute-resources, requested: limits.memory=4Gi, used: limits.memory=16Gi, limited: limits.memory=16Gi`,
		LastTimestamp: buildAt(at),
	}
}

func TestEphemeralObjects(t *testing.T) {
	labelled := func(name string, labels map[string]string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: buildNS, Labels: labels}}
	}
	ocl := map[string]string{LabelOnClusterLayering: ""}
	c := &Cluster{
		Namespace: buildNS,
		ConfigMaps: []*metav1.PartialObjectMetadata{
			labelled("containerfile-b1", map[string]string{LabelOnClusterLayering: "", LabelMachineOSBuild: "b1"}),
			labelled("mc-b1", ocl),
			labelled("kube-root-ca.crt", nil),
			{ObjectMeta: metav1.ObjectMeta{Name: "mc-b3", Namespace: "other", Labels: ocl}},
		},
		Secrets: []*metav1.PartialObjectMetadata{
			labelled("final-b1", ocl), labelled("base-b2", ocl), labelled("global-pull-secret-copy", nil),
		},
		Jobs: []*batchv1.Job{buildTestJob("b2", 0)},
	}
	want := []EphemeralCount{
		{"b1", KindConfigMap, 2}, {"b1", KindSecret, 1}, {"b1", KindJob, 0},
		{"b2", KindConfigMap, 0}, {"b2", KindSecret, 1}, {"b2", KindJob, 1},
	}
	if got := c.EphemeralObjects(); !reflect.DeepEqual(got, want) {
		t.Errorf("EphemeralObjects() =\n%v\nwant\n%v", got, want)
	}
}

func TestBuildWaits(t *testing.T) {
	pool := func(name, rendered string, conds ...mcfgv1.MachineConfigPoolCondition) *mcfgv1.MachineConfigPool {
		p := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: name}}
		p.Spec.Configuration.Name = rendered
		p.Status.Conditions = conds
		return p
	}
	updating := mcfgv1.MachineConfigPoolCondition{Type: mcfgv1.MachineConfigPoolUpdating, Status: corev1.ConditionTrue, LastTransitionTime: buildAt(30)}
	built := buildMOSB("built-1", 5, BuildBuilding)
	built.Spec.MachineOSConfig.Name = "built"
	c := &Cluster{
		MachineOSConfigs:   []*mcfgv1.MachineOSConfig{buildMOSC("layered"), buildMOSC("built"), buildMOSC("nopool"), buildMOSC("old")},
		MachineConfigPools: []*mcfgv1.MachineConfigPool{pool("layered", "rendered-layered-1"), pool("built", "rendered-built-1"), pool("old", "rendered-old-2", updating)},
		MachineOSBuilds:    []*mcfgv1.MachineOSBuild{built},
	}
	want := []BuildWait{
		{MachineOSConfig: "layered", Pool: "layered", Waiting: true, Since: buildT0},
		{MachineOSConfig: "built", Pool: "built"},
		{MachineOSConfig: "nopool", Pool: "nopool"},
		{MachineOSConfig: "old", Pool: "old", Waiting: true, Since: buildAt(30).Time},
	}
	if got := c.BuildWaits(); !reflect.DeepEqual(got, want) {
		t.Errorf("BuildWaits() =\n%+v\nwant\n%+v", got, want)
	}
}
