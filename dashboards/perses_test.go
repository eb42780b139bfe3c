package dashboards

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The Perses spec as the test reads it back from its JSON.
type (
	pspec struct {
		Display   struct{ Name, Description string } `json:"display"`
		Variables []struct {
			Kind string `json:"kind"`
			Spec struct {
				Name           string `json:"name"`
				AllowMultiple  bool   `json:"allowMultiple"`
				AllowAllValue  bool   `json:"allowAllValue"`
				CustomAllValue string `json:"customAllValue"`
				Plugin         struct {
					Kind string `json:"kind"`
					Spec struct {
						LabelName string   `json:"labelName"`
						Matchers  []string `json:"matchers"`
					} `json:"spec"`
				} `json:"plugin"`
			} `json:"spec"`
		} `json:"variables"`
		Panels  map[string]ppanel `json:"panels"`
		Layouts []struct {
			Spec struct {
				Display struct{ Title string } `json:"display"`
				Items   []struct {
					X, Y, Width, Height int
					Content             map[string]string `json:"content"`
				} `json:"items"`
			} `json:"spec"`
		} `json:"layouts"`
	}
	ppanel struct {
		Spec struct {
			Display struct{ Name, Description string } `json:"display"`
			Plugin  struct {
				Kind string         `json:"kind"`
				Spec map[string]any `json:"spec"`
			} `json:"plugin"`
			Queries []struct {
				Spec struct {
					Plugin struct {
						Kind string `json:"kind"`
						Spec struct {
							Query            string `json:"query"`
							SeriesNameFormat string `json:"seriesNameFormat"`
						} `json:"spec"`
					} `json:"plugin"`
				} `json:"spec"`
			} `json:"queries"`
		} `json:"spec"`
	}
)

// persesKinds are the Perses twins of the Grafana panel types.
var persesKinds = map[string]string{
	string(Graph): "TimeSeriesChart", string(SingleStat): "StatChart", string(Gauge): "GaugeChart",
	string(Table): "Table", string(StateTimeline): "StatusHistoryChart",
}

// TestPersesIsTheGrafanaDashboard reads every Perses spec back from its
// JSON and compares it with the Grafana JSON of the same dashboard: the
// same rows, panels in the same places, titles, descriptions, queries and
// legends, variables, units and thresholds. Only the fleet dashboards are
// left out (the Perses console view sees one cluster).
func TestPersesIsTheGrafanaDashboard(t *testing.T) {
	specs, err := Perses()
	if err != nil {
		t.Fatal(err)
	}
	grafana := boards(t)
	seen := 0
	for name, g := range grafana {
		if filepath.Dir(name) == "fleet" {
			continue
		}
		s, ok := specs[g.UID]
		if !ok {
			t.Errorf("%s: no Perses dashboard %s", name, g.UID)
			continue
		}
		seen++
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var p pspec
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		comparePerses(t, name, g, p)
	}
	if seen != len(specs) {
		t.Errorf("%d Perses dashboards, %d Grafana dashboards of one cluster", len(specs), seen)
	}
}

func comparePerses(t *testing.T, name string, g board, p pspec) {
	t.Helper()
	if p.Display.Name != g.Title {
		t.Errorf("%s: Perses title %q, Grafana %q", name, p.Display.Name, g.Title)
	}
	var gv, pv []string
	for _, v := range g.Templating.List {
		if v.Type == "query" {
			gv = append(gv, v.Name+": "+v.Query)
		}
	}
	for _, v := range p.Variables {
		s := v.Spec
		pv = append(pv, fmt.Sprintf("%s: label_values(%s, %s)", s.Name, strings.Join(s.Plugin.Spec.Matchers, ""), s.Plugin.Spec.LabelName))
		if s.AllowMultiple != (s.CustomAllValue == ".*" && s.AllowAllValue) {
			t.Errorf("%s: variable %s: a multi-value variable must have All as .*, a single one neither", name, s.Name)
		}
	}
	if !slices.Equal(gv, pv) {
		t.Errorf("%s: variables differ\ngrafana: %q\nperses:  %q", name, gv, pv)
	}
	row := -1
	var y int
	for _, gp := range g.Panels {
		if gp.Type == "row" {
			row++
			if row >= len(p.Layouts) || p.Layouts[row].Spec.Display.Title != gp.Title {
				t.Errorf("%s: row %d %q has no Perses grid of that title", name, row, gp.Title)
				return
			}
			y = gp.GridPos.Y + 1
			continue
		}
		id := PersesPanelID(row, gp.ID%100-1)
		pp, ok := p.Panels[id]
		if !ok {
			t.Errorf("%s: panel %q: no Perses panel %s", name, gp.Title, id)
			continue
		}
		comparePanel(t, fmt.Sprintf("%s: %q", name, gp.Title), gp, pp)
		item := p.Layouts[row].Spec.Items[gp.ID%100-1]
		if item.Content["$ref"] != "#/spec/panels/"+id || item.X != gp.GridPos.X || item.Y != gp.GridPos.Y-y ||
			item.Width != gp.GridPos.W || item.Height != gp.GridPos.H {
			t.Errorf("%s: %q: Perses places it at %+v, Grafana at %+v in its row", name, gp.Title, item, gp.GridPos)
		}
	}
}

