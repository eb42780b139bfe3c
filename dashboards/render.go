package dashboards

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// schemaVersion 22 is past the rows-to-grid change (16), so Grafana reads
// the panels and their gridPos as written, and before 24, so Grafana
// treats a table with styles as the old table and migrates its styles
// (units, aliases, hidden columns) to the current table panel.
const schemaVersion = 22

// datasource is the panel and variable datasource: the datasource variable.
// The console ignores it (it only looks for a custom datasource by name).
var datasource = jsonDatasource{Type: "prometheus", UID: "${datasource}"}

type jsonDatasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type jsonDashboard struct {
	UID           string       `json:"uid"`
	Title         string       `json:"title"`
	Description   string       `json:"description"`
	Tags          []string     `json:"tags"`
	Editable      bool         `json:"editable"`
	GraphTooltip  int          `json:"graphTooltip"`
	Refresh       string       `json:"refresh"`
	SchemaVersion int          `json:"schemaVersion"`
	Time          jsonTime     `json:"time"`
	Timezone      string       `json:"timezone"`
	Templating    jsonTemplate `json:"templating"`
	Annotations   *jsonAnnots  `json:"annotations,omitempty"`
	Panels        []jsonPanel  `json:"panels"`
}

type jsonTime struct {
	From string `json:"from"`
	To   string `json:"to"`
}

type jsonTemplate struct {
	List []jsonVariable `json:"list"`
}

type jsonVariable struct {
	Name       string          `json:"name"`
	Label      string          `json:"label"`
	Type       string          `json:"type"`
	Datasource *jsonDatasource `json:"datasource,omitempty"`
	Query      string          `json:"query"`
	Definition string          `json:"definition,omitempty"`
	Regex      string          `json:"regex"`
	Refresh    int             `json:"refresh"`
	// Hide 0 shows the variable; the console hides any other value and
	// also hides a query variable that has no options.
	Hide       int         `json:"hide"`
	IncludeAll bool        `json:"includeAll"`
	AllValue   string      `json:"allValue,omitempty"`
	Multi      bool        `json:"multi"`
	Sort       int         `json:"sort"`
	Current    jsonCurrent `json:"current"`
	Options    []struct{}  `json:"options"`
}

type jsonCurrent struct {
	Selected bool     `json:"selected,omitempty"`
	Text     []string `json:"text,omitempty"`
	Value    []string `json:"value,omitempty"`
}

type jsonGridPos struct {
	H int `json:"h"`
	W int `json:"w"`
	X int `json:"x"`
	Y int `json:"y"`
}

// jsonPanel holds the fields of every legacy panel type; each type sets its
// own and leaves the rest out.
type jsonPanel struct {
	ID          int             `json:"id"`
	Type        Kind            `json:"type"`
	Title       string          `json:"title"`
	Description string          `json:"description,omitempty"`
	Datasource  *jsonDatasource `json:"datasource,omitempty"`
	GridPos     jsonGridPos     `json:"gridPos"`
	// Span is the console's width (twelfths).
	Span int `json:"span,omitempty"`

	// row: open, so its panels follow it at the top level (Grafana nests
	// panels only in a collapsed row); the console shows the title only
	// with showTitle and folds with collapse.
	Collapsed *bool `json:"collapsed,omitempty"`
	Collapse  *bool `json:"collapse,omitempty"`
	ShowTitle bool  `json:"showTitle,omitempty"`

	Targets []jsonTarget `json:"targets,omitempty"`

	// graph
	Yaxes         []jsonAxis   `json:"yaxes,omitempty"`
	Xaxis         *jsonXAxis   `json:"xaxis,omitempty"`
	Legend        *jsonLegend  `json:"legend,omitempty"`
	Lines         bool         `json:"lines,omitempty"`
	Linewidth     int          `json:"linewidth,omitempty"`
	Fill          *int         `json:"fill,omitempty"`
	Stack         *bool        `json:"stack,omitempty"`
	NullPointMode string       `json:"nullPointMode,omitempty"`
	Tooltip       *jsonTooltip `json:"tooltip,omitempty"`

	// singlestat and gauge: format and decimals are what the console and
	// Grafana's singlestat migration read; thresholds/colors are the
	// singlestat's (Grafana), options.fieldOptions the gauge's (Grafana)
	// and both's colours in the console.
	Format     string          `json:"format,omitempty"`
	Decimals   *int            `json:"decimals,omitempty"`
	ValueName  string          `json:"valueName,omitempty"`
	ColorValue bool            `json:"colorValue,omitempty"`
	Colors     []string        `json:"colors,omitempty"`
	Thresholds json.RawMessage `json:"thresholds,omitempty"`
	Options    *jsonOptions    `json:"options,omitempty"`

	// table
	Styles    []jsonStyle `json:"styles,omitempty"`
	Transform string      `json:"transform,omitempty"`
	Columns   *[]struct{} `json:"columns,omitempty"`

	// state timeline (Grafana's current schema)
	FieldConfig *jsonFieldConfig `json:"fieldConfig,omitempty"`
}

