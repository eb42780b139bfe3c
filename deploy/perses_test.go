package deploy_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/ocl-exporter/ocl_exporter/dashboards"
)

// objects is `kustomize build dir` as generic objects by kind/namespace/name.
func objects(t *testing.T, dir string) map[string]map[string]any {
	t.Helper()
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	out := map[string]map[string]any{}
	for _, r := range m.Resources() {
		y, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		var o map[string]any
		if err := sigsyaml.Unmarshal(y, &o); err != nil {
			t.Fatal(err)
		}
		out[r.GetKind()+"/"+r.GetNamespace()+"/"+r.GetName()] = o
	}
	return out
}

// TestPersesOverlay: the Perses overlay is the bundle unchanged plus the
// PersesDatasource and one PersesDashboard per dashboard of
// dashboards.Perses, in the exporter's namespace, and leaves the
// cluster-wide UIPlugin to the file beside it.
func TestPersesOverlay(t *testing.T) {
	base := objects(t, ".")
	overlay := objects(t, filepath.Join("overlays", "perses"))
	for key, o := range base {
		if !reflect.DeepEqual(overlay[key], o) {
			t.Errorf("%s: the overlay changes or drops it", key)
		}
		delete(overlay, key)
	}
	specs, err := dashboards.Perses()
	if err != nil {
		t.Fatal(err)
	}
	for uid, spec := range specs {
		key := "PersesDashboard/" + namespace + "/" + uid
		d, ok := overlay[key]
		if !ok {
			t.Errorf("%s is missing; run `make bundle`", key)
			continue
		}
		delete(overlay, key)
		if d["apiVersion"] != "perses.dev/v1alpha2" {
			t.Errorf("%s: apiVersion %v, want perses.dev/v1alpha2", key, d["apiVersion"])
		}
		var want map[string]any
		b, _ := json.Marshal(spec)
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if got := d["spec"].(map[string]any)["config"]; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: spec.config is not what dashboards/ renders; run `make bundle`", key)
		}
	}
	ds := overlay["PersesDatasource/"+namespace+"/ocl-exporter-thanos-querier"]
	delete(overlay, "PersesDatasource/"+namespace+"/ocl-exporter-thanos-querier")
	checkDatasource(t, ds)
	for key := range overlay {
		t.Errorf("%s: unexpected in the overlay", key)
	}
	checkUIPlugin(t)
}

// checkDatasource: the dashboards' queries name no data source, so the
// namespace's default PrometheusDatasource must be the platform's Thanos
// Querier, its proxy secret the one the Perses operator creates,
// <name>-secret (controllers/datasources/datasource_controller.go).
func checkDatasource(t *testing.T, ds map[string]any) {
	t.Helper()
	var d struct {
		APIVersion string
		Metadata   struct{ Name string }
		Spec       struct {
			Config struct {
				Default bool
				Plugin  struct {
					Kind string
					Spec struct {
						Proxy struct {
							Kind string
							Spec struct{ URL, Secret string }
						}
					}
				}
			}
		}
	}
	b, _ := json.Marshal(ds)
	if err := json.Unmarshal(b, &d); err != nil || ds == nil {
		t.Fatalf("no PersesDatasource ocl-exporter-thanos-querier: %v", err)
	}
	c := d.Spec.Config
	if d.APIVersion != "perses.dev/v1alpha2" || !c.Default || c.Plugin.Kind != "PrometheusDatasource" || c.Plugin.Spec.Proxy.Kind != "HTTPProxy" {
		t.Errorf("the PersesDatasource must be the default PrometheusDatasource (perses.dev/v1alpha2) through an HTTPProxy: %+v", d)
	}
	if p := c.Plugin.Spec.Proxy.Spec; p.Secret != d.Metadata.Name+"-secret" || p.URL != "https://thanos-querier.openshift-monitoring.svc.cluster.local:9091" {
		t.Errorf("proxy %+v: want the platform Thanos Querier and the secret %s-secret the Perses operator writes", p, d.Metadata.Name)
	}
}

func checkUIPlugin(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("overlays", "perses", "uiplugin.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Kind     string
		Metadata struct{ Name string }
		Spec     struct {
			Type       string
			Monitoring struct{ Perses struct{ Enabled bool } }
		}
	}
	if err := sigsyaml.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	if p.Kind != "UIPlugin" || p.Metadata.Name != "monitoring" || p.Spec.Type != "Monitoring" || !p.Spec.Monitoring.Perses.Enabled {
		t.Errorf("uiplugin.yaml: want the UIPlugin monitoring of type Monitoring with perses.enabled: %+v", p)
	}
}
