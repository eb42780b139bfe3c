//go:build tools

package perses

// The modules whose CUE schemas schemas_test.go loads, pinned in
// tools/go.mod: the plugins at the versions the Cluster Observability
// Operator 1.5.1 builds with where the module proxy serves them
// (prometheus v0.57.0, table v0.11.2, timeserieschart v0.12.1) and the
// stat and gauge charts of the same release (v0.12.1), and
// github.com/perses/shared, whose cue/ they import. Nothing here is built
// (the tools build tag): the Prometheus plugin's Go SDK does not compile
// against perses v0.54.0, and shared's only Go packages are commands.
import (
	_ "github.com/perses/plugins/gaugechart/sdk/go"
	_ "github.com/perses/plugins/prometheus/sdk/go/query"
	_ "github.com/perses/plugins/statchart/sdk/go"
	_ "github.com/perses/plugins/table/sdk/go"
	_ "github.com/perses/plugins/timeserieschart/sdk/go"
	_ "github.com/perses/shared/scripts/test-cue"
)
