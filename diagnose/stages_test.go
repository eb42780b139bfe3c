package diagnose

import (
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ocl-exporter/ocl_exporter/classify"
	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
)

// TestLaterStagesShowTheirEvidence: with stage 1 failing now (its push
// Secret deleted), the layered pool's failed build and the infra pool's
// node that cannot pull its image are still shown, with their causes,
// and the summary names both failures.
func TestLaterStagesShowTheirEvidence(t *testing.T) {
	s := sourcetest.Source(t, "../examples/snapshot")
	c := s.Cluster(sourcetest.Now)
	push := map[string]bool{}
	for _, m := range c.MachineOSConfigs {
		if m.Name == "layered" || m.Name == "infra" {
			push[m.Spec.RenderedImagePushSecret.Name] = true
		}
	}
	c.Secrets = slices.DeleteFunc(slices.Clone(c.Secrets), func(m *metav1.PartialObjectMetadata) bool { return push[m.Name] })
	r := New(c, s.Status(), Options{RunbookBase: testRunbookBase})

	for pool, want := range map[string]struct {
		stage int
		class classify.Class
	}{
		"layered": {StageBuild, classify.ContainerfileCommandFailed},
		"infra":   {StageRollout, classify.ImageNotFound},
	} {
		i := slices.IndexFunc(r.Pools, func(p Pool) bool { return p.Name == pool })
		if i < 0 {
			t.Fatalf("no pool %s", pool)
		}
		p := r.Pools[i]
		if p.Stages[0].Status != Failed {
			t.Errorf("%s: stage 1 %s, want failed (its push Secret is gone)", pool, p.Stages[0].Status)
		}
		st := p.Stages[want.stage-1]
		if st.Status != Failed || !hasClass(st, want.class) {
			t.Errorf("%s: stage %d %s, want failed with class %s", pool, want.stage, st.Status, want.class)
		}
		if !strings.Contains(p.Summary, "stage 1 ") || !strings.Contains(p.Summary, st.Name+" failed") || !strings.Contains(p.Summary, "; then ") {
			t.Errorf("%s: summary %q does not name both failures", pool, p.Summary)
		}
	}
	// A pool whose build was never created has nothing to show beyond
	// stage 1.
	gpu := slices.IndexFunc(r.Pools, func(p Pool) bool { return p.Name == "gpu" })
	if gpu < 0 {
		t.Fatal("no pool gpu")
	}
	if st := r.Pools[gpu].Stages[1].Status; st != NotReached {
		t.Errorf("gpu: stage 2 %s, want not reached (no MachineOSBuild)", st)
	}
}

func hasClass(s Stage, class classify.Class) bool {
	for _, c := range s.Checks {
		for _, f := range c.Findings {
			if c.Status == Failed && f.Class == class {
				return true
			}
		}
	}
	return false
}

// TestFailedStagesInTimeOrder: the failure that started first comes first,
// whatever its stage; a failure with no time comes last.
func TestFailedStagesInTimeOrder(t *testing.T) {
	at := func(m int) *time.Time { u := sourcetest.Now.Add(time.Duration(m) * time.Minute); return &u }
	stage := func(n int, since *time.Time) Stage {
		return Stage{Number: n, Name: stageNames[n], Status: Failed, Checks: []Check{
			{Status: Passed},
			{Status: Failed, Findings: []Finding{{Message: stageNames[n], Since: since}}},
		}}
	}
	p := Pool{Stages: []Stage{stage(StageConfig, at(-5)), stage(StageBuild, at(-60)), stage(StageRollout, nil)}}
	var got []int
	for _, fs := range failedStages(p) {
		got = append(got, fs.stage.Number)
	}
	if want := []int{StageBuild, StageConfig, StageRollout}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}
