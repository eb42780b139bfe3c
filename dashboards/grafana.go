package dashboards

// What only Grafana draws, for GrafanaOnly dashboards: state timelines
// (Grafana's current panel schema) and the OCL alerts as annotations.

import (
	"errors"
	"strconv"
)

type jsonAnnots struct {
	List []jsonAnnotation `json:"list"`
}

// jsonAnnotation is a Prometheus annotation query: an event per series
// while it has samples.
type jsonAnnotation struct {
	Name        string          `json:"name"`
	Datasource  *jsonDatasource `json:"datasource"`
	Enable      bool            `json:"enable"`
	IconColor   string          `json:"iconColor"`
	Expr        string          `json:"expr"`
	Step        string          `json:"step"`
	TitleFormat string          `json:"titleFormat"`
	TextFormat  string          `json:"textFormat"`
	TagKeys     string          `json:"tagKeys"`
}

type jsonFieldConfig struct {
	Defaults  jsonFieldDefaults `json:"defaults"`
	Overrides []struct{}        `json:"overrides"`
}

type jsonFieldDefaults struct {
	Color    map[string]string `json:"color"`
	Mappings []jsonMapping     `json:"mappings"`
}

type jsonMapping struct {
	Type    string                     `json:"type"`
	Options map[string]jsonMappedValue `json:"options"`
}

type jsonMappedValue struct {
	Text  string `json:"text"`
	Color string `json:"color"`
	Index int    `json:"index"`
}

// alertAnnotation marks every OCL alert of the chosen cluster and pools
// while it fires.
var alertAnnotation = jsonAnnotation{
	Name: "OCL alerts", Datasource: &datasource, Enable: true, IconColor: Red,
	Expr: `max by (alertname, pool, machineosbuild, node, class) (ALERTS{alertstate="firing", alertname=~"OCL.+", ` +
		clusterMatcher + `, pool=~"$pool|"})`,
	Step: "60s", TitleFormat: "{{alertname}}", TextFormat: "{{pool}} {{machineosbuild}}{{node}} {{class}}",
	TagKeys: "alertname,pool",
}

// stateTimeline names each value and colours it; Grafana merges equal
// neighbouring values into one bar.
func stateTimeline(jp *jsonPanel, p Panel) error {
	if len(p.States) == 0 {
		return errors.New("a state timeline needs its States")
	}
	m := jsonMapping{Type: "value", Options: map[string]jsonMappedValue{}}
	for i, s := range p.States {
		m.Options[strconv.Itoa(s.Value)] = jsonMappedValue{Text: s.Text, Color: s.Color, Index: i}
	}
	jp.FieldConfig = &jsonFieldConfig{
		Defaults:  jsonFieldDefaults{Color: map[string]string{"mode": "thresholds"}, Mappings: []jsonMapping{m}},
		Overrides: []struct{}{},
	}
	return nil
}
