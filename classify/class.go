package classify

import "slices"

// Class is the cause of an OCL failure, one of a closed set (see Classes).
type Class string

// Configuration classes: the MachineOSConfig, its secrets or its pool are
// wrong, so no build can start.
const (
	SecretNotFound          Class = "secret_not_found"
	SecretInvalid           Class = "secret_invalid"
	PoolNotFound            Class = "pool_not_found"
	PushSpecInvalid         Class = "push_spec_invalid"
	NonCoreOSNode           Class = "non_coreos_node"
	BuilderUnavailable      Class = "builder_unavailable"
	PoolDegradedBlocksBuild Class = "pool_degraded_blocks_build"
)

// Build classes: the build Job, its pod or buildah failed.
const (
	ContainerfileInvalid       Class = "containerfile_invalid"
	ContainerfileCommandFailed Class = "containerfile_command_failed"
	PackageNotFound            Class = "package_not_found"
	BaseImagePullUnauthorized  Class = "base_image_pull_unauthorized"
	PushUnauthorized           Class = "push_unauthorized"
	ImageNotFound              Class = "image_not_found"
	RegistryUnreachable        Class = "registry_unreachable"
	RegistryTLSUntrusted       Class = "registry_tls_untrusted"
	DiskFull                   Class = "disk_full"
	OOMKilled                  Class = "oom_killed"
	PodEvicted                 Class = "pod_evicted"
	BuildInterrupted           Class = "build_interrupted"
	BuilderImagePullFailed     Class = "builder_image_pull_failed"
	QuotaExceeded              Class = "quota_exceeded"
	PodUnschedulable           Class = "pod_unschedulable"
)

// Rollout classes: a node failed to apply the built image. ImageNotFound,
// RegistryUnreachable, RegistryTLSUntrusted and DiskFull happen here too.
// ClientCertificateInvalid happens in builds too (a RUN step's dnf).
const (
	ImagePullUnauthorized    Class = "image_pull_unauthorized"
	ClientCertificateInvalid Class = "client_certificate_invalid"
	OSUpdateTimeout          Class = "os_update_timeout"
	DrainFailed              Class = "drain_failed"
	CordonFailed             Class = "cordon_failed"
	UnexpectedOnDiskState    Class = "unexpected_on_disk_state"
	Unreconcilable           Class = "unreconcilable"
)

// Unknown is the class of a message that names no known cause.
const Unknown Class = "unknown"

// classes is the closed set in documented order: configuration, build,
// rollout, then Unknown.
var classes = []Class{
	SecretNotFound, SecretInvalid, PoolNotFound, PushSpecInvalid,
	NonCoreOSNode, BuilderUnavailable, PoolDegradedBlocksBuild,

	ContainerfileInvalid, ContainerfileCommandFailed, PackageNotFound,
	BaseImagePullUnauthorized, PushUnauthorized, ImageNotFound,
	RegistryUnreachable, RegistryTLSUntrusted, DiskFull, OOMKilled,
	PodEvicted, BuildInterrupted, BuilderImagePullFailed, QuotaExceeded,
	PodUnschedulable,

	ImagePullUnauthorized, ClientCertificateInvalid, OSUpdateTimeout, DrainFailed, CordonFailed,
	UnexpectedOnDiskState, Unreconcilable,

	Unknown,
}

// Classes returns every class Classify can return, Unknown last. The order
// is stable, so callers can pre-create one series per class.
func Classes() []Class { return slices.Clone(classes) }

// Origin says where a message was read from. It decides which rules apply
// (a node annotation never carries a build error) and how the text is read
// (a log tail is scanned for its error lines).
type Origin string

