package deploy_test

// What the bundle generates equals its sources: the PrometheusRule, the
// dashboards' ConfigMaps and the user-workload overlay.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	sigsyaml "sigs.k8s.io/yaml"
)

// ruleGroupsFromAlerts reads alerts/*rules.yaml generically (not through
// the generator's types), so the comparison below is independent of it.
func ruleGroupsFromAlerts(t *testing.T) []any {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(repoRoot, "alerts", "*rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(paths)
	var groups []any
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			Groups []any `json:"groups"`
		}
		if err := sigsyaml.Unmarshal(b, &f); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		groups = append(groups, f.Groups...)
	}
	return groups
}

func TestPrometheusRuleEqualsAlerts(t *testing.T) {
	b := build(t, ".")
	want := ruleGroupsFromAlerts(t)
	if len(want) == 0 {
		t.Fatal("alerts/*rules.yaml hold no rule groups: the bundle would ship no alerts")
	}
	if len(b.prometheusRules) != 1 {
		t.Fatalf("want one PrometheusRule, got %d", len(b.prometheusRules))
	}
	pr := b.prometheusRules[0]
	if pr.Namespace != namespace {
		t.Errorf("PrometheusRule in %s, want %s (the labelled namespace)", pr.Namespace, namespace)
	}
	js, err := json.Marshal(pr.Spec.Groups)
	if err != nil {
		t.Fatal(err)
	}
	// make bundle pins the runbook links to the tag or commit it ran at
	// (hack/bundle tests that they resolve); everything else is alerts/
	// verbatim.
	js = pinnedRunbooks.ReplaceAll(js, []byte("/blob/main/runbooks/"))
	var got []any
	if err := json.Unmarshal(js, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", "  ")
		w, _ := json.MarshalIndent(want, "", "  ")
		t.Errorf("PrometheusRule groups differ from alerts/*rules.yaml; run `make generate`.\ngot:  %s\nwant: %s", g, w)
	}
}

// pinnedRunbooks is a runbook link's ref, as make bundle pins it.
var pinnedRunbooks = regexp.MustCompile(`/blob/[^/"]+/runbooks/`)

func TestDashboardsAreConsoleConfigMaps(t *testing.T) {
	b := build(t, ".")
	paths, err := filepath.Glob(filepath.Join(repoRoot, "dashboards", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, p := range paths {
		content, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		want[filepath.Base(p)] = string(content)
	}
	got := map[string]string{}
	for _, cm := range b.configMaps {
		if cm.Labels["console.openshift.io/dashboard"] != "true" {
			continue
		}
		if cm.Namespace != "openshift-config-managed" {
			t.Errorf("dashboard ConfigMap %s in %s, the console reads openshift-config-managed", cm.Name, cm.Namespace)
		}
		for k, v := range cm.Data {
			got[k] = v
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("dashboard ConfigMaps hold %d dashboards, dashboards/ has %d, or their content differs; run `make generate`", len(got), len(want))
	}
}

func TestUserWorkloadOverlay(t *testing.T) {
	b := build(t, filepath.Join("overlays", "user-workload"))
	checkExporterRBAC(t, b)

	if _, ok := b.namespaces[0].Labels["openshift.io/cluster-monitoring"]; ok {
		t.Error("user-workload monitoring skips namespaces labelled openshift.io/cluster-monitoring")
	}
	for key := range b.roles {
		if strings.HasSuffix(key, "/prometheus-k8s") {
			t.Errorf("Role %s for the platform Prometheus is left in the overlay", key)
		}
	}
	if p := b.permissions(t, "ServiceAccount", platformPromNS, platformPromSA); len(p) != 0 {
		t.Errorf("the platform Prometheus keeps %v", p)
	}

	ep := b.serviceMonitors[0].Spec.Endpoints[0]
	//nolint:staticcheck // SA1019: checking that the deprecated field is unset.
	if ep.BearerTokenFile != "" || ep.TLSConfig == nil || ep.TLSConfig.CAFile != "" {
		t.Errorf("user-workload monitoring rejects ServiceMonitors that read files: %+v", ep)
	}
	if ep.TLSConfig == nil || ep.TLSConfig.CA.ConfigMap == nil || ep.TLSConfig.CA.ConfigMap.Name != "openshift-service-ca.crt" ||
		ep.TLSConfig.CA.ConfigMap.Key != "service-ca.crt" || ep.TLSConfig.ServerName == nil || *ep.TLSConfig.ServerName != "ocl-exporter.ocl-exporter.svc" {
		t.Errorf("tlsConfig %+v: want the service CA bundle from the openshift-service-ca.crt ConfigMap and serverName ocl-exporter.ocl-exporter.svc", ep.TLSConfig)
	}
	if ep.Authorization == nil || ep.Authorization.Credentials == nil {
		t.Fatal("the ServiceMonitor must send a bearer token from a Secret")
	}
	secret, ok := b.secrets[namespace+"/"+ep.Authorization.Credentials.Name]
	if !ok || secret.Type != corev1.SecretTypeServiceAccountToken || ep.Authorization.Credentials.Key != corev1.ServiceAccountTokenKey {
		t.Fatalf("token Secret %s/%s key %s missing or not a service account token", namespace, ep.Authorization.Credentials.Name, ep.Authorization.Credentials.Key)
	}
	scraper := secret.Annotations[corev1.ServiceAccountNameKey]
	if _, ok := b.serviceAccounts[namespace+"/"+scraper]; !ok {
		t.Fatalf("the token's ServiceAccount %q is not in the overlay", scraper)
	}
	got := b.permissions(t, "ServiceAccount", namespace, scraper)
	if want := []string{"nonResourceURL /metrics get"}; !reflect.DeepEqual(got, want) {
		t.Errorf("the scraper may %v, want %v", got, want)
	}
	for _, pr := range b.prometheusRules {
		if pr.Labels["openshift.io/prometheus-rule-evaluation-scope"] != "leaf-prometheus" {
			t.Errorf("PrometheusRule %s should be evaluated by the user-workload Prometheus", pr.Name)
		}
	}
}
