package main

import (
	"runtime/debug"
	"testing"
)

// TestTuneGC: the exporter collects at gcPercent unless GOGC is set, and
// then leaves the operator's choice alone.
func TestTuneGC(t *testing.T) {
	initial := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(initial) })
	for _, tc := range []struct {
		gogc string
		want int
	}{{"", gcPercent}, {"100", 100}, {"off", 100}} {
		t.Setenv("GOGC", tc.gogc)
		debug.SetGCPercent(100)
		tuneGC()
		if got := debug.SetGCPercent(100); got != tc.want {
			t.Errorf("GOGC=%q: GC percent %d, want %d", tc.gogc, got, tc.want)
		}
	}
}
