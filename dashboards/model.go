// Package dashboards defines the Grafana / OpenShift console dashboards of
// ocl_exporter as Go values and renders them to the legacy dashboard JSON
// both understand. `make dashboards` (go run ./dashboards/gen) writes
// dashboards/*.json; the tests keep those files current and check every
// query against docs/metrics.md.
//
// Why the legacy schema: the console's renderer (openshift/monitoring-plugin,
// web/src/components/dashboards/legacy/) draws only graph, singlestat, gauge
// and table panels, grouped by the row panels of the top-level panels list,
// and silently skips anything else (timeseries, stat). Grafana migrates
// these legacy types by itself, so one file serves both.
package dashboards

// Kind is a panel type the console draws.
type Kind string

// The panel types the console draws ("grafana-piechart-panel" too, as a bar
// chart, which we do not need).
const (
	Graph      Kind = "graph"
	SingleStat Kind = "singlestat"
	Gauge      Kind = "gauge"
	Table      Kind = "table"
	// StateTimeline is Grafana's: the console cannot draw it, so only a
	// GrafanaOnly dashboard has one.
	StateTimeline Kind = "state-timeline"
)

// Units both renderers format: the console's formatNumber knows only these
// (and bytes), anything else it prints as a plain number.
const (
	UnitCount   = "short"
	UnitSeconds = "s"
	UnitRatio   = "percentunit"
)

// Dashboard is one dashboard: rows of panels, and the cluster and pool
// variables every dashboard shares (Variables).
type Dashboard struct {
	UID         string // stable: Grafana URLs and links use it
	Title       string
	Description string
	// Fleet: a dashboard across clusters for a Thanos or ACM hub. Its
	// cluster variable takes several clusters (All by default), it has no
	// pool variable, every query keeps the cluster label, and it is not
	// given to the console (which sees one cluster): it is written to
	// dashboards/fleet/.
	Fleet bool
	// GrafanaOnly: a dashboard with panels the console cannot draw (state
	// timelines) and the OCL alerts as annotations, for Grafana alone:
	// written to dashboards/grafana/, kept out of the console bundle.
	GrafanaOnly bool
	Rows        []Row
}

// Row is a titled group of panels: a row panel followed by its panels,
// which is how the console groups them.
type Row struct {
	Title  string
	Panels []Panel
}

// Panel is one graph, singlestat, gauge or table.
type Panel struct {
	Kind        Kind
	Title       string
	Description string
	// Span is the width in twelfths (the console's grid); Grafana gets
	// twice that in its 24 columns.
	Span int
	// Height in Grafana grid units (30px); the console sizes by content.
	Height int
	// Unit of the values (graph y axis, singlestat, gauge). Table columns
	// carry their own.
	Unit     string
	Decimals *int
	// Min and Max bound a graph's y axis or a gauge.
	Min, Max *float64
	Stack    bool // graph: stack the series
	// Thresholds colour a singlestat or gauge and draw lines on a graph.
	Thresholds *Thresholds
	Targets    []Target
	// Columns of a table, in order; a column names a label or the value
	// of one target.
	Columns []Column
	// States name the values of a state timeline.
	States []State
}

// State is one value of a state timeline, with its name and colour.
type State struct {
	Value int
	Text  string
	Color string
}

// Target is one PromQL query. Tables and single values are instant queries.
type Target struct {
	Expr   string
	Legend string // graph legend, {{label}} templates
}

// Thresholds colour a value: Base below the first step, each step's colour
// from its value up. The console colours a value equal to a step with the
// colour below it (it searches with sortedIndexBy), so for counts put steps
// between integers (0.5, not 1) and both renderers agree.
type Thresholds struct {
	Base  string
	Steps []Step
}

// Step starts a colour at Value.
type Step struct {
	Value float64
	Color string
}

// Column is a table column: a label (Label set) or the value of the target
// with index Target (Label empty).
type Column struct {
	Title  string
	Label  string
	Target int
	Unit   string
}

// Colours understood by both renderers (Grafana's named colours; the
// console maps them to PatternFly chart tokens).
const (
	Green  = "green"
	Yellow = "yellow"
	Orange = "orange"
	Red    = "red"
	Blue   = "blue"
	Purple = "purple"
)

// Variable lists the values of the label Name of the series Selector
// picks. The data source picker is each renderer's own: Grafana's
// datasource variable, the default PrometheusDatasource of the Perses
// project.
type Variable struct {
	Name     string
	Label    string
	Selector string
	// Multi takes several values, All (.*) by default.
	Multi bool
}

// Variables are the same on every dashboard. cluster is a single value
// without "All": the console replaces "All" with the regex .+, which would
// match nothing where the label does not exist, while an empty value
// (no options) gives cluster=~"" and matches exactly those series. One
// cluster at a time also keeps pools of the same name in two clusters apart.
// A fleet dashboard runs where every series has a cluster label (a hub):
// its cluster variable takes several clusters, All by default.
func (d Dashboard) Variables() []Variable {
	if d.Fleet {
		return []Variable{{Name: "cluster", Label: "Cluster", Selector: layeredPools, Multi: true}}
	}
	return []Variable{
		{Name: "cluster", Label: "Cluster", Selector: "ocl_exporter_build_info"},
		{Name: "pool", Label: "Pool", Selector: `ocl_pool_layered{cluster=~"$cluster"}`, Multi: true},
	}
}

func ptr[T any](v T) *T { return &v }