// The origins the exporter reads messages from.
const (
	// OriginClusterOperator is the machine-config ClusterOperator Degraded
	// message.
	OriginClusterOperator Origin = "clusteroperator_condition"
	// OriginEvent is a Kubernetes Event: Reason is the event reason.
	OriginEvent Origin = "event"
	// OriginBuildLog is the terminated.message of the image-build
	// container: with FallbackToLogsOnError, the last 80 lines of its log,
	// at most 2 KiB.
	OriginBuildLog Origin = "build_pod_log"
	// OriginContainerTerminated is a container's terminated state:
	// Reason (OOMKilled, Error, ...) and message, often a log tail.
	OriginContainerTerminated Origin = "container_terminated"
	// OriginPodWaiting is a container's waiting state: Reason
	// (ImagePullBackOff, ErrImagePull, ...) and message.
	OriginPodWaiting Origin = "pod_waiting"
	// OriginPodStatus is pod.status.reason and message (Evicted, ...).
	OriginPodStatus Origin = "pod_status"
	// OriginJobCondition is a batch Job condition or one of its events
	// (BackoffLimitExceeded, FailedCreate, ...).
	OriginJobCondition Origin = "job_condition"
	// OriginBuildCondition is a MachineOSBuild condition (Failed,
	// Interrupted).
	OriginBuildCondition Origin = "build_condition"
	// OriginNodeReason is the node annotation
	// machineconfiguration.openshift.io/reason.
	OriginNodeReason Origin = "node_reason"
	// OriginMCNCondition is a MachineConfigNode condition message
	// (NodeDegraded, ImagePulledFromRegistry, AppliedOSImage).
	OriginMCNCondition Origin = "machineconfignode_condition"
	// OriginPoolCondition is a MachineConfigPool condition message
	// (NodeDegraded, ImageBuildDegraded, Degraded, Updating).
	OriginPoolCondition Origin = "pool_condition"
	// OriginBuilderPod is a container state of the machine-os-builder's
	// own pod: its last crash's terminated message (the log tail, with
	// terminationMessagePolicy FallbackToLogsOnError) or the kubelet's
	// waiting message (CrashLoopBackOff).
	OriginBuilderPod Origin = "builder_pod"
)

// stages is a set of OCL stages; rules and origins each carry one.
type stages uint8

const (
	configuration stages = 1 << iota
	build
	rollout

	anyStage = configuration | build | rollout
)

// originStages lists the stages whose failures an origin can report.
// Origins not listed (including the empty one) get anyStage.
var originStages = map[Origin]stages{
	// RequiredPoolsFailed quotes the pool's Degraded message, a node error.
	OriginClusterOperator: configuration | rollout,
	// Events come from the operator, the build controller, the kubelet
	// running the build pod and the drain controller.
	OriginEvent:               anyStage,
	OriginBuildLog:            build,
	OriginContainerTerminated: build,
	OriginPodWaiting:          build,
	OriginPodStatus:           build,
	OriginJobCondition:        build,
	OriginBuildCondition:      build,
	OriginBuilderPod:          configuration,
	OriginNodeReason:          rollout,
	OriginMCNCondition:        rollout,
	// ImageBuildDegraded and Updating talk about builds, NodeDegraded about
	// nodes.
	OriginPoolCondition: build | rollout,
}

// reasonStages narrows an origin by its reason: a pool's ImageBuildDegraded
// (reason BuildFailed, reconciler.go syncBuildFailureStatus) quotes the
// build's Failed condition, which carries the failure's message since
// OCPBUGS-112465, so a push refused there is the build's, not a node's.
var reasonStages = map[signal]stages{
	{OriginPoolCondition, "BuildFailed"}: build,
}

func (m Message) stages() stages {
	if s, ok := reasonStages[signal{m.Origin, m.Reason}]; ok {
		return s
	}
	if s, ok := originStages[m.Origin]; ok {
		return s
	}
	return anyStage
}

// isLog reports whether the origin's text is a log tail, to be read line by
// line from its error lines, rather than one error message.
func (o Origin) isLog() bool {
	return o == OriginBuildLog || o == OriginContainerTerminated || o == OriginBuilderPod
}
