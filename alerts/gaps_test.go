package alerts

import (
	"path/filepath"
	"testing"

	"github.com/ocl-exporter/ocl_exporter/test/gaps"
	"github.com/ocl-exporter/ocl_exporter/test/lifecycle"
)

// TestGapMatrix replays every lifecycle of testdata/lifecycles through the
// rule files with Prometheus' own rule engine, as promtool does, then again
// with the exporter unreachable at each point that matters (gaps.Cells):
// 1, 3 and 5 minutes must change no page, 20 minutes must raise
// OCLExporterDown and nothing else (gaps.Check).
func TestGapMatrix(t *testing.T) {
	files, err := filepath.Glob(ruleFiles)
	if err != nil {
		t.Fatal(err)
	}
	rules, err := gaps.LoadRules(files, GroupEvalOrder)
	if err != nil {
		t.Fatal(err)
	}
	all, err := lifecycle.All(lifecycleDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range all {
		t.Run(l.Name, func(t *testing.T) {
			t.Parallel()
			states, err := l.States()
			if err != nil {
				t.Fatal(err)
			}
			want, err := rules.Expected(l)
			if err != nil {
				t.Fatal(err)
			}
			gaps.Matrix(t, rules, replayOf(t, l, states), want, l.StageBoundaries())
		})
	}
}