func comparePanel(t *testing.T, where string, g jpanel, p ppanel) {
	t.Helper()
	if kind := persesKinds[g.Type]; p.Spec.Plugin.Kind != kind {
		t.Errorf("%s: Perses %s, want %s for a %s", where, p.Spec.Plugin.Kind, kind, g.Type)
	}
	if p.Spec.Display.Name != g.Title || p.Spec.Display.Description != g.Description {
		t.Errorf("%s: Perses title or description differ", where)
	}
	if len(p.Spec.Queries) != len(g.Targets) {
		t.Fatalf("%s: %d Perses queries, %d Grafana targets", where, len(p.Spec.Queries), len(g.Targets))
	}
	for i, q := range p.Spec.Queries {
		pq := q.Spec.Plugin.Spec
		if q.Spec.Plugin.Kind != "PrometheusTimeSeriesQuery" || pq.Query != g.Targets[i].Expr || pq.SeriesNameFormat != g.Targets[i].Legend {
			t.Errorf("%s: query %d: Perses %q %q, Grafana %q %q", where, i, pq.Query, pq.SeriesNameFormat, g.Targets[i].Expr, g.Targets[i].Legend)
		}
	}
	if got, want := persesUnitsOf(p), grafanaUnitsOf(g); !slices.Equal(got, want) {
		t.Errorf("%s: Perses units %q, Grafana %q", where, got, want)
	}
	if got, want := persesThresholdSteps(p), g.thresholdSteps(); got != want {
		t.Errorf("%s: Perses thresholds %s, Grafana %s", where, got, want)
	}
}

// persesUnitsOf are the panel's formats, back in the model's units.
func persesUnitsOf(p ppanel) []string {
	back := map[string]string{}
	for model, perses := range persesUnits {
		back[perses] = model
	}
	var out []string
	spec := p.Spec.Plugin.Spec
	if y, ok := spec["yAxis"].(map[string]any); ok {
		spec = y
	}
	if f, ok := spec["format"].(map[string]any); ok {
		out = append(out, back[f["unit"].(string)])
	}
	cols, _ := spec["columnSettings"].([]any)
	for _, c := range cols {
		if f, ok := c.(map[string]any)["format"].(map[string]any); ok {
			out = append(out, back[f["unit"].(string)])
		}
	}
	return out
}

func grafanaUnitsOf(g jpanel) []string {
	switch g.Type {
	case string(Graph):
		return []string{g.Yaxes[0].Format}
	case string(SingleStat), string(Gauge):
		return []string{g.Format}
	}
	var out []string
	for _, s := range g.Styles {
		if s.Type == "number" {
			out = append(out, s.Unit)
		}
	}
	return out
}

// persesThresholdSteps writes the thresholds as "base; value colour, ...",
// colours by name, after a state timeline's value mappings.
func persesThresholdSteps(p ppanel) string {
	name := map[string]string{}
	for n, hex := range persesColors {
		name[hex] = n
	}
	var out strings.Builder
	mappings, _ := p.Spec.Plugin.Spec["mappings"].([]any)
	for _, m := range mappings {
		spec := m.(map[string]any)["spec"].(map[string]any)
		result := spec["result"].(map[string]any)
		fmt.Fprintf(&out, "; %s %s %s", spec["value"], result["value"], name[result["color"].(string)])
	}
	th, ok := p.Spec.Plugin.Spec["thresholds"].(map[string]any)
	if !ok {
		return out.String()
	}
	if c, ok := th["defaultColor"].(string); ok {
		out.WriteString(name[c])
	}
	steps, _ := th["steps"].([]any)
	for _, s := range steps {
		m := s.(map[string]any)
		fmt.Fprintf(&out, "; %v %s", m["value"], name[m["color"].(string)])
	}
	return out.String()
}

// thresholdSteps writes a Grafana panel's thresholds as
// persesThresholdSteps does, and a state timeline's states.
func (g jpanel) thresholdSteps() string {
	var out strings.Builder
	switch g.Type {
	case string(SingleStat):
		var levels string
		if len(g.Thresholds) == 0 || json.Unmarshal(g.Thresholds, &levels) != nil {
			return ""
		}
		out.WriteString(g.Colors[0])
		for i, l := range strings.Split(levels, ",") {
			fmt.Fprintf(&out, "; %s %s", l, g.Colors[i+1])
		}
	case string(Gauge):
		for i, s := range g.Options.FieldOptions.Thresholds {
			if i == 0 {
				out.WriteString(s.Color)
				continue
			}
			fmt.Fprintf(&out, "; %v %s", *s.Value, s.Color)
		}
	case string(Graph):
		var steps []jsonGraphStep
		_ = json.Unmarshal(g.Thresholds, &steps)
		for _, s := range steps {
			fmt.Fprintf(&out, "; %v %s", s.Value, s.LineColor)
		}
	case string(StateTimeline):
		m := g.FieldConfig.Defaults.Mappings[0].Options
		for _, k := range slices.Sorted(maps.Keys(m)) {
			fmt.Fprintf(&out, "; %s %s %s", k, m[k].Text, m[k].Color)
		}
	}
	return out.String()
}
