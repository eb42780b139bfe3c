package collector

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// stateLabels say which state, phase or status a series is. A family
// with one of them must partition: one object's series exclude each
// other, so they sum to at most 1 and sum() over the label means "how
// many objects". Counts that overlap (a pool's machines and its ready
// machines) are gauges of their own (docs/metrics.md, "Labels partition").
var stateLabels = []string{"phase", "state", "status"}

func TestStateLabelsPartition(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*", "*.prom"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	checked := 0
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		families, err := parser.TextToMetricFamilies(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for name, mf := range families {
			sums := map[string]float64{}
			for _, m := range mf.GetMetric() {
				var object []string
				stated := false
				for _, l := range m.GetLabel() {
					if slices.Contains(stateLabels, l.GetName()) {
						stated = true
						continue
					}
					object = append(object, l.GetName()+"="+l.GetValue())
				}
				if stated {
					sums[strings.Join(object, ",")] += m.GetGauge().GetValue()
				}
			}
			for object, sum := range sums {
				checked++
				if sum > 1 {
					t.Errorf("%s: %s{%s} sums to %g over its state label: its values overlap", file, name, object, sum)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no family with a state label in the golden files")
	}
}
