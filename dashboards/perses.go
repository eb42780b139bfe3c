package dashboards

// The same dashboards as Perses dashboard specs (perses.dev, the format
// v0.54.0 of github.com/perses/perses reads), for the PersesDashboard
// objects the Cluster Observability Operator's monitoring console plugin
// draws (make bundle, deploy/overlays/perses/). Every panel, query,
// variable and threshold comes from the same Dashboard value as the
// Grafana JSON; tools/perses validates the result with Perses' own code.
//
// The panels: graph -> TimeSeriesChart, singlestat -> StatChart, gauge ->
// GaugeChart, table -> Table, state timeline -> StatusHistoryChart (the
// plugins of github.com/perses/plugins). Queries name no data source:
// Perses then uses the project's default PrometheusDatasource, which the
// overlay creates, so Grafana's datasource variable has no twin here.

import (
	"errors"
	"fmt"
	"strconv"
)

// PersesSpec is a Perses dashboard spec (github.com/perses/spec/go/dashboard.Spec).
type PersesSpec struct {
	Display         persesDisplay          `json:"display"`
	Variables       []persesVariable       `json:"variables"`
	Panels          map[string]persesPanel `json:"panels"`
	Layouts         []persesLayout         `json:"layouts"`
	Duration        string                 `json:"duration"`
	RefreshInterval string                 `json:"refreshInterval"`
}

type persesDisplay struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

type persesPlugin struct {
	Kind string `json:"kind"`
	Spec any    `json:"spec"`
}

type persesVariable struct {
	Kind string             `json:"kind"`
	Spec persesListVariable `json:"spec"`
}

type persesListVariable struct {
	Name           string        `json:"name"`
	Display        persesVarName `json:"display"`
	DefaultValue   any           `json:"defaultValue,omitempty"`
	AllowAllValue  bool          `json:"allowAllValue"`
	AllowMultiple  bool          `json:"allowMultiple"`
	CustomAllValue string        `json:"customAllValue,omitempty"`
	Sort           string        `json:"sort"`
	Plugin         persesPlugin  `json:"plugin"`
}

type persesVarName struct {
	Name   string `json:"name"`
	Hidden bool   `json:"hidden"`
}

type persesPanel struct {
	Kind string          `json:"kind"`
	Spec persesPanelSpec `json:"spec"`
}

type persesPanelSpec struct {
	Display persesDisplay `json:"display"`
	Plugin  persesPlugin  `json:"plugin"`
	Queries []persesQuery `json:"queries"`
}

type persesQuery struct {
	Kind string `json:"kind"`
	Spec struct {
		Plugin persesPlugin `json:"plugin"`
	} `json:"spec"`
}

// persesPromQuery is a PrometheusTimeSeriesQuery's spec.
type persesPromQuery struct {
	Datasource       persesDatasourceRef `json:"datasource"`
	Query            string              `json:"query"`
	SeriesNameFormat string              `json:"seriesNameFormat,omitempty"`
}

type persesDatasourceRef struct {
	Kind string `json:"kind"`
}

type persesLayout struct {
	Kind string `json:"kind"`
	Spec struct {
		Display struct {
			Title    string `json:"title"`
			Collapse struct {
				Open bool `json:"open"`
			} `json:"collapse"`
		} `json:"display"`
		Items []persesItem `json:"items"`
	} `json:"spec"`
}

type persesItem struct {
	X       int               `json:"x"`
	Y       int               `json:"y"`
	Width   int               `json:"width"`
	Height  int               `json:"height"`
	Content map[string]string `json:"content"`
}

// The Perses formats of the model's units (github.com/perses/shared,
// cue/common/format.cue).
var persesUnits = map[string]string{UnitCount: "decimal", UnitSeconds: "seconds", UnitRatio: "percent-decimal"}

// persesColors are the model's colours as the hex codes Grafana draws for
// those names: Perses' value mappings take only hex codes.
var persesColors = map[string]string{
	Green: "#73BF69", Yellow: "#FADE2A", Orange: "#FF9830", Red: "#F2495C", Blue: "#5794F2", Purple: "#B877D9",
}

type persesFormat struct {
	Unit          string `json:"unit"`
	DecimalPlaces *int   `json:"decimalPlaces,omitempty"`
}

type persesThresholds struct {
	DefaultColor string       `json:"defaultColor,omitempty"`
	Steps        []persesStep `json:"steps"`
}

type persesStep struct {
	Value float64 `json:"value"`
	Color string  `json:"color"`
}

// PersesPanelID is the key of a panel in the spec's panels: its row and
// its place in the row, as the layouts reference it.
func PersesPanelID(row, panel int) string { return strconv.Itoa(row) + "_" + strconv.Itoa(panel) }

