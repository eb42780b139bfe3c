package collector

import "testing"

func TestConfigStage(t *testing.T) {
	testStage(t, "config", func() stage { return newConfigStage() },
		"seed000-secrets-missing",
		"seed003-prebuilt-seeded",
		"seed003-prebuilt-tag",
		"seed003-prebuilt-no-component-mc",
		"seed004-waiting-for-build",
		"healthy-rollout-done",
		"stage2-builder-crashloop",
		"stage1-pool-missing",
		"stage1-push-spec-uppercase",
		"stage1-operator-recovered",
	)
}
