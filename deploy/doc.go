// Package deploy holds the kustomize bundle that installs ocl_exporter on
// OpenShift (see the README, "Install on a cluster"). Its tests build the
// bundle with kustomize's Go API and check it against the code: the RBAC
// against snapshot.Resources(), the scrape path end to end, the PrometheusRule
// against alerts/ and the dashboards against dashboards/. deploy/acm/ is
// for an ACM observability hub, not a managed cluster: its allowlist is
// checked against the metrics the dashboards read.
package deploy
