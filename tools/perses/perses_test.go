package perses

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	modelV1 "github.com/perses/perses/pkg/model/api/v1"
	"github.com/perses/perses/pkg/model/api/v1/datasource"
	"github.com/perses/perses/pkg/model/api/v1/utils"
	"sigs.k8s.io/yaml"
)

// overlay is the Perses overlay of the bundle (make bundle writes its
// generated/ directory).
const overlay = "../../deploy/overlays/perses"

// object is a perses.dev object as the Perses operator reads it: the
// Perses resource is spec.config, its project the namespace.
type object struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Config json.RawMessage `json:"config"`
		// Client is the operator's, for the secret it writes the proxy
		// (a PersesDatasource's TLS to the data source).
		Client json.RawMessage `json:"client,omitempty"`
	} `json:"spec"`
}

func read(t *testing.T, path string) object {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var o object
	if err := yaml.UnmarshalStrict(b, &o); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if o.APIVersion != "perses.dev/v1alpha2" || len(o.Spec.Config) == 0 {
		t.Fatalf("%s: want a perses.dev/v1alpha2 object with spec.config, have %s %s", path, o.APIVersion, o.Kind)
	}
	return o
}

// entity is the object as the Perses resource the operator sends the
// Perses API (kind, name, project and spec), in JSON.
func entity(t *testing.T, kind string, o object) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"kind":     kind,
		"metadata": map[string]string{"name": o.Metadata.Name, "project": o.Metadata.Namespace},
		"spec":     o.Spec.Config,
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sameJSON fails when Perses' model, marshalled back, is not the input:
// a field Perses does not know (or misreads) would be dropped silently.
func sameJSON(t *testing.T, where string, in json.RawMessage, model any) {
	t.Helper()
	out, err := json.Marshal(model)
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if err := json.Unmarshal(in, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("%s: Perses reads it back as something else\nwritten: %s\nread:    %s", where, in, out)
	}
}

// TestPersesReadsTheDashboards unmarshals each PersesDashboard's
// dashboard as Perses does (percli lint, the API's dashboard endpoint:
// modelV1.Dashboard, which checks the kind, the panel keys, the unicity of
// the variables and every layout reference), orders its variables as the
// UI does (utils.BuildVariableOrder: each one's dependencies defined and
// acyclic), and requires that nothing was dropped on the way.
func TestPersesReadsTheDashboards(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(overlay, "generated", "dashboard-*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no PersesDashboard in %s/generated; run make bundle", overlay)
	}
	for _, path := range paths {
		o := read(t, path)
		if o.Kind != "PersesDashboard" {
			t.Fatalf("%s: kind %s", path, o.Kind)
		}
		var d modelV1.Dashboard
		if err := json.Unmarshal(entity(t, "Dashboard", o), &d); err != nil {
			t.Errorf("%s: Perses refuses the dashboard: %v", path, err)
			continue
		}
		sameJSON(t, path, o.Spec.Config, d.Spec)
		if _, err := utils.BuildVariableOrder(d.Spec.Variables, nil, nil); err != nil {
			t.Errorf("%s: variables: %v", path, err)
		}
		for id, p := range d.Spec.Panels {
			if len(p.Spec.Queries) == 0 {
				t.Errorf("%s: panel %s has no query", path, id)
			}
			for _, q := range p.Spec.Queries {
				if q.Spec.Plugin.Kind != "PrometheusTimeSeriesQuery" {
					t.Errorf("%s: panel %s: query plugin %s", path, id, q.Spec.Plugin.Kind)
				}
			}
		}
	}
}

// TestPersesReadsTheDatasource: the overlay's PersesDatasource as Perses
// reads it, its HTTP proxy configuration included (datasource.ValidateAndExtract,
// what the API validates before it proxies a query).
func TestPersesReadsTheDatasource(t *testing.T) {
	path := filepath.Join(overlay, "datasource.yaml")
	o := read(t, path)
	var d modelV1.Datasource
	if err := json.Unmarshal(entity(t, "Datasource", o), &d); err != nil {
		t.Fatalf("%s: Perses refuses the datasource: %v", path, err)
	}
	sameJSON(t, path, o.Spec.Config, d.Spec)
	if !d.Spec.Default {
		t.Errorf("%s: the dashboards name no data source: this one must be the default", path)
	}
	cfg, kind, err := datasource.ValidateAndExtract(d.Spec.Plugin.Spec)
	if err != nil || kind != "httpproxy" || cfg == nil { // ValidateAndExtract lower-cases the kind
		t.Errorf("%s: proxy %s %v: %v", path, kind, cfg, err)
	}
}
