// Package deploy holds the kustomize bundle that installs ocl_exporter on
// OpenShift (see the README, "Install on a cluster"). Its tests build the
// bundle with kustomize's Go API and check it against the code: the RBAC
// against source.Resources(), the scrape path end to end, the PrometheusRule
// against alerts/ and the dashboards against dashboards/.
package deploy
