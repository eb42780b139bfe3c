package main

import (
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// ACMGeneratedDir holds the dashboards for an ACM observability hub
	// (deploy/acm/, which also carries the allowlist).
	ACMGeneratedDir = "deploy/acm/generated"
	// ACMNamespace, ACMDashboardLabel and ACMFolderAnnotation are where
	// ACM's Grafana loads custom dashboards from, and into which folder.
	ACMNamespace        = "open-cluster-management-observability"
	ACMDashboardLabel   = "grafana-custom-dashboard"
	ACMFolderAnnotation = "observability.open-cluster-management.io/dashboard-folder"

	fleetDashboardsGlob = "dashboards/*/*.json"
)

// GenerateACM returns the files of deploy/acm/generated/: a ConfigMap for
// ACM's Grafana per dashboard, the per-cluster ones (whose cluster
// variable picks a managed cluster) and the fleet ones, all in folder OCL.
func GenerateACM(root string) (map[string][]byte, error) {
	files := map[string][]byte{}
	var resources, paths []string
	for _, glob := range []string{dashboardsGlob, fleetDashboardsGlob} {
		m, err := filepath.Glob(filepath.Join(root, glob))
		if err != nil {
			return nil, err
		}
		paths = append(paths, m...)
	}
	if err := addDashboards(files, &resources, root, paths, ACMDashboardConfigMap); err != nil {
		return nil, err
	}
	files["kustomization.yaml"] = kustomization("dashboards/*.json and dashboards/*/*.json", resources)
	return files, nil
}

// ACMDashboardConfigMap puts one dashboard JSON file into a ConfigMap
// ACM's Grafana loads.
func ACMDashboardConfigMap(path string) (*corev1.ConfigMap, error) {
	return dashboardConfigMap(path, metav1.ObjectMeta{
		Namespace:   ACMNamespace,
		Labels:      map[string]string{ACMDashboardLabel: "true"},
		Annotations: map[string]string{ACMFolderAnnotation: "OCL"},
	})
}
