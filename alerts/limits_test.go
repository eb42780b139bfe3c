package alerts

import (
	"strings"
	"testing"
	"time"
)

func TestDurations(t *testing.T) {
	d, err := Durations(
		Limit{Rule: "OCLRolloutStalled", Field: "for"},
		Limit{Rule: "OCLMachineOSBuildNotStarted", Field: "threshold"},
		Limit{Rule: "ocl:build_max_duration_seconds", Field: "vector"},
	)
	if err != nil {
		t.Fatal(err)
	}
	if want := []time.Duration{30 * time.Minute, 30 * time.Minute, time.Hour}; !equal(d, want) {
		t.Errorf("got %v, want %v", d, want)
	}
	for _, tc := range []struct {
		l    Limit
		want string
	}{
		{Limit{Rule: "OCLGone", Field: "for"}, "no rule OCLGone"},
		{Limit{Rule: "OCLExporterDown", Field: "threshold"}, `OCLExporterDown: no "> N" threshold`},
		{Limit{Rule: "OCLRolloutStalled", Field: "while"}, `unknown field "while"`},
	} {
		if _, err := Durations(tc.l); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error naming %q", tc.l, err, tc.want)
		}
	}
}

func equal(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