// RenderPerses returns the dashboard as a Perses dashboard spec.
func RenderPerses(d Dashboard) (PersesSpec, error) {
	out := PersesSpec{
		Display:  persesDisplay{Name: d.Title, Description: d.Description},
		Panels:   map[string]persesPanel{},
		Duration: "6h", RefreshInterval: "1m",
	}
	for _, v := range d.Variables() {
		out.Variables = append(out.Variables, persesListVar(v))
	}
	for r, row := range d.Rows {
		var l persesLayout
		l.Kind = "Grid"
		l.Spec.Display.Title = row.Title
		l.Spec.Display.Collapse.Open = true
		pos, _ := layout(row.Panels)
		for i, p := range row.Panels {
			id := PersesPanelID(r, i)
			pp, err := persesPanelOf(p)
			if err != nil {
				return PersesSpec{}, fmt.Errorf("%s: %s: %w", d.UID, p.Title, err)
			}
			out.Panels[id] = pp
			l.Spec.Items = append(l.Spec.Items, persesItem{
				X: pos[i].X, Y: pos[i].Y, Width: pos[i].W, Height: pos[i].H,
				Content: map[string]string{"$ref": "#/spec/panels/" + id},
			})
		}
		out.Layouts = append(out.Layouts, l)
	}
	return out, nil
}

// persesListVar lists a label's values with the Prometheus plugin's
// label values variable. A single-value variable with no options takes
// the empty value (resolveDefaultValue in @perses-dev/plugin-system), so
// on a cluster without the cluster label cluster=~"" matches its series,
// as in the console.
func persesListVar(v Variable) persesVariable {
	lv := persesListVariable{
		Name: v.Name, Display: persesVarName{Name: v.Label}, Sort: "alphabetical-asc",
		Plugin: persesPlugin{Kind: "PrometheusLabelValuesVariable", Spec: map[string]any{
			"labelName": v.Name, "matchers": []string{v.Selector},
		}},
	}
	if v.Multi {
		lv.AllowAllValue, lv.AllowMultiple, lv.CustomAllValue = true, true, ".*"
		lv.DefaultValue = []string{"$__all"}
	}
	return persesVariable{Kind: "ListVariable", Spec: lv}
}

func persesPanelOf(p Panel) (persesPanel, error) {
	if err := persesMapped(p); err != nil {
		return persesPanel{}, err
	}
	spec := persesPanelSpec{Display: persesDisplay{Name: p.Title, Description: p.Description}}
	for _, t := range p.Targets {
		var q persesQuery
		q.Kind = "TimeSeriesQuery"
		q.Spec.Plugin = persesPlugin{Kind: "PrometheusTimeSeriesQuery", Spec: persesPromQuery{
			Datasource: persesDatasourceRef{Kind: "PrometheusDatasource"}, Query: t.Expr, SeriesNameFormat: t.Legend,
		}}
		spec.Queries = append(spec.Queries, q)
	}
	plugin, err := persesPluginOf(p)
	spec.Plugin = plugin
	return persesPanel{Kind: "Panel", Spec: spec}, err
}

func persesPluginOf(p Panel) (persesPlugin, error) {
	switch p.Kind {
	case Graph:
		return persesPlugin{Kind: "TimeSeriesChart", Spec: timeSeriesChart(p)}, nil
	case SingleStat:
		if len(p.Targets) != 1 {
			return persesPlugin{}, fmt.Errorf("a singlestat shows one query, has %d", len(p.Targets))
		}
		spec := map[string]any{"calculation": "last-number", "format": persesFormatOf(p.Unit, p.Decimals)}
		if t := persesThresholdsOf(p.Thresholds); t != nil {
			spec["thresholds"] = t
		}
		return persesPlugin{Kind: "StatChart", Spec: spec}, nil
	case Gauge:
		return gaugeChart(p)
	case Table:
		return tableOf(p)
	case StateTimeline:
		return statusHistory(p)
	}
	return persesPlugin{}, fmt.Errorf("panel type %q has no Perses twin", p.Kind)
}

// timeSeriesChart is the graph: lines filled at 10% (Grafana's fill 1),
// stacked or not, a table legend with the last and highest values, the
// thresholds as lines.
func timeSeriesChart(p Panel) map[string]any {
	yAxis := map[string]any{"format": persesFormatOf(p.Unit, p.Decimals)}
	if p.Min != nil {
		yAxis["min"] = *p.Min
	}
	if p.Max != nil {
		yAxis["max"] = *p.Max
	}
	visual := map[string]any{"display": "line", "lineWidth": 1, "areaOpacity": 0.1, "connectNulls": false}
	if p.Stack {
		visual["stack"] = "all"
	}
	spec := map[string]any{
		"legend": map[string]any{"position": "bottom", "mode": "table", "values": []string{"last-number", "max"}},
		"yAxis":  yAxis, "visual": visual,
	}
	if t := persesThresholdsOf(p.Thresholds); t != nil {
		t.DefaultColor = "" // lines at the steps, as Grafana's graph draws them
		spec["thresholds"] = t
	}
	return spec
}

