// Package examples carries the bundled example snapshot, built into the
// binary so `ocl_exporter --example` runs with no cluster at all.
package examples

import "embed"

// Snapshot holds snapshot/: a small cluster showing all three OCL stages.
//
//go:embed snapshot
var Snapshot embed.FS
