package analysis

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/distribution/reference"
	configv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ocl-exporter/ocl_exporter/classify"
)

// Stage 1 names: openshift/api machineconfiguration/v1 MachineOSConfig
// fields, and openshift/machine-config-operator@7ff337a: pkg/controller/build/constants/constants.go,
// pkg/controller/build/helpers.go (validation), pkg/operator/sync.go. The
// source package has the same object names, but it imports this one.
const (
	// The MachineOSConfig fields that name a Secret in the MCO namespace,
	// spelled as the MCO spells them in its validation errors.
	FieldBaseImagePullSecret     = "baseImagePullSecret"
	FieldRenderedImagePushSecret = "renderedImagePushSecret"

	// PreBuiltImageMachineConfigPrefix + pool is the component
	// MachineConfig that carries an install-time pre-built image.
	PreBuiltImageMachineConfigPrefix = "10-prebuiltimage-osimageurl-"

	machineConfigOperatorName = "machine-config"
	machineOSBuilderName      = "machine-os-builder"
	// MachineConfigControllerName is the machine-config-controller
	// Deployment and its container, which runs the release's MCO image.
	MachineConfigControllerName = "machine-config-controller"

	// operatorDegradedEventPrefix starts the reason of the Warning events
	// the operator emits while Degraded: "OperatorDegraded: <Task>Failed".
	operatorDegradedEventPrefix = "OperatorDegraded"
	// KindMachineOSBuild is, with KindMachineOSConfig, a kind of the
	// build controller's events the analysis reads.
	KindMachineOSBuild = "MachineOSBuild"
)

// MachineOSConfigFinding is what stage 1 knows about one MachineOSConfig.
type MachineOSConfigFinding struct {
	Name string
	Pool string
	// PushSpec is spec.renderedImagePushSpec; PushSpecValid says whether
	// the MCO's reference parser accepts it with a tag.
	PushSpec      string
	PushSpecValid bool
	// PoolMissing is false, and PoolUnknown true, when the view holds no
	// MachineConfigPools at all (an offline snapshot that did not capture
	// them).
	PoolMissing bool
	PoolUnknown bool
	// Secrets has the push secret, then the base pull secret (the default
	// copy of the cluster pull secret when the field is omitted).
	Secrets []SecretReference
	// CurrentBuild is the current-machine-os-build annotation and
	// CurrentImage is status.currentImagePullSpec; "" when unset.
	CurrentBuild string
	CurrentImage string
	// NewestBuild is NewestBuildForPool's name, "" when there is none.
	NewestBuild      string
	RebuildRequested bool
	// PreBuilt is nil unless the MachineOSConfig uses an install-time
	// pre-built image.
	PreBuilt *PreBuiltImage
}

// SecretReference is one Secret a MachineOSConfig field names.
type SecretReference struct {
	Field   string
	Name    string
	Missing bool
	// Unknown: the view holds no Secrets at all (not captured), so
	// whether this one exists cannot be told; Missing is false.
	Unknown bool
	// Canonical is the <Name>-canonical copy 4.16 and 4.17 made of a
	// legacy .dockercfg Secret, when it exists while the MachineOSConfig
	// still names the legacy one (see refusedStart); "" otherwise.
	Canonical string
}

// PreBuiltImage is the install-time seeding state of a MachineOSConfig.
// The MCO removes the annotation once seeding is done, so a seeded
// MachineOSConfig is recognised by its Seeded condition or its component
// MachineConfig too.
type PreBuiltImage struct {
	// Annotated is true while the pre-built-image annotation is present;
	// Image is its value and Digested whether it is name@sha256:<64 hex>.
	Annotated bool
	Image     string
	Digested  bool
	// Seeded is the Seeded condition.
	Seeded bool
	// MachineConfig says whether 10-prebuiltimage-osimageurl-<pool> exists;
	// the MCO needs it forever once seeded. MachineConfigUnknown: no
	// MachineConfig was captured, so it cannot be told.
	MachineConfig        bool
	MachineConfigUnknown bool
}

