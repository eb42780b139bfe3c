package docs

import (
	"os"
	"slices"
	"strings"
	"testing"
)

func TestReadMetrics(t *testing.T) {
	got, err := ReadMetrics(strings.NewReader("# Metrics\n\n| Metric | Labels | Meaning |\n|---|---|---|\n" +
		"| `mosc_info` | `pool`, `machineosconfig` | Always 1. |\n" +
		"| `ocl_machineosconfigs` |  | How many. |\n" +
		"| `ocl_exporter_list_total` | `resource`, `result` | Counter. Lists. |\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m := got["mosc_info"]; !slices.Equal(m.Labels, []string{"machineosconfig", "pool"}) || m.Counter {
		t.Errorf("mosc_info = %+v", m)
	}
	if m, ok := got["ocl_machineosconfigs"]; !ok || len(m.Labels) != 0 {
		t.Errorf("ocl_machineosconfigs = %+v, %v", m, ok)
	}
	if !got["ocl_exporter_list_total"].Counter {
		t.Error("a counter not recognised")
	}
	if _, err := ReadMetrics(strings.NewReader("| `a` |  | x |\n| `a` |  | y |\n")); err == nil {
		t.Error("a metric listed twice must be an error")
	}
}

// TestMetricsDocReads guards the format the other tests rely on.
func TestMetricsDocReads(t *testing.T) {
	f, err := os.Open("metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := ReadMetrics(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < 30 {
		t.Errorf("read only %d metrics from metrics.md: did its table format change?", len(got))
	}
}
