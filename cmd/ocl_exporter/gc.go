package main

import (
	"os"
	"runtime/debug"
)

// gcPercent is the garbage collector's target while serving, unless GOGC
// says otherwise: a collection starts when the heap has grown by half of
// what the last one left live, not by all of it (Go's default, 100). The
// exporter's peak is the first render at start-up, when the caches are
// full and every series is built: at 10,000 nodes, with the default, the
// heap reaches twice its live 34 MiB and the peak resident memory about
// 1.5 × the steady; at 50, 1.35 ×, for no measurable CPU per scrape
// (docs/performance.md). A cluster that changes makes every render swing
// the heap the same way, so the target holds for the whole run.
const gcPercent = 50

// tuneGC sets gcPercent when the environment leaves GOGC unset (the Go
// runtime reads an empty GOGC as unset too).
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}