// MachineOSConfigFindings analyses every MachineOSConfig, sorted by name.
func MachineOSConfigFindings(c *Cluster) []MachineOSConfigFinding {
	secrets := c.secretNames()
	out := make([]MachineOSConfigFinding, 0, len(c.MachineOSConfigs))
	for _, m := range c.MachineOSConfigs {
		pool := m.Spec.MachineConfigPool.Name
		out = append(out, MachineOSConfigFinding{
			Name:             m.Name,
			Pool:             pool,
			PushSpec:         string(m.Spec.RenderedImagePushSpec),
			PushSpecValid:    ValidPushSpec(string(m.Spec.RenderedImagePushSpec)),
			PoolMissing:      c.Captured(KindMachineConfigPool) && c.Pool(pool) == nil,
			PoolUnknown:      !c.Captured(KindMachineConfigPool),
			Secrets:          secretReferences(m, secrets, c.Captured(KindSecret)),
			CurrentBuild:     m.Annotations[AnnotationCurrentBuild],
			CurrentImage:     string(m.Status.CurrentImagePullSpec),
			NewestBuild:      c.newestBuildName(m),
			RebuildRequested: metav1.HasAnnotation(m.ObjectMeta, AnnotationRebuild),
			PreBuilt:         c.preBuiltImage(m),
		})
	}
	slices.SortFunc(out, func(a, b MachineOSConfigFinding) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func (c *Cluster) newestBuildName(m *mcfgv1.MachineOSConfig) string {
	if b := c.NewestBuildForPool(m); b != nil {
		return b.Name
	}
	return ""
}

// secretNames is the set of Secret names in the MCO namespace.
func (c *Cluster) secretNames() map[string]bool {
	names := make(map[string]bool, len(c.Secrets))
	for _, s := range c.Secrets {
		if s.Namespace == c.Namespace {
			names[s.Name] = true
		}
	}
	return names
}

// secretReferences lists the Secrets the MCO needs for a MachineOSConfig.
// An empty name is missing: no Secret has it, and the MCO refuses it ("no
// secret name provided").
func secretReferences(m *mcfgv1.MachineOSConfig, secrets map[string]bool, captured bool) []SecretReference {
	base := DefaultBasePullSecret
	if m.Spec.BaseImagePullSecret != nil {
		base = m.Spec.BaseImagePullSecret.Name
	}
	refs := []SecretReference{
		{Field: FieldRenderedImagePushSecret, Name: m.Spec.RenderedImagePushSecret.Name},
		{Field: FieldBaseImagePullSecret, Name: base},
	}
	for i := range refs {
		refs[i].Missing = captured && !secrets[refs[i].Name]
		refs[i].Unknown = !captured
		refs[i].Canonical = canonicalCopy(refs[i].Name, secrets)
	}
	return refs
}

// ValidPushSpec mirrors the MCO: reference.ParseNamed (canonical form, so
// lower-case repository and explicit registry) in the operator's
// validation, and a tag, which the CRD pattern requires and the build
// replaces with the MachineOSBuild name.
func ValidPushSpec(spec string) bool {
	ref, err := reference.ParseNamed(spec)
	if err != nil {
		return false
	}
	_, tagged := ref.(reference.Tagged)
	return tagged
}

// DigestedImage mirrors the MCO's pre-built image validation: a canonical
// reference with a valid sha256 digest.
func DigestedImage(image string) bool {
	ref, err := reference.ParseNamed(image)
	if err != nil {
		return false
	}
	d, ok := ref.(reference.Digested)
	return ok && d.Digest().Algorithm() == "sha256" && d.Digest().Validate() == nil
}

// preBuiltImage is nil for a MachineOSConfig that never used a pre-built
// image: no annotation, no Seeded condition, no component MachineConfig.
func (c *Cluster) preBuiltImage(m *mcfgv1.MachineOSConfig) *PreBuiltImage {
	image, annotated := m.Annotations[AnnotationPreBuiltImage]
	p := &PreBuiltImage{
		Annotated:     annotated,
		Image:         image,
		Digested:      DigestedImage(image),
		Seeded:        ConditionTrue(m.Status.Conditions, ConditionSeeded),
		MachineConfig: c.hasMachineConfig(PreBuiltImageMachineConfigPrefix + m.Spec.MachineConfigPool.Name),

		MachineConfigUnknown: !c.Captured(KindMachineConfig),
	}
	if !annotated && !p.MachineConfig && FindCondition(m.Status.Conditions, ConditionSeeded) == nil {
		return nil
	}
	return p
}

func (c *Cluster) hasMachineConfig(name string) bool {
	return slices.ContainsFunc(c.MachineConfigs, func(mc *metav1.PartialObjectMetadata) bool { return mc.Name == name })
}

// BuilderFinding says whether the machine-os-builder can run builds.
type BuilderFinding struct {
	// MachineOSConfigs is how many exist: with at least one, the operator
	// should be running the builder.
	MachineOSConfigs int
	// ConfigsUnknown: the view holds no MachineOSConfig at all (not
	// captured), so MachineOSConfigs says nothing; UnseenLayered then
	// counts the pools that show signs of image mode (set by Analyze).
	ConfigsUnknown bool
	UnseenLayered  int
	// Ready is true when the machine-os-builder Deployment in the MCO
	// namespace has a ready pod; false when it is absent.
	Ready bool
	// Unknown: the view holds no Deployments at all (not captured); Ready
	// is false but says nothing.
	Unknown bool
	// Failure is why the newest of its pods that cannot run fails, from
	// the kubelet's account, or nil when none fails. The cause of a crash
	// is in its log tail; without a known cause it is builder_unavailable.
	Failure *classify.Result
	// ImageStale says whether the builder's Deployment runs another image
	// than the machine-config-controller's; both run the release's MCO
	// image ({{.Images.MachineConfigOperator}} in manifests/). nil when
	// either Deployment is not in the view.
	ImageStale *bool
}

// Builder reports the machine-os-builder Deployment and its pods.
func Builder(c *Cluster) BuilderFinding {
	f := BuilderFinding{MachineOSConfigs: len(c.MachineOSConfigs), Unknown: !c.Captured(KindDeployment), ConfigsUnknown: !c.Captured(KindMachineOSConfig)}
	for _, d := range c.Deployments {
		if d.Namespace == c.Namespace && d.Name == machineOSBuilderName && d.Status.ReadyReplicas > 0 {
			f.Ready = true
		}
	}
	var newest *corev1.Pod
	for _, p := range c.BuilderPods {
		// A failed pod is never restarted: its ReplicaSet replaced it, and
		// the kubelet keeps an Evicted one until it is deleted. Once a
		// replacement is ready its failure is history, not a cause.
		replaced := f.Ready && p.Status.Phase == corev1.PodFailed
		if p.Namespace == c.Namespace && !replaced && builderPodFailing(p) && (newest == nil || newest.CreationTimestamp.Before(&p.CreationTimestamp)) {
			newest = p
		}
	}
	if newest != nil {
		f.Failure = builderPodCause(newest)
	}
	builder, controller := c.deploymentImage(machineOSBuilderName), c.deploymentImage(MachineConfigControllerName)
	if builder != "" && controller != "" {
		f.ImageStale = new(builder != controller)
	}
	return f
}

// deploymentImage is the image of the container named as its Deployment
// in the MCO namespace, or "" when there is none. Until
// OCPBUGS-56220 (openshift/machine-config-operator@3b58bc2, 4.20), the
// operator re-applied the machine-os-builder Deployment only when it was
// not running or had the wrong replica count (reconcileMachineOSBuilder,
// pkg/operator/sync.go), so after an upgrade the builder kept the
// previous release's image while the other components moved on.
func (c *Cluster) deploymentImage(name string) string {
	for _, d := range c.Deployments {
		if d.Namespace != c.Namespace || d.Name != name {
			continue
		}
		for _, ct := range d.Spec.Template.Spec.Containers {
			if ct.Name == name {
				return ct.Image
			}
		}
	}
	return ""
}

// builderPodCause is the cause of a failing builder pod: a known cause in
// its status or its last crash's log tail, else builder_unavailable,
// quoting the crash (a panic says more than the back-off that follows it)
// or the kubelet's waiting message. The kubelet's own words about the
// builder's container (a missing volume, an image it cannot pull) are
// about the builder, not about a MachineOSConfig: they decide no class.
func builderPodCause(p *corev1.Pod) *classify.Result {
	crash, waiting := builderPodMessages(p)
	r := causeOf(crash)
	if r.Class != classify.Unknown {
		return &r
	}
	return &classify.Result{Class: classify.BuilderUnavailable, Excerpt: cmp.Or(r.Excerpt, causeOf(waiting).Excerpt)}
}

// builderPodFailing: the pod failed, or a container waits for a reason
// other than starting (CrashLoopBackOff, ImagePullBackOff,
// CreateContainerConfigError, ...).
func builderPodFailing(p *corev1.Pod) bool {
	if p.Status.Phase == corev1.PodFailed {
		return true
	}
	return slices.ContainsFunc(containerStatuses(p), func(s corev1.ContainerStatus) bool {
		w := s.State.Waiting
		return w != nil && w.Reason != "" && w.Reason != reasonContainerCreating && w.Reason != reasonPodInitializing
	})
}

// builderPodMessages lists what the kubelet says of a failing builder
// pod: its status reason (Evicted) and each container's last crash (its
// log tail), then apart the waiting reasons.
func builderPodMessages(p *corev1.Pod) (crash, waiting []classify.Message) {
	if p.Status.Reason != "" {
		crash = append(crash, classify.Message{Origin: classify.OriginBuilderPod, Reason: p.Status.Reason, Text: p.Status.Message})
	}
	for _, s := range containerStatuses(p) {
		for _, t := range []*corev1.ContainerStateTerminated{s.State.Terminated, s.LastTerminationState.Terminated} {
			if t != nil && (t.ExitCode != 0 || t.Reason == reasonOOMKilled) {
				crash = append(crash, classify.Message{Origin: classify.OriginBuilderPod, Reason: t.Reason, Text: t.Message})
			}
		}
	}
	for _, m := range waitingMessages(p) {
		m.Origin = classify.OriginBuilderPod
		waiting = append(waiting, m)
	}
	return crash, waiting
}

// OperatorFinding is one condition of ClusterOperator machine-config, with
// the cause parsed from its message.
type OperatorFinding struct {
	// Degraded is true while the condition says there is a problem:
	// Degraded=True, or Upgradeable=False.
	Degraded bool
	// Reason, Class, Excerpt and Since (the condition's last transition)
	// are set only while Degraded.
	Reason  string
	Class   classify.Class
	Excerpt string
	Since   time.Time
}

// Operator returns the operator's Degraded state, or nil when the
// ClusterOperator is not there to read. A missing or Unknown condition is
// not Degraded.
func Operator(c *Cluster) *OperatorFinding {
	return operatorCondition(c, configv1.OperatorDegraded, configv1.ConditionTrue)
}

// UpgradeBlocked returns the operator's Upgradeable=False, which holds the
// next cluster upgrade (pkg/operator/status.go syncUpgradeableStatus:
// DegradedPool, InterruptedBuild, ClusterBootImageSkewError, ...), as an
// OperatorFinding whose Degraded means blocked; nil when the
// ClusterOperator is not there to read.
func UpgradeBlocked(c *Cluster) *OperatorFinding {
	return operatorCondition(c, configv1.OperatorUpgradeable, configv1.ConditionFalse)
}

// operatorCondition reads the condition t of the machine-config
// ClusterOperator, a problem while its status is bad.
func operatorCondition(c *Cluster, t configv1.ClusterStatusConditionType, bad configv1.ConditionStatus) *OperatorFinding {
	for _, co := range c.ClusterOperators {
		if co.Name != machineConfigOperatorName {
			continue
		}
		for _, cond := range co.Status.Conditions {
			if cond.Type == t && cond.Status == bad {
				r := classify.Classify(classify.Message{Origin: classify.OriginClusterOperator, Reason: cond.Reason, Text: cond.Message})
				return &OperatorFinding{Degraded: true, Reason: cond.Reason, Class: r.Class, Excerpt: r.Excerpt, Since: cond.LastTransitionTime.Time}
			}
		}
		return &OperatorFinding{}
	}
	return nil
}

// DegradedEvent is the newest of the Warning events with one reason and
// one parsed class that explain why the operator degraded: they outlive a
// Degraded condition that has already cleared, for the event TTL (one hour
// by default).
type DegradedEvent struct {
	// Reason is the event reason without the "OperatorDegraded: " prefix,
	// so it matches the ClusterOperator's Degraded reason.
	Reason string
	Class  classify.Class
	Last   time.Time
}

// DegradedEvents reads the Warning events the operator emits in its
// namespace while Degraded ("OperatorDegraded: <Task>Failed") and those
// that concern a MachineOSConfig, sorted by reason and class. The build
// controller records MachineOSConfig events in namespace default
// (ObjectEvents); a snapshot may hold them in any namespace.
func DegradedEvents(c *Cluster) []DegradedEvent {
	type key struct {
		reason string
		class  classify.Class
	}
	last := map[key]time.Time{}
	for _, e := range slices.Concat(c.Events, c.ObjectEvents) {
		reason, ok := degradedEventReason(c, e)
		if !ok {
			continue
		}
		r := classify.Classify(classify.Message{Origin: classify.OriginEvent, Reason: e.Reason, Text: e.Message})
		k := key{reason, r.Class}
		if prev, seen := last[k]; !seen || EventLastSeen(e).After(prev) {
			last[k] = EventLastSeen(e)
		}
	}
	out := make([]DegradedEvent, 0, len(last))
	for k, t := range last {
		out = append(out, DegradedEvent{Reason: k.reason, Class: k.class, Last: t})
	}
	slices.SortFunc(out, func(a, b DegradedEvent) int {
		if c := strings.Compare(a.Reason, b.Reason); c != 0 {
			return c
		}
		return strings.Compare(string(a.Class), string(b.Class))
	})
	return out
}

// degradedEventReason selects the events DegradedEvents reads and returns
// the reason to report them under: one of degradedEventReasons, else
// OtherEventReason. Reasons are free text anyone who may post an event
// writes, and each became a series (200,000 events with distinct reasons
// gave 200,000 series).
func degradedEventReason(c *Cluster, e *corev1.Event) (string, bool) {
	if e.Type != corev1.EventTypeWarning {
		return "", false
	}
	reason := e.Reason
	if e.InvolvedObject.Kind != KindMachineOSConfig {
		rest, ok := strings.CutPrefix(e.Reason, operatorDegradedEventPrefix)
		if !ok || e.Namespace != c.Namespace {
			return "", false
		}
		reason = strings.TrimSpace(strings.TrimPrefix(rest, ":"))
	}
	if !degradedEventReasons[reason] {
		return OtherEventReason, true
	}
	return reason, true
}

// OtherEventReason stands for every reason outside degradedEventReasons.
const OtherEventReason = "other"

// degradedEventReasons are the reasons the MCO gives the events
// DegradedEvents reads: the operator's Degraded reasons, "<task>Failed"
// for each task of its sync loop (pkg/operator/operator.go syncFuncs,
// status.go taskFailed; OSImageStream since 4.21, NetworkPolicies in 4.23),
// and the build controller's Warnings about a MachineOSConfig
// (pkg/controller/build/ocl_events.go, 4.23).
var degradedEventReasons = map[string]bool{
	"OSImageStreamFailed": true, "RenderConfigFailed": true, "MachineConfigurationFailed": true,
	"MachineConfigNodeFailed": true, "MachineConfigPoolsFailed": true, "NetworkPoliciesFailed": true,
	"MachineConfigDaemonFailed": true, "MachineConfigControllerFailed": true, "MachineConfigServerFailed": true,
	"MachineOSBuilderFailed": true, "RequiredPoolsFailed": true,
	"BuildDegraded": true, "ConfigReconcileFailed": true,
}

// EventLastSeen is when the event last happened, whichever API wrote it.
func EventLastSeen(e *corev1.Event) time.Time {
	t := e.CreationTimestamp.Time
	for _, c := range []time.Time{e.FirstTimestamp.Time, e.LastTimestamp.Time, e.EventTime.Time} {
		if c.After(t) {
			t = c
		}
	}
	if e.Series != nil && e.Series.LastObservedTime.After(t) {
		t = e.Series.LastObservedTime.Time
	}
	return t
}
