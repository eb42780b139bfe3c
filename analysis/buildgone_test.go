package analysis

import (
	"reflect"
	"strconv"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ocl-exporter/ocl_exporter/classify"
)

// withJob records the build's Job as the MCO does once it exists.
func withJob(b *mcfgv1.MachineOSBuild) *mcfgv1.MachineOSBuild {
	b.Status.Builder = &mcfgv1.MachineOSBuilderReference{
		ImageBuilderType: mcfgv1.JobBuilder,
		Job:              &mcfgv1.ObjectReference{Group: "batch", Resource: "jobs", Namespace: buildNS, Name: "build-" + b.Name},
	}
	return b
}

// TestDeletedPodsAreNotFailures: a drain evicts through the API, which
// deletes the pod; the Job counts it, no pod is left to say why.
func TestDeletedPodsAreNotFailures(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		jobFailed            int32
		pods                 []*corev1.Pod
		wantDeleted, wantErr int
	}{
		{"two pods deleted by drains", 2, nil, 2, 0},
		{"one eviction left, one deleted", 2, []*corev1.Pod{
			buildTestPod("b1", "a", 1, corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "The node was low on resource: ephemeral-storage."}),
		}, 1, 0},
		{"two Containerfile failures left", 2, []*corev1.Pod{
			buildTestPod("b1", "a", 1, buildFailedStatus("Error", "error: building at STEP \"RUN dnf install -y nope\": exit status 1")),
			buildTestPod("b1", "b", 2, buildFailedStatus("Error", "error: building at STEP \"RUN dnf install -y nope\": exit status 1")),
		}, 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Cluster{
				Namespace:        buildNS,
				MachineOSConfigs: []*mcfgv1.MachineOSConfig{buildMOSC("layered")},
				MachineOSBuilds:  []*mcfgv1.MachineOSBuild{withJob(startedMOSB("b1", BuildBuilding))},
				Jobs:             []*batchv1.Job{buildTestJob("b1", tc.jobFailed)},
				Pods:             tc.pods,
			}
			got := c.Builds(0)[0]
			if got.PodsDeleted != tc.wantDeleted || got.ShownFailures() != tc.wantErr {
				t.Errorf("PodsDeleted %d, ShownFailures %d; want %d, %d", got.PodsDeleted, got.ShownFailures(), tc.wantDeleted, tc.wantErr)
			}
		})
	}
}

func TestJobGone(t *testing.T) {
	annotated := startedMOSB("b1", BuildBuilding)
	annotated.Annotations = map[string]string{annotationJobUID: "5034bcb4"}
	for _, tc := range []struct {
		name  string
		build *mcfgv1.MachineOSBuild
		jobs  []*batchv1.Job
		not   map[string]bool
		want  *bool
	}{
		{"running, Job recorded and deleted", withJob(startedMOSB("b1", BuildBuilding)), nil, nil, ptr(true)},
		{"running, job-uid annotation, Job deleted", annotated, nil, nil, ptr(true)},
		{"running with its Job", withJob(startedMOSB("b1", BuildBuilding)), []*batchv1.Job{buildTestJob("b1", 0)}, nil, ptr(false)},
		{"Initial, Job never created", buildMOSB("b1", 0, BuildInitial), nil, nil, ptr(false)},
		{"Interrupted, as the MCO marks it", withJob(startedMOSB("b1", BuildInterrupted)), nil, nil, nil},
		{"Jobs not captured", withJob(startedMOSB("b1", BuildBuilding)), nil, map[string]bool{KindJob: true}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Cluster{
				Namespace:        buildNS,
				MachineOSConfigs: []*mcfgv1.MachineOSConfig{buildMOSC("layered")},
				MachineOSBuilds:  []*mcfgv1.MachineOSBuild{tc.build},
				Jobs:             tc.jobs,
				NotCaptured:      tc.not,
			}
			got := c.Builds(0)[0]
			if !reflect.DeepEqual(got.JobGone, tc.want) {
				t.Fatalf("JobGone = %v, want %v", deref(got.JobGone), deref(tc.want))
			}
			if tc.want != nil && *tc.want && (got.Failure == nil || got.Failure.Class != classify.BuildInterrupted) {
				t.Errorf("Failure = %v, want build_interrupted", got.Failure)
			}
		})
	}
}

func TestOrphanedObjects(t *testing.T) {
	labelled := func(name, build string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: buildNS, CreationTimestamp: buildAt(0), Labels: map[string]string{
			LabelOnClusterLayering: "", LabelMachineOSBuild: build, LabelMachineOSConfig: "layered", LabelTargetPool: "layered",
		}}}
	}
	c := &Cluster{
		Namespace:       buildNS,
		MachineOSBuilds: []*mcfgv1.MachineOSBuild{buildMOSB("alive", 0, BuildBuilding)},
		ConfigMaps:      []*metav1.PartialObjectMetadata{labelled("containerfile-gone", "gone"), labelled("mc-gone", "gone"), labelled("mc-alive", "alive")},
		Secrets:         []*metav1.PartialObjectMetadata{labelled("base-gone", "gone")},
	}
	want := []Orphan{{MachineOSBuild: "gone", MachineOSConfig: "layered", Pool: "layered", Count: 3, Newest: buildT0}}
	if got := c.OrphanedObjects(); !reflect.DeepEqual(got, want) {
		t.Errorf("OrphanedObjects() = %v, want %v", got, want)
	}
	c.NotCaptured = map[string]bool{KindMachineOSBuild: true}
	if got := c.OrphanedObjects(); got != nil {
		t.Errorf("with builds not captured: %v, want nothing concluded", got)
	}
}

func ptr(b bool) *bool { return &b }

func deref(b *bool) string {
	if b == nil {
		return "nil"
	}
	return strconv.FormatBool(*b)
}
