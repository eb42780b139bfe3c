package collector

import "testing"

func TestBuildStage(t *testing.T) {
	testStage(t, "build", func() stage { return newBuildStage() },
		"seed004-build-failed",
		"seed004-build-evicted-retrying",
		"seed004-waiting-for-build",
		"seed003-prebuilt-seeded",
		"seed003-prebuilt-no-component-mc",
		"seed002-manifest-unknown",
		"healthy-rollout-done",
		"stage2-push-rejected",
		"stage2-base-pull-refused",
		"stage2-interrupted",
		"stage2-builder-image-pull",
		"stage2-pod-unschedulable",
		"stage2-quota-refused",
		"stage2-job-gone",
	)
}
