package analysis

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	configv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ocl-exporter/ocl_exporter/classify"
)

const (
	cfgNamespace = "openshift-machine-config-operator"
	cfgDigest    = "sha256:f686a353e75b2cf0981d69ee07233e71874ae0a1f37c10d883be070e63e5b60f"
)

var cfgNow = time.Date(2025, 10, 17, 13, 0, 0, 0, time.UTC)

func cfgMOSC(name string, edit func(m *mcfgv1.MachineOSConfig)) *mcfgv1.MachineOSConfig {
	m := &mcfgv1.MachineOSConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: mcfgv1.MachineOSConfigSpec{
			MachineConfigPool:       mcfgv1.MachineConfigPoolReference{Name: name},
			ImageBuilder:            mcfgv1.MachineOSImageBuilder{ImageBuilderType: mcfgv1.JobBuilder},
			BaseImagePullSecret:     &mcfgv1.ImageSecretObjectReference{Name: "base-image-pull"},
			RenderedImagePushSecret: mcfgv1.ImageSecretObjectReference{Name: "rendered-image"},
			RenderedImagePushSpec:   "quay.io/example/os:latest",
		},
	}
	if edit != nil {
		edit(m)
	}
	return m
}

func cfgMeta(namespace, name string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
}

func cfgPool(name string) *mcfgv1.MachineConfigPool {
	return &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

func TestMachineOSConfigFindings(t *testing.T) {
	allSecrets := []*metav1.PartialObjectMetadata{
		cfgMeta(cfgNamespace, "base-image-pull"), cfgMeta(cfgNamespace, "rendered-image"), cfgMeta(cfgNamespace, DefaultBasePullSecret),
	}
	secrets := func(missingPush, missingBase bool, base string) []SecretReference {
		return []SecretReference{
			{Field: FieldRenderedImagePushSecret, Name: "rendered-image", Missing: missingPush},
			{Field: FieldBaseImagePullSecret, Name: base, Missing: missingBase},
		}
	}
	tests := []struct {
		name    string
		cluster Cluster
		want    MachineOSConfigFinding
	}{{
		name:    "healthy",
		cluster: Cluster{MachineOSConfigs: []*mcfgv1.MachineOSConfig{cfgMOSC("infra", nil)}, MachineConfigPools: []*mcfgv1.MachineConfigPool{cfgPool("infra")}, Secrets: allSecrets},
		want: MachineOSConfigFinding{Name: "infra", Pool: "infra", PushSpec: "quay.io/example/os:latest", PushSpecValid: true,
			Secrets: secrets(false, false, "base-image-pull")},
	}, {
		name:    "both secrets forgotten (seed 000)",
		cluster: Cluster{MachineOSConfigs: []*mcfgv1.MachineOSConfig{cfgMOSC("infra", nil)}, MachineConfigPools: []*mcfgv1.MachineConfigPool{cfgPool("infra")}, Secrets: []*metav1.PartialObjectMetadata{cfgMeta(cfgNamespace, DefaultBasePullSecret)}},
		want: MachineOSConfigFinding{Name: "infra", Pool: "infra", PushSpec: "quay.io/example/os:latest", PushSpecValid: true,
			Secrets: secrets(true, true, "base-image-pull")},
	}, {
		name: "secret in another namespace does not count",
		cluster: Cluster{MachineOSConfigs: []*mcfgv1.MachineOSConfig{cfgMOSC("infra", nil)}, MachineConfigPools: []*mcfgv1.MachineConfigPool{cfgPool("infra")},
			Secrets: []*metav1.PartialObjectMetadata{cfgMeta("default", "rendered-image"), cfgMeta(cfgNamespace, "base-image-pull")}},
		want: MachineOSConfigFinding{Name: "infra", Pool: "infra", PushSpec: "quay.io/example/os:latest", PushSpecValid: true,
			Secrets: secrets(true, false, "base-image-pull")},
	}, {
		name: "omitted base secret falls back to the global pull secret copy",
		cluster: Cluster{MachineOSConfigs: []*mcfgv1.MachineOSConfig{cfgMOSC("infra", func(m *mcfgv1.MachineOSConfig) { m.Spec.BaseImagePullSecret = nil })},
			MachineConfigPools: []*mcfgv1.MachineConfigPool{cfgPool("infra")}, Secrets: []*metav1.PartialObjectMetadata{cfgMeta(cfgNamespace, "rendered-image")}},
		want: MachineOSConfigFinding{Name: "infra", Pool: "infra", PushSpec: "quay.io/example/os:latest", PushSpecValid: true,
			Secrets: secrets(false, true, DefaultBasePullSecret)},
	}, {
		name: "pool that does not exist, upper-case push spec",
		cluster: Cluster{MachineOSConfigs: []*mcfgv1.MachineOSConfig{cfgMOSC("infra", func(m *mcfgv1.MachineOSConfig) {
			m.Spec.RenderedImagePushSpec = "quay.io/Example/os:latest"
		})}, Secrets: allSecrets},
		want: MachineOSConfigFinding{Name: "infra", Pool: "infra", PushSpec: "quay.io/Example/os:latest", PoolMissing: true,
			Secrets: secrets(false, false, "base-image-pull")},
	}, {
		name: "current build, image and rebuild",
		cluster: Cluster{MachineOSConfigs: []*mcfgv1.MachineOSConfig{cfgMOSC("infra", func(m *mcfgv1.MachineOSConfig) {
			m.Annotations = map[string]string{AnnotationCurrentBuild: "infra-0123", AnnotationRebuild: ""}
			m.Status.CurrentImagePullSpec = "quay.io/example/os@" + cfgDigest
		})}, MachineConfigPools: []*mcfgv1.MachineConfigPool{cfgPool("infra")}, Secrets: allSecrets},
		want: MachineOSConfigFinding{Name: "infra", Pool: "infra", PushSpec: "quay.io/example/os:latest", PushSpecValid: true,
			Secrets: secrets(false, false, "base-image-pull"), CurrentBuild: "infra-0123",
			CurrentImage: "quay.io/example/os@" + cfgDigest, RebuildRequested: true},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cluster.Namespace = cfgNamespace
			got := MachineOSConfigFindings(&tt.cluster)
			if diff := cmp.Diff([]MachineOSConfigFinding{tt.want}, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidPushSpec(t *testing.T) {
	for spec, want := range map[string]bool{
		"quay.io/example/os:latest": true,
		"image-registry.openshift-image-registry.svc:5000/openshift-machine-config-operator/os-image:latest": true,
		"registry.example.com:5000/a/b/c:v1.2":   true,
		"quay.io/Example/os:latest":              false, // repository name must be lowercase
		"quay.io/example/os":                     false, // no tag
		"example/os:latest":                      false, // not canonical: no registry
		"":                                       false,
		"quay.io/example/os:bad tag":             false,
		"quay.io/example/os@" + cfgDigest:        false, // digest, no tag
		"quay.io/example/os:latest@" + cfgDigest: true,
	} {
		if got := ValidPushSpec(spec); got != want {
			t.Errorf("ValidPushSpec(%q) = %v, want %v", spec, got, want)
		}
	}
}

func TestDigestedImage(t *testing.T) {
	for image, want := range map[string]bool{
		"quay.io/example/os@" + cfgDigest:                            true,
		"quay.io/example/os:latest@" + cfgDigest:                     true,
		"quay.io/example/os:latest":                                  false,
		"quay.io/example/os@sha256:abc":                              false, // too short
		"quay.io/example/os@sha512:" + cfgDigest[7:] + cfgDigest[7:]: false,
		"": false,
	} {
		if got := DigestedImage(image); got != want {
			t.Errorf("DigestedImage(%q) = %v, want %v", image, got, want)
		}
	}
}

func TestPreBuiltImage(t *testing.T) {
	const image = "quay.io/example/os@" + cfgDigest
	seeded := metav1.Condition{Type: ConditionSeeded, Status: metav1.ConditionTrue, Reason: "PreBuiltImageSeeded"}
	componentMC := []*metav1.PartialObjectMetadata{cfgMeta("", PreBuiltImageMachineConfigPrefix+"infra")}
	tests := []struct {
		name     string
		annotate string // "-" for no annotation
		conds    []metav1.Condition
		mcs      []*metav1.PartialObjectMetadata
		want     *PreBuiltImage
	}{
		{name: "not pre-built", annotate: "-", want: nil},
		{name: "awaiting seeding", annotate: image, mcs: componentMC,
			want: &PreBuiltImage{Annotated: true, Image: image, Digested: true, MachineConfig: true}},
		{name: "tag instead of digest", annotate: "quay.io/example/os:latest",
			want: &PreBuiltImage{Annotated: true, Image: "quay.io/example/os:latest"}},
		{name: "seeded, annotation still there", annotate: image, conds: []metav1.Condition{seeded}, mcs: componentMC,
			want: &PreBuiltImage{Annotated: true, Image: image, Digested: true, Seeded: true, MachineConfig: true}},
		{name: "seeded, annotation cleaned up", annotate: "-", conds: []metav1.Condition{seeded}, mcs: componentMC,
			want: &PreBuiltImage{Seeded: true, MachineConfig: true}},
		{name: "seeded, component MachineConfig deleted", annotate: "-", conds: []metav1.Condition{seeded},
			want: &PreBuiltImage{Seeded: true}},
		{name: "component MachineConfig of another pool", annotate: "-", mcs: []*metav1.PartialObjectMetadata{cfgMeta("", PreBuiltImageMachineConfigPrefix+"worker")}, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := cfgMOSC("infra", func(m *mcfgv1.MachineOSConfig) {
				if tt.annotate != "-" {
					m.Annotations = map[string]string{AnnotationPreBuiltImage: tt.annotate}
				}
				m.Status.Conditions = tt.conds
			})
			c := &Cluster{Namespace: cfgNamespace, MachineOSConfigs: []*mcfgv1.MachineOSConfig{m}, MachineConfigs: tt.mcs}
			if diff := cmp.Diff(tt.want, MachineOSConfigFindings(c)[0].PreBuilt); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuilder(t *testing.T) {
	deploy := func(ns, name string, ready int32) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Status: appsv1.DeploymentStatus{ReadyReplicas: ready}}
	}
	tests := []struct {
		name   string
		moscs  int
		deploy []*appsv1.Deployment
		want   BuilderFinding
	}{
		{name: "no layering", want: BuilderFinding{}},
		{name: "expected but absent", moscs: 1, want: BuilderFinding{MachineOSConfigs: 1}},
		{name: "not ready yet", moscs: 1, deploy: []*appsv1.Deployment{deploy(cfgNamespace, "machine-os-builder", 0)}, want: BuilderFinding{MachineOSConfigs: 1}},
		{name: "ready", moscs: 2, deploy: []*appsv1.Deployment{deploy(cfgNamespace, "machine-os-builder", 1)}, want: BuilderFinding{MachineOSConfigs: 2, Ready: true}},
		{name: "other deployment", moscs: 1, deploy: []*appsv1.Deployment{deploy(cfgNamespace, "machine-config-operator", 1), deploy("default", "machine-os-builder", 1)},
			want: BuilderFinding{MachineOSConfigs: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Cluster{Namespace: cfgNamespace, Deployments: tt.deploy}
			for range tt.moscs {
				c.MachineOSConfigs = append(c.MachineOSConfigs, cfgMOSC("infra", nil))
			}
			if got := Builder(c); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// cfgSeed000Message is the machine-config Degraded message of seed 000.
const cfgSeed000Message = `Failed to resync 4.20.0-0-2025-10-16-080835-test-ci-ln-bfn63jk-latest because: could not update Machine OS Builder deployment: could not validate renderedImagePushSecret "rendered-image" for MachineOSConfig infra: secret rendered-image from infra is not found. Did you use the right secret name?`

func TestOperator(t *testing.T) {
	co := func(name string, conds ...configv1.ClusterOperatorStatusCondition) *configv1.ClusterOperator {
		return &configv1.ClusterOperator{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: configv1.ClusterOperatorStatus{Conditions: conds}}
	}
	degraded := func(status configv1.ConditionStatus, reason, msg string) configv1.ClusterOperatorStatusCondition {
		return configv1.ClusterOperatorStatusCondition{Type: configv1.OperatorDegraded, Status: status, Reason: reason, Message: msg}
	}
	tests := []struct {
		name string
		cos  []*configv1.ClusterOperator
		want *OperatorFinding
	}{
		{name: "not watched", want: nil},
		{name: "other operator", cos: []*configv1.ClusterOperator{co("dns", degraded(configv1.ConditionTrue, "X", "y"))}, want: nil},
		{name: "no condition", cos: []*configv1.ClusterOperator{co("machine-config")}, want: &OperatorFinding{}},
		{name: "not degraded", cos: []*configv1.ClusterOperator{co("machine-config", degraded(configv1.ConditionFalse, "AsExpected", ""))}, want: &OperatorFinding{}},
		{name: "seed 000", cos: []*configv1.ClusterOperator{co("machine-config", degraded(configv1.ConditionTrue, "MachineOSBuilderFailed", cfgSeed000Message))},
			want: &OperatorFinding{Degraded: true, Reason: "MachineOSBuilderFailed", Class: classify.SecretNotFound}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Operator(&Cluster{ClusterOperators: tt.cos})
			if got != nil && got.Degraded {
				if got.Excerpt == "" || len(got.Excerpt) > classify.MaxExcerpt {
					t.Errorf("excerpt %q: want 1..%d bytes", got.Excerpt, classify.MaxExcerpt)
				}
				got.Excerpt = ""
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDegradedEvents(t *testing.T) {
	at := func(minutesAgo int) metav1.Time {
		return metav1.NewTime(cfgNow.Add(-time.Duration(minutesAgo) * time.Minute))
	}
	event := func(ns, typ, reason, kind, msg string, last metav1.Time) *corev1.Event {
		return &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Namespace: ns, Name: reason, CreationTimestamp: at(120)},
			Type:           typ,
			Reason:         reason,
			Message:        msg,
			InvolvedObject: corev1.ObjectReference{Kind: kind, Name: "machine-config"},
			LastTimestamp:  last,
		}
	}
	const notFound = `could not validate baseImagePullSecret "base-image-pull" for MachineOSConfig infra: secret base-image-pull from infra is not found. Did you use the right secret name?`
	series := event(cfgNamespace, corev1.EventTypeWarning, "OperatorDegraded: MachineOSBuilderFailed", "ClusterOperator", cfgSeed000Message, metav1.Time{})
	series.EventTime = metav1.NewMicroTime(at(50).Time)
	series.Series = &corev1.EventSeries{Count: 3, LastObservedTime: metav1.NewMicroTime(at(5).Time)}
	c := &Cluster{Namespace: cfgNamespace, Now: cfgNow, Events: []*corev1.Event{
		event(cfgNamespace, corev1.EventTypeWarning, "OperatorDegraded: MachineOSBuilderFailed", "ClusterOperator", notFound, at(30)),
		series,
		event("default", corev1.EventTypeWarning, "ConfigReconcileFailed", "MachineOSConfig", "Failed to reconcile MachineOSConfig spec change: boom", at(20)),
		event(cfgNamespace, corev1.EventTypeWarning, "OperatorDegraded", "ClusterOperator", "something odd", at(10)),
		// Reasons the MCO never gives fold into one series.
		event(cfgNamespace, corev1.EventTypeWarning, "OperatorDegraded: Flood1Failed", "ClusterOperator", "something odd", at(12)),
		event("default", corev1.EventTypeWarning, "Flood2", "MachineOSConfig", "something odd", at(11)),
		// Not read: Normal, operator events outside its namespace, unrelated reasons.
		event(cfgNamespace, corev1.EventTypeNormal, "OperatorDegraded: MachineOSBuilderFailed", "ClusterOperator", notFound, at(1)),
		event("default", corev1.EventTypeWarning, "OperatorDegraded: MachineOSBuilderFailed", "", notFound, at(1)),
		event("default", corev1.EventTypeNormal, "BuildRecovered", "MachineOSConfig", `Build for pool "infra" recovered from degraded state`, at(1)),
		event(cfgNamespace, corev1.EventTypeWarning, "BackOff", "Pod", "Back-off restarting failed container", at(1)),
	}}
	want := []DegradedEvent{
		{Reason: "ConfigReconcileFailed", Class: classify.Unknown, Last: at(20).Time},
		{Reason: "MachineOSBuilderFailed", Class: classify.SecretNotFound, Last: at(5).Time},
		{Reason: OtherEventReason, Class: classify.Unknown, Last: at(10).Time},
	}
	if diff := cmp.Diff(want, DegradedEvents(c)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestBuilderPodCause(t *testing.T) {
	pod := func(name string, created int, st corev1.ContainerStatus) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: cfgNamespace, Name: name, CreationTimestamp: metav1.Unix(int64(created), 0)},
			Status:     corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{st}},
		}
	}
	waiting := func(reason, msg string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: "machine-os-builder", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}
	}
	crashed := func(log string) corev1.ContainerStatus {
		st := waiting("CrashLoopBackOff", "back-off 5m0s restarting failed container=machine-os-builder pod=machine-os-builder-a_ns(u)")
		st.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 2, Reason: "Error", Message: log}
		return st
	}
	evicted := func(name string, created int) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: cfgNamespace, Name: name, CreationTimestamp: metav1.Unix(int64(created), 0)},
			Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted",
				Message: "The node was low on resource: memory. Threshold quantity: 100Mi, available: 91340Ki. Container machine-os-builder was using 61084Ki, request is 50Mi, has larger consumption of memory. "},
		}
	}
	readyBuilder := []*appsv1.Deployment{{ObjectMeta: metav1.ObjectMeta{Namespace: cfgNamespace, Name: "machine-os-builder"}, Status: appsv1.DeploymentStatus{ReadyReplicas: 1}}}
	tests := []struct {
		name   string
		pods   []*corev1.Pod
		deploy []*appsv1.Deployment
		want   *classify.Result
	}{
		{name: "an evicted pod replaced by a ready one is history", deploy: readyBuilder, pods: []*corev1.Pod{
			evicted("machine-os-builder-7d4b9c6f5-xk2lp", 1),
			pod("machine-os-builder-7d4b9c6f5-q8wzn", 2, corev1.ContainerStatus{Name: "machine-os-builder", Ready: true}),
		}},
		{name: "an evicted pod with no ready builder is the cause", pods: []*corev1.Pod{evicted("machine-os-builder-7d4b9c6f5-xk2lp", 1)},
			want: &classify.Result{Class: classify.BuilderUnavailable}},
		{name: "a crash loop beside a ready builder still counts", deploy: readyBuilder, pods: []*corev1.Pod{
			pod("ready", 1, corev1.ContainerStatus{Name: "machine-os-builder", Ready: true}),
			pod("new", 2, crashed("fatal error: concurrent map writes\n")),
		}, want: &classify.Result{Class: classify.BuilderUnavailable, Excerpt: "fatal error: concurrent map writes"}},
		{name: "running", pods: []*corev1.Pod{pod("a", 1, corev1.ContainerStatus{Name: "machine-os-builder", Ready: true})}},
		{name: "starting", pods: []*corev1.Pod{pod("a", 1, waiting("ContainerCreating", ""))}},
		{name: "a panic is quoted over the back-off", pods: []*corev1.Pod{pod("a", 1, crashed("panic: runtime error: invalid memory address or nil pointer dereference\n"))},
			want: &classify.Result{Class: classify.BuilderUnavailable, Excerpt: "panic: runtime error: invalid memory address or nil pointer dereference"}},
		{name: "a known cause in the crash log wins", pods: []*corev1.Pod{pod("a", 1, crashed(`F1125 1 start.go:60] secrets "builder-token" not found`))},
			want: &classify.Result{Class: classify.SecretNotFound, Excerpt: `F1125 1 start.go:60] secrets "builder-token" not found`}},
		{name: "the kubelet's own words decide no class", pods: []*corev1.Pod{pod("a", 1, waiting("CreateContainerConfigError", `secret "x" not found`))},
			want: &classify.Result{Class: classify.BuilderUnavailable, Excerpt: `secret "x" not found`}},
		{name: "the newest failing pod", pods: []*corev1.Pod{
			pod("old", 1, waiting("ImagePullBackOff", `Back-off pulling image "quay.io/a"`)),
			pod("new", 2, crashed("fatal error: concurrent map writes\n")),
			pod("ready", 3, corev1.ContainerStatus{Name: "machine-os-builder", Ready: true}),
		}, want: &classify.Result{Class: classify.BuilderUnavailable, Excerpt: "fatal error: concurrent map writes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Builder(&Cluster{Namespace: cfgNamespace, BuilderPods: tt.pods, Deployments: tt.deploy}).Failure
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestUpgradeBlocked(t *testing.T) {
	co := func(conds ...configv1.ClusterOperatorStatusCondition) *Cluster {
		return &Cluster{ClusterOperators: []*configv1.ClusterOperator{{
			ObjectMeta: metav1.ObjectMeta{Name: "machine-config"},
			Status:     configv1.ClusterOperatorStatus{Conditions: conds},
		}}}
	}
	if got := UpgradeBlocked(&Cluster{}); got != nil {
		t.Errorf("no ClusterOperator: %+v, want nil", got)
	}
	if got := UpgradeBlocked(co(configv1.ClusterOperatorStatusCondition{Type: configv1.OperatorUpgradeable, Status: configv1.ConditionTrue})); got == nil || got.Degraded {
		t.Errorf("upgradeable: %+v, want not blocked", got)
	}
	got := UpgradeBlocked(co(
		configv1.ClusterOperatorStatusCondition{Type: configv1.OperatorDegraded, Status: configv1.ConditionFalse},
		configv1.ClusterOperatorStatusCondition{Type: configv1.OperatorUpgradeable, Status: configv1.ConditionFalse, Reason: "InterruptedBuild",
			Message: "One or more machine config pools' builds have been interrupted, please see `oc get mcp` for further details and resolve before upgrading"},
	))
	if got == nil || !got.Degraded || got.Reason != "InterruptedBuild" || got.Class != classify.BuildInterrupted {
		t.Errorf("interrupted build: %+v, want blocked, InterruptedBuild, build_interrupted", got)
	}
}

// TestBuilderImageStale compares the builder's image with the
// machine-config-controller's (OCPBUGS-56220): a difference is stale, and
// without either Deployment nothing is concluded.
func TestBuilderImageStale(t *testing.T) {
	const old, cur = "quay.io/ocp/release@sha256:0001", "quay.io/ocp/release@sha256:0002"
	deploy := func(ns, name, image string) *appsv1.Deployment {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "kube-rbac-proxy", Image: "quay.io/ocp/proxy"}, {Name: name, Image: image}}
		return d
	}
	stale, same := true, false
	for _, tt := range []struct {
		name   string
		deploy []*appsv1.Deployment
		want   *bool
	}{
		{"same image", []*appsv1.Deployment{deploy(cfgNamespace, "machine-os-builder", cur), deploy(cfgNamespace, "machine-config-controller", cur)}, &same},
		{"previous release's image", []*appsv1.Deployment{deploy(cfgNamespace, "machine-os-builder", old), deploy(cfgNamespace, "machine-config-controller", cur)}, &stale},
		{"no controller", []*appsv1.Deployment{deploy(cfgNamespace, "machine-os-builder", old)}, nil},
		{"no builder", []*appsv1.Deployment{deploy(cfgNamespace, "machine-config-controller", cur)}, nil},
		{"controller elsewhere", []*appsv1.Deployment{deploy(cfgNamespace, "machine-os-builder", old), deploy("default", "machine-config-controller", cur)}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := Builder(&Cluster{Namespace: cfgNamespace, Deployments: tt.deploy}).ImageStale
			if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
				t.Errorf("ImageStale %v, want %v", got, tt.want)
			}
		})
	}
}
