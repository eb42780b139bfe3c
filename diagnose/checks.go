package diagnose

// Stage numbers and names, in the seeds' order.
const (
	StageCluster = 0
	StageConfig  = 1
	StageBuild   = 2
	StageRollout = 3
)

var stageNames = map[int]string{
	StageConfig:  "MachineOSConfig",
	StageBuild:   "MachineOSBuild",
	StageRollout: "Rollout",
}

// Check IDs. docs/diagnose.md lists them with the alerts they match.
const (
	CheckExporterAccess = "exporter.access"
	CheckOperator       = "operator.degraded"
	CheckBuilder        = "builder.ready"
	CheckBuilderImage   = "builder.image"

	CheckMOSCCaptured          = "mosc.captured"
	CheckPool                  = "mosc.pool"
	CheckSecrets               = "mosc.secrets"
	CheckPushSpec              = "mosc.push_spec"
	CheckPrebuiltImage         = "mosc.prebuilt_image"
	CheckPrebuiltSeeded        = "mosc.prebuilt_seeded"
	CheckPrebuiltMachineConfig = "mosc.prebuilt_machineconfig"

	CheckBuildCreated  = "build.created"
	CheckBuildResult   = "build.result"
	CheckBuildPods     = "build.pods"
	CheckBuildDuration = "build.duration"
	CheckBuildLeftover = "build.leftovers"

	CheckNodes    = "rollout.nodes"
	CheckProgress = "rollout.progress"
	CheckPoolCond = "rollout.pool"
	CheckPaused   = "rollout.paused"

	CheckMaxUnavailable = "rollout.max_unavailable"
)

// Alert names whose runbooks the findings link (runbooks/<alert>.md).
const (
	alertResourceUnavailable    = "OCLExporterResourceUnavailable"
	alertOperatorDegraded       = "OCLOperatorDegraded"
	alertBuilderNotReady        = "OCLMachineOSBuilderNotReady"
	alertBuilderImageStale      = "OCLMachineOSBuilderImageStale"
	alertPoolMissing            = "OCLMachineOSConfigPoolMissing"
	alertSecretMissing          = "OCLMachineOSConfigSecretMissing"
	alertPushSpecInvalid        = "OCLMachineOSConfigPushSpecInvalid"
	alertPrebuiltInvalid        = "OCLPrebuiltImageInvalid"
	alertPrebuiltNotSeeded      = "OCLPrebuiltImageNotSeeded"
	alertPrebuiltMCMissing      = "OCLPrebuiltImageMachineConfigMissing"
	alertBuildNotStarted        = "OCLMachineOSBuildNotStarted"
	alertBuildFailed            = "OCLMachineOSBuildFailed"
	alertBuildInterrupted       = "OCLMachineOSBuildInterrupted"
	alertBuildPodsFailing       = "OCLBuildPodsFailing"
	alertBuildTooLong           = "OCLMachineOSBuildTooLong"
	alertBuildObjectsLeftBehind = "OCLBuildObjectsLeftBehind"
	alertBuildObjectsOrphaned   = "OCLBuildObjectsOrphaned"
	alertBuildLoop              = "OCLMachineOSBuildLoop"
	alertRebuildNotStarted      = "OCLMachineOSConfigRebuildNotStarted"
	alertNodeUpdateFailing      = "OCLNodeUpdateFailing"
	alertNodeNotOnDesiredImage  = "OCLNodeNotOnDesiredImage"
	alertRolloutStalled         = "OCLRolloutStalled"
	alertPoolDegraded           = "OCLPoolDegraded"
	alertPoolPaused             = "OCLPoolPausedWithPendingImage"
	alertMaxUnavailable         = "OCLPoolMaxUnavailableExceeded"
)

// CheckSpec describes one check: its stage, its question, and the alerts
// whose runbooks its failures link.
type CheckSpec struct {
	ID     string
	Stage  int
	Title  string
	Alerts []string
}

// Checks is every check in report order: the cluster's, then each stage's.
var Checks = []CheckSpec{
	{CheckExporterAccess, StageCluster, "The exporter can read every resource it watches", []string{alertResourceUnavailable}},
	{CheckOperator, StageCluster, "ClusterOperator machine-config is not Degraded by layering", []string{alertOperatorDegraded}},
	{CheckBuilder, StageCluster, "The machine-os-builder is ready when a MachineOSConfig exists", []string{alertBuilderNotReady}},
	{CheckBuilderImage, StageCluster, "The machine-os-builder runs the machine-config-controller's MCO image", []string{alertBuilderImageStale}},

	{CheckMOSCCaptured, StageConfig, "The snapshot holds the MachineOSConfig of a pool that may use image mode", nil},
	{CheckPool, StageConfig, "The MachineConfigPool the MachineOSConfig names exists", []string{alertPoolMissing}},
	{CheckSecrets, StageConfig, "The pull and push Secrets exist in the MCO namespace", []string{alertSecretMissing}},
	{CheckPushSpec, StageConfig, "renderedImagePushSpec is a valid tagged reference", []string{alertPushSpecInvalid}},
	{CheckPrebuiltImage, StageConfig, "The pre-built image is a sha256 digest", []string{alertPrebuiltInvalid}},
	{CheckPrebuiltSeeded, StageConfig, "The pre-built image is seeded", []string{alertPrebuiltNotSeeded}},
	{CheckPrebuiltMachineConfig, StageConfig, "The pre-built image's component MachineConfig exists", []string{alertPrebuiltMCMissing}},

	{CheckBuildCreated, StageBuild, "A MachineOSBuild exists for the pool's rendered config", []string{alertBuildNotStarted, alertBuilderNotReady, alertRebuildNotStarted, alertBuildLoop}},
	{CheckBuildPods, StageBuild, "The build pods are not failing", []string{alertBuildPodsFailing}},
	{CheckBuildDuration, StageBuild, "The build runs within ocl:build_max_duration_seconds", []string{alertBuildTooLong}},
	{CheckBuildResult, StageBuild, "The current MachineOSBuild succeeded", []string{alertBuildFailed, alertBuildInterrupted}},
	{CheckBuildLeftover, StageBuild, "No objects of a failed build are kept longer than 6h", []string{alertBuildObjectsLeftBehind, alertBuildObjectsOrphaned}},

	{CheckNodes, StageRollout, "No node fails to apply its image or config", []string{alertNodeUpdateFailing}},
	{CheckProgress, StageRollout, "Every node runs its desired image", []string{alertNodeNotOnDesiredImage, alertRolloutStalled}},
	{CheckMaxUnavailable, StageRollout, "No more nodes update at once than the pool's maxUnavailable allows", []string{alertMaxUnavailable}},
	{CheckPaused, StageRollout, "The pool is not left paused while machines wait for its image or config", []string{alertPoolPaused}},
	{CheckPoolCond, StageRollout, "The pool reports no unexplained degradation", []string{alertPoolDegraded}},
}

// spec returns the CheckSpec of id; ids are constants, so a miss is a bug.
func spec(id string) CheckSpec {
	for _, c := range Checks {
		if c.ID == id {
			return c
		}
	}
	panic("diagnose: unknown check " + id)
}
