package alerts

import "time"

// Limits are the waits and counts at which the alerts fire, as diagnose
// and /status apply them: a wait shorter than its limit is running, not
// failed. The rule files are their one source. Each field's tag names the
// rule and the part of it that holds the limit:
//
//   - for: the alert's for:
//   - threshold: N in the one "> N" comparison of its expression, seconds
//   - vector: N of a recording rule that is vector(N), seconds
//   - atleast: N in every "<series> >= N" of every rule (they must agree)
//
// RuleLimits (limits_rules.go) is generated from the rules' syntax trees
// by `go test ./alerts/rulelimits/ -update`; that test fails while the
// two differ. The binary links no PromQL parser (the Prometheus module
// doubles its dependencies), so the parse happens there, once, not at
// start-up.
type Limits struct {
	// BuildMaxDuration is how long a build may run.
	BuildMaxDuration time.Duration `rule:"ocl:build_max_duration_seconds" from:"vector"`
	// BuildRefusedAfter is how long a build the MCO will never start (one
	// still Initial whose cause is known) may wait before it fails.
	BuildRefusedAfter time.Duration `rule:"OCLMachineOSBuildTooLong" from:"for"`
	// BuildNotStartedAfter is how long a pool may wait for its build to
	// be created.
	BuildNotStartedAfter time.Duration `rule:"OCLMachineOSBuildNotStarted" from:"threshold"`
	// NotSeededAfter is how long a pre-built image may stay unseeded.
	NotSeededAfter time.Duration `rule:"OCLPrebuiltImageNotSeeded" from:"for"`
	// LeftoversAfter is how long a finished build's objects may stay.
	LeftoversAfter time.Duration `rule:"OCLBuildObjectsLeftBehind" from:"for"`
	// StalledAfter is how long a rollout may make no progress.
	StalledAfter time.Duration `rule:"OCLRolloutStalled" from:"for"`
	// PausedAfter is how long a paused pool may hold back a new image.
	PausedAfter time.Duration `rule:"OCLPoolPausedWithPendingImage" from:"for"`
	// UpdatingTooLongAfter is how long a node may take to reach its image.
	UpdatingTooLongAfter time.Duration `rule:"OCLNodeNotOnDesiredImage" from:"for"`
	// OrphanedAfter is how long objects of a deleted build may stay.
	OrphanedAfter time.Duration `rule:"OCLBuildObjectsOrphaned" from:"for"`
	// OverMaxUnavailableAfter is how long more nodes than maxUnavailable
	// may be updating at once.
	OverMaxUnavailableAfter time.Duration `rule:"OCLPoolMaxUnavailableExceeded" from:"for"`
	// RepeatedPodFailures is how many failed pods make a running build
	// failing (OCLMachineOSBuildFailed), not a healthy retry.
	RepeatedPodFailures int `rule:"machineosbuild:mosb_build_failed_pods_present:without_evictions" from:"atleast"`
}
