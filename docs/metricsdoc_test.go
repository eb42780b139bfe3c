package docs

import (
	"os"
	"slices"
	"strings"
	"testing"
)

func TestReadMetrics(t *testing.T) {
	got, err := ReadMetrics(strings.NewReader("# Metrics\n\n| Metric | Type | Labels | Stability | Meaning |\n|---|---|---|---|---|\n" +
		"| `mosc_info` | gauge | `pool`, `machineosconfig` | STABLE | Always 1. |\n" +
		"| `ocl_machineosconfigs` | gauge |  | EXPERIMENTAL | How many. |\n" +
		"| `ocl_exporter_list_total` | counter | `resource`, `result` | EXPERIMENTAL | Lists. |\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m := got["mosc_info"]; !slices.Equal(m.Labels, []string{"machineosconfig", "pool"}) || m.Counter() || m.Stability != "STABLE" {
		t.Errorf("mosc_info = %+v", m)
	}
	if m, ok := got["ocl_machineosconfigs"]; !ok || len(m.Labels) != 0 || m.Type != "gauge" || m.Stability != "EXPERIMENTAL" {
		t.Errorf("ocl_machineosconfigs = %+v, %v", m, ok)
	}
	if !got["ocl_exporter_list_total"].Counter() {
		t.Error("a counter not recognised")
	}
	for _, bad := range []string{
		"| `a` | gauge |  | STABLE | x |\n| `a` | gauge |  | STABLE | y |\n", // twice
		"| `a` |  | x |\n",                         // no type nor stability
		"| `a` | histogram | `b` | STABLE | x |\n", // a type the exporter has not
		"| `a` | gauge | `b` | x |\n",              // no stability
	} {
		if _, err := ReadMetrics(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: want an error", bad)
		}
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
