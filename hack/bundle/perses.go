package main

import (
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ocl-exporter/ocl_exporter/dashboards"
)

const (
	// PersesGeneratedDir holds the PersesDashboards of the Perses overlay
	// (deploy/overlays/perses/, which adds the PersesDatasource).
	PersesGeneratedDir = "deploy/overlays/perses/generated"
	// PersesAPIVersion is the version the Cluster Observability Operator
	// stores PersesDashboards in from 1.5 on (its perses.dev CRDs, v1alpha2
	// with the dashboard under spec.config).
	PersesAPIVersion = "perses.dev/v1alpha2"
)

// PersesDashboard is a Perses dashboard spec as the object the
// Cluster Observability Operator's Perses operator reads, in the
// exporter's namespace: the console's Perses view shows it under that
// namespace, with the namespace's default PersesDatasource.
type PersesDashboard struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Config dashboards.PersesSpec `json:"config"`
	} `json:"spec"`
}

// GeneratePerses returns the files of deploy/overlays/perses/generated/:
// a PersesDashboard per dashboard of dashboards.Perses, named by its UID.
func GeneratePerses() (map[string][]byte, error) {
	specs, err := dashboards.Perses()
	if err != nil {
		return nil, err
	}
	uids := make([]string, 0, len(specs))
	for uid := range specs {
		uids = append(uids, uid)
	}
	sort.Strings(uids)
	files := map[string][]byte{}
	var resources []string
	for _, uid := range uids {
		d := PersesDashboard{
			TypeMeta: metav1.TypeMeta{APIVersion: PersesAPIVersion, Kind: "PersesDashboard"},
			ObjectMeta: metav1.ObjectMeta{
				Name: uid, Namespace: Namespace,
				Labels: map[string]string{"app.kubernetes.io/name": "ocl-exporter"},
			},
		}
		d.Spec.Config = specs[uid]
		b, err := render(d, "dashboards/*.go")
		if err != nil {
			return nil, err
		}
		name := "dashboard-" + strings.TrimPrefix(uid, "ocl-") + ".yaml"
		files[name] = b
		resources = append(resources, name)
	}
	files["kustomization.yaml"] = kustomization("dashboards/*.go", resources)
	return files, nil
}