type jsonTarget struct {
	Expr         string `json:"expr"`
	Format       string `json:"format"`
	Instant      bool   `json:"instant"`
	LegendFormat string `json:"legendFormat"`
	RefID        string `json:"refId"`
}

type jsonAxis struct {
	Format  string   `json:"format"`
	LogBase int      `json:"logBase"`
	Min     *float64 `json:"min"`
	Max     *float64 `json:"max"`
	Show    bool     `json:"show"`
}

type jsonXAxis struct {
	Mode string `json:"mode"`
	Show bool   `json:"show"`
}

type jsonLegend struct {
	Show         bool `json:"show"`
	AlignAsTable bool `json:"alignAsTable"`
	Current      bool `json:"current"`
	Max          bool `json:"max"`
	Values       bool `json:"values"`
}

type jsonTooltip struct {
	Shared    bool   `json:"shared"`
	Sort      int    `json:"sort"`
	ValueType string `json:"value_type"`
}

type jsonGraphStep struct {
	Value     float64 `json:"value"`
	Op        string  `json:"op"`
	ColorMode string  `json:"colorMode"`
	LineColor string  `json:"lineColor"`
	Fill      bool    `json:"fill"`
	Line      bool    `json:"line"`
}

type jsonStep struct {
	Value *float64 `json:"value"`
	Color string   `json:"color"`
}

type jsonOptions struct {
	FieldOptions jsonFieldOptions `json:"fieldOptions"`
}

type jsonFieldOptions struct {
	Calcs      []string       `json:"calcs"`
	Defaults   *jsonFieldUnit `json:"defaults,omitempty"`
	Thresholds []jsonStep     `json:"thresholds,omitempty"`
}

type jsonFieldUnit struct {
	Unit     string   `json:"unit"`
	Decimals *int     `json:"decimals,omitempty"`
	Min      *float64 `json:"min,omitempty"`
	Max      *float64 `json:"max,omitempty"`
}

type jsonStyle struct {
	Alias    string `json:"alias"`
	Pattern  string `json:"pattern"`
	Type     string `json:"type"`
	Unit     string `json:"unit,omitempty"`
	Decimals *int   `json:"decimals,omitempty"`
}