// gaugeChart: Perses' gauge starts at 0 and ends at 1 for a ratio (else
// at max).
func gaugeChart(p Panel) (persesPlugin, error) {
	if p.Min != nil && *p.Min != 0 {
		return persesPlugin{}, errors.New("a Perses gauge starts at 0")
	}
	spec := map[string]any{"calculation": "last-number", "format": persesFormatOf(p.Unit, p.Decimals)}
	if t := persesThresholdsOf(p.Thresholds); t != nil {
		spec["thresholds"] = t
	}
	switch {
	case p.Unit == UnitRatio && p.Max != nil && *p.Max != 1:
		return persesPlugin{}, errors.New("a Perses gauge of a ratio ends at 1")
	case p.Unit != UnitRatio && p.Max != nil:
		spec["max"] = *p.Max
	}
	return persesPlugin{Kind: "GaugeChart", Spec: spec}, nil
}

// tableOf is the table: instant queries (the Table plugin's query mode
// without embedded panels), several merged into one row per label set
// (MergeSeries, as Grafana's table transform), only the model's columns
// shown, in order. Perses names the value of query i "value #i+1", or
// "value" when there is one query.
func tableOf(p Panel) (persesPlugin, error) {
	var cols []map[string]any
	for _, c := range p.Columns {
		col := map[string]any{"name": c.Label, "header": c.Title}
		if c.Label == "" {
			if c.Target >= len(p.Targets) {
				return persesPlugin{}, fmt.Errorf("column %q: no target %d", c.Title, c.Target)
			}
			col["name"] = persesValueColumn(p, c.Target)
			col["format"] = persesFormatOf(c.Unit, ptr(0))
		}
		cols = append(cols, col)
	}
	spec := map[string]any{"density": "compact", "defaultColumnHidden": true, "columnSettings": cols}
	if len(p.Targets) > 1 {
		spec["transforms"] = []map[string]any{{"kind": "MergeSeries", "spec": map[string]any{}}}
	}
	return persesPlugin{Kind: "Table", Spec: spec}, nil
}

func persesValueColumn(p Panel, i int) string {
	if len(p.Targets) == 1 {
		return "value"
	}
	return "value #" + strconv.Itoa(i+1)
}

// statusHistory is the state timeline: each value named and coloured.
func statusHistory(p Panel) (persesPlugin, error) {
	if len(p.States) == 0 {
		return persesPlugin{}, errors.New("a state timeline needs its States")
	}
	var mappings []map[string]any
	for _, s := range p.States {
		mappings = append(mappings, map[string]any{"kind": "Value", "spec": map[string]any{
			"value": strconv.Itoa(s.Value), "result": map[string]any{"value": s.Text, "color": persesColors[s.Color]},
		}})
	}
	return persesPlugin{Kind: "StatusHistoryChart", Spec: map[string]any{
		"legend": map[string]any{"position": "bottom"}, "mappings": mappings,
	}}, nil
}

// persesMapped checks that Perses has a twin of every unit and colour of p.
func persesMapped(p Panel) error {
	units := []string{p.Unit}
	for _, c := range p.Columns {
		units = append(units, c.Unit)
	}
	for _, u := range units {
		if _, ok := persesUnits[u]; u != "" && !ok {
			return fmt.Errorf("unit %q has no Perses format in persesUnits", u)
		}
	}
	var colors []string
	if t := p.Thresholds; t != nil {
		colors = append(colors, t.Base)
		for _, s := range t.Steps {
			colors = append(colors, s.Color)
		}
	}
	for _, s := range p.States {
		colors = append(colors, s.Color)
	}
	for _, c := range colors {
		if _, ok := persesColors[c]; !ok {
			return fmt.Errorf("colour %q has no hex code in persesColors", c)
		}
	}
	return nil
}

func persesFormatOf(unit string, decimals *int) persesFormat {
	return persesFormat{Unit: persesUnits[unit], DecimalPlaces: decimals}
}

func persesThresholdsOf(t *Thresholds) *persesThresholds {
	if t == nil {
		return nil
	}
	out := &persesThresholds{DefaultColor: persesColors[t.Base]}
	for _, s := range t.Steps {
		out.Steps = append(out.Steps, persesStep{Value: s.Value, Color: persesColors[s.Color]})
	}
	return out
}
