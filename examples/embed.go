// Package examples carries the bundled example snapshot, built into the
// binary so `ocl_exporter --example` runs with no cluster at all.
package examples

import (
	"embed"
	"time"
)

// Snapshot holds snapshot/: a small cluster showing all three OCL stages.
//
//go:embed snapshot
var Snapshot embed.FS

// Captured is when the example snapshot was taken (snapshot/README.md):
// `diagnose --example` evaluates it then, so its durations read as they
// did during the incident.
var Captured = time.Date(2025, 10, 17, 13, 0, 0, 0, time.UTC)