// Render returns the dashboard's JSON, byte for byte the same on every run.
func Render(d Dashboard) ([]byte, error) {
	out := jsonDashboard{
		UID:           d.UID,
		Title:         d.Title,
		Description:   d.Description,
		Tags:          []string{"ocl", "openshift", "machine-config"},
		Editable:      true,
		GraphTooltip:  1,
		Refresh:       "1m",
		SchemaVersion: schemaVersion,
		Time:          jsonTime{From: "now-6h", To: "now"},
		Timezone:      "utc",
		Templating:    jsonTemplate{List: variables(d)},
	}
	if d.GrafanaOnly {
		out.Annotations = &jsonAnnots{List: []jsonAnnotation{alertAnnotation}}
	}
	y := 0
	for r, row := range d.Rows {
		// Ids are row*100+n: adding a panel renumbers only the rest of
		// its row, so links to other panels survive.
		rowID := (r + 1) * 100
		out.Panels = append(out.Panels, jsonPanel{
			ID: rowID, Type: "row", Title: row.Title, ShowTitle: true,
			Collapsed: ptr(false), Collapse: ptr(false),
			GridPos: jsonGridPos{H: 1, W: 24, X: 0, Y: y},
		})
		y++
		pos, height := layout(row.Panels)
		for i, p := range row.Panels {
			if p.Kind == StateTimeline && !d.GrafanaOnly {
				return nil, fmt.Errorf("%s: %s: the console cannot draw a state timeline; only a GrafanaOnly dashboard may have one", d.UID, p.Title)
			}
			jp, err := panel(p, rowID+i+1)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", d.UID, p.Title, err)
			}
			jp.GridPos = pos[i]
			jp.GridPos.Y += y
			out.Panels = append(out.Panels, jp)
		}
		y += height
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // keep > and & readable in PromQL
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// variables are the datasource variable and the dashboard's Variables as
// Grafana query variables.
func variables(d Dashboard) []jsonVariable {
	out := []jsonVariable{{
		Name: "datasource", Label: "Data source", Type: "datasource",
		Query: "prometheus", Refresh: 1, Options: []struct{}{},
	}}
	for _, v := range d.Variables() {
		query := "label_values(" + v.Selector + ", " + v.Name + ")"
		if v.Multi {
			out = append(out, multiAll(v.Name, v.Label, query))
			continue
		}
		out = append(out, jsonVariable{
			Name: v.Name, Label: v.Label, Type: "query", Datasource: &datasource,
			Query: query, Definition: query, Refresh: 2, Sort: 1, Options: []struct{}{},
		})
	}
	return out
}

// layout places a row's panels left to right on Grafana's 24 columns,
// wrapping to a new line when one does not fit, from y 0; it returns their
// positions and the row's height.
func layout(panels []Panel) ([]jsonGridPos, int) {
	pos := make([]jsonGridPos, len(panels))
	x, y, lineH := 0, 0, 0
	for i, p := range panels {
		w := 2 * p.Span
		if x+w > 24 {
			x, y, lineH = 0, y+lineH, 0
		}
		pos[i] = jsonGridPos{H: p.Height, W: w, X: x, Y: y}
		x += w
		lineH = max(lineH, p.Height)
	}
	return pos, y + lineH
}

// multiAll is a query variable taking several values, All by default.
// The console turns label_values(a, b) into count(a) by (b): keep the ", "
// it splits on.
func multiAll(name, label, query string) jsonVariable {
	return jsonVariable{
		Name: name, Label: label, Type: "query", Datasource: &datasource,
		Query: query, Definition: query,
		Refresh: 2, Sort: 1, IncludeAll: true, AllValue: ".*", Multi: true,
		Current: jsonCurrent{Selected: true, Text: []string{"All"}, Value: []string{"$__all"}},
		Options: []struct{}{},
	}
}

func panel(p Panel, id int) (jsonPanel, error) {
	jp := jsonPanel{
		ID: id, Type: p.Kind, Title: p.Title, Description: p.Description,
		Datasource: &datasource, Span: p.Span,
	}
	instant := p.Kind != Graph && p.Kind != StateTimeline
	for i, t := range p.Targets {
		jt := jsonTarget{Expr: t.Expr, Format: "time_series", Instant: instant, LegendFormat: t.Legend, RefID: refID(i)}
		if p.Kind == Table {
			jt.Format = "table"
		}
		jp.Targets = append(jp.Targets, jt)
	}
	var err error
	switch p.Kind {
	case Graph:
		graph(&jp, p)
	case SingleStat:
		err = singleStat(&jp, p)
	case Gauge:
		gauge(&jp, p)
	case Table:
		err = table(&jp, p)
	case StateTimeline:
		err = stateTimeline(&jp, p)
	default:
		err = fmt.Errorf("panel type %q is not drawn by the console", p.Kind)
	}
	return jp, err
}

func refID(i int) string { return string(rune('A' + i)) }

func graph(jp *jsonPanel, p Panel) {
	jp.Yaxes = []jsonAxis{
		{Format: p.Unit, LogBase: 1, Min: p.Min, Max: p.Max, Show: true},
		{Format: UnitCount, LogBase: 1, Show: false},
	}
	jp.Xaxis = &jsonXAxis{Mode: "time", Show: true}
	jp.Legend = &jsonLegend{Show: true, AlignAsTable: true, Current: true, Max: true, Values: true}
	jp.Lines, jp.Linewidth, jp.Fill = true, 1, ptr(1)
	jp.Stack = ptr(p.Stack)
	jp.NullPointMode = "null"
	jp.Tooltip = &jsonTooltip{Shared: true, Sort: 2, ValueType: "individual"}
	jp.Decimals = p.Decimals
	if p.Thresholds != nil {
		var steps []jsonGraphStep
		for _, s := range p.Thresholds.Steps {
			steps = append(steps, jsonGraphStep{Value: s.Value, Op: "gt", ColorMode: "custom", LineColor: s.Color, Line: true})
		}
		jp.Thresholds, _ = json.Marshal(steps)
	}
}

func singleStat(jp *jsonPanel, p Panel) error {
	if len(p.Targets) != 1 {
		return fmt.Errorf("a singlestat shows one query, has %d", len(p.Targets))
	}
	jp.Format, jp.Decimals, jp.ValueName = p.Unit, p.Decimals, "current"
	if t := p.Thresholds; t != nil {
		levels := make([]string, len(t.Steps))
		jp.Colors = []string{t.Base}
		for i, s := range t.Steps {
			levels[i] = strconv.FormatFloat(s.Value, 'f', -1, 64)
			jp.Colors = append(jp.Colors, s.Color)
		}
		jp.Thresholds, _ = json.Marshal(strings.Join(levels, ","))
		jp.ColorValue = true
		jp.Options = &jsonOptions{FieldOptions: jsonFieldOptions{Calcs: []string{"lastNotNull"}, Thresholds: steps(t)}}
	}
	return nil
}

// gauge writes the Grafana 6 gauge options, which current Grafana migrates
// and the console reads (format, options.fieldOptions.thresholds).
func gauge(jp *jsonPanel, p Panel) {
	jp.Format, jp.Decimals = p.Unit, p.Decimals
	jp.Options = &jsonOptions{FieldOptions: jsonFieldOptions{
		Calcs:    []string{"lastNotNull"},
		Defaults: &jsonFieldUnit{Unit: p.Unit, Decimals: p.Decimals, Min: p.Min, Max: p.Max},
	}}
	if p.Thresholds != nil {
		jp.Options.FieldOptions.Thresholds = steps(p.Thresholds)
	}
}

func steps(t *Thresholds) []jsonStep {
	out := []jsonStep{{Color: t.Base}}
	for _, s := range t.Steps {
		out = append(out, jsonStep{Value: ptr(s.Value), Color: s.Color})
	}
	return out
}

// table writes the old Grafana table: instant queries merged by their
// labels (transform "table", as the console does), one style per column.
// Both renderers show only columns with a style; the time and any value
// without a column are hidden explicitly for Grafana.
func table(jp *jsonPanel, p Panel) error {
	jp.Transform = "table"
	jp.Columns = &[]struct{}{}
	jp.Styles = []jsonStyle{{Alias: "Time", Pattern: "Time", Type: "hidden"}}
	shown := map[int]bool{}
	for _, c := range p.Columns {
		if c.Label != "" {
			jp.Styles = append(jp.Styles, jsonStyle{Alias: c.Title, Pattern: c.Label, Type: "string"})
			continue
		}
		if c.Target >= len(p.Targets) {
			return fmt.Errorf("column %q: no target %d", c.Title, c.Target)
		}
		shown[c.Target] = true
		jp.Styles = append(jp.Styles, jsonStyle{Alias: c.Title, Pattern: valueColumn(p, c.Target), Type: "number", Unit: c.Unit, Decimals: ptr(0)})
	}
	for i := range p.Targets {
		if !shown[i] {
			jp.Styles = append(jp.Styles, jsonStyle{Alias: "Value", Pattern: valueColumn(p, i), Type: "hidden"})
		}
	}
	return nil
}

// valueColumn is the name Grafana gives a target's value in a table:
// "Value" for a single query, "Value #<refId>" for several. The console
// reads "Value" as "Value #A".
func valueColumn(p Panel, i int) string {
	if len(p.Targets) == 1 {
		return "Value"
	}
	return "Value #" + refID(i)
}
