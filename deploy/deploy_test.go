package deploy_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"github.com/prometheus/exporter-toolkit/web"
	"go.yaml.in/yaml/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/ocl-exporter/ocl_exporter/source"
)

const (
	namespace      = "ocl-exporter"
	exporterSA     = "ocl-exporter"
	platformPromNS = "openshift-monitoring"
	platformPromSA = "prometheus-k8s"
	repoRoot       = ".."
)

// bundle is the kustomize output, decoded strictly into typed objects.
type bundle struct {
	namespaces          []*corev1.Namespace
	serviceAccounts     map[string]*corev1.ServiceAccount // namespace/name
	secrets             map[string]*corev1.Secret
	configMaps          map[string]*corev1.ConfigMap
	clusterRoles        map[string]*rbacv1.ClusterRole
	clusterRoleBindings []*rbacv1.ClusterRoleBinding
	roles               map[string]*rbacv1.Role
	roleBindings        []*rbacv1.RoleBinding
	deployments         []*appsv1.Deployment
	services            []*corev1.Service
	serviceMonitors     []*monitoringv1.ServiceMonitor
	prometheusRules     []*monitoringv1.PrometheusRule
}

func build(t *testing.T, dir string) *bundle {
	t.Helper()
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := monitoringv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	// Strict: an unknown or duplicated field fails, as `oc apply
	// --validate=strict` would.
	decoder := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
	b := &bundle{
		serviceAccounts: map[string]*corev1.ServiceAccount{}, secrets: map[string]*corev1.Secret{},
		configMaps: map[string]*corev1.ConfigMap{}, clusterRoles: map[string]*rbacv1.ClusterRole{}, roles: map[string]*rbacv1.Role{},
	}
	for _, r := range m.Resources() {
		y, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		obj, gvk, err := decoder.Decode(y, nil, nil)
		if err != nil {
			t.Errorf("%s %s/%s does not decode into its Go type: %v", r.GetKind(), r.GetNamespace(), r.GetName(), err)
			continue
		}
		key := r.GetNamespace() + "/" + r.GetName()
		switch o := obj.(type) {
		case *corev1.Namespace:
			b.namespaces = append(b.namespaces, o)
		case *corev1.ServiceAccount:
			b.serviceAccounts[key] = o
		case *corev1.Secret:
			b.secrets[key] = o
		case *corev1.ConfigMap:
			b.configMaps[key] = o
		case *rbacv1.ClusterRole:
			b.clusterRoles[o.Name] = o
		case *rbacv1.ClusterRoleBinding:
			b.clusterRoleBindings = append(b.clusterRoleBindings, o)
		case *rbacv1.Role:
			b.roles[key] = o
		case *rbacv1.RoleBinding:
			b.roleBindings = append(b.roleBindings, o)
		case *appsv1.Deployment:
			b.deployments = append(b.deployments, o)
		case *corev1.Service:
			b.services = append(b.services, o)
		case *monitoringv1.ServiceMonitor:
			b.serviceMonitors = append(b.serviceMonitors, o)
		case *monitoringv1.PrometheusRule:
			b.prometheusRules = append(b.prometheusRules, o)
		default:
			t.Errorf("unexpected kind %s in the bundle", gvk)
		}
		if r.GetKind() != "Namespace" && !strings.HasPrefix(r.GetKind(), "Cluster") && r.GetNamespace() == "" {
			t.Errorf("%s %s has no namespace", r.GetKind(), r.GetName())
		}
	}
	if len(b.namespaces) != 1 || len(b.deployments) != 1 || len(b.services) != 1 || len(b.serviceMonitors) != 1 {
		t.Fatalf("want one Namespace, Deployment, Service and ServiceMonitor; got %d, %d, %d, %d",
			len(b.namespaces), len(b.deployments), len(b.services), len(b.serviceMonitors))
	}
	return b
}

// permissions expands what a subject may do into one string per
// (scope, group, resource, name, verb), scope "*" meaning cluster-wide,
// name "*" any object; non-resource URLs as (url, verb).
func (b *bundle) permissions(t *testing.T, kind, ns, name string) []string {
	t.Helper()
	set := map[string]bool{}
	add := func(scope string, rules []rbacv1.PolicyRule) {
		for _, r := range rules {
			names := r.ResourceNames
			if len(names) == 0 {
				names = []string{"*"}
			}
			for _, v := range r.Verbs {
				for _, u := range r.NonResourceURLs {
					set[fmt.Sprintf("nonResourceURL %s %s", u, v)] = true
				}
				for _, g := range r.APIGroups {
					for _, res := range r.Resources {
						for _, n := range names {
							set[fmt.Sprintf("%s %s %s %s %s", scope, g, res, n, v)] = true
						}
					}
				}
			}
		}
	}
	is := func(subjects []rbacv1.Subject) bool {
		for _, s := range subjects {
			if s.Kind == kind && s.Namespace == ns && s.Name == name {
				return true
			}
		}
		return false
	}
	for _, crb := range b.clusterRoleBindings {
		if !is(crb.Subjects) {
			continue
		}
		cr, ok := b.clusterRoles[crb.RoleRef.Name]
		if crb.RoleRef.Kind != "ClusterRole" || !ok {
			t.Errorf("ClusterRoleBinding %s refers to %s %s, not in the bundle", crb.Name, crb.RoleRef.Kind, crb.RoleRef.Name)
			continue
		}
		add("*", cr.Rules)
	}
	for _, rb := range b.roleBindings {
		if !is(rb.Subjects) {
			continue
		}
		role, ok := b.roles[rb.Namespace+"/"+rb.RoleRef.Name]
		if rb.RoleRef.Kind != "Role" || !ok {
			t.Errorf("RoleBinding %s/%s refers to %s %s, not in the bundle", rb.Namespace, rb.Name, rb.RoleRef.Kind, rb.RoleRef.Name)
			continue
		}
		add(rb.Namespace, role.Rules)
	}
	var out []string
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// exporterPermissions derives what the exporter needs from the table its
// informers are built from: list and watch on each resource, in the MCO
// namespace when namespaced, on one object when the informer selects it by
// name; plus the two reviews --auth.kubernetes makes.
func exporterPermissions(t *testing.T) []string {
	var want []string
	for _, r := range source.Resources() {
		rbacName, _, _ := strings.Cut(r.Name, "@")
		resource, group, _ := strings.Cut(rbacName, ".")
		if resource != r.GVR.Resource || group != r.GVR.Group {
			t.Fatalf("resource %q does not match its GVR %v", r.Name, r.GVR)
		}
		scope := "*"
		if r.Namespaced {
			scope = cmp.Or(r.Namespace, source.DefaultNamespace)
		}
		name := "*"
		if n, ok := strings.CutPrefix(r.FieldSelector, "metadata.name="); ok {
			name = n
		}
		for _, v := range []string{"list", "watch"} {
			want = append(want, fmt.Sprintf("%s %s %s %s %s", scope, group, resource, name, v))
		}
	}
	want = append(want,
		"* authentication.k8s.io tokenreviews * create",
		"* authorization.k8s.io subjectaccessreviews * create")
	sort.Strings(want)
	return want
}

func diff(got, want []string) string {
	g, w := map[string]bool{}, map[string]bool{}
	for _, s := range got {
		g[s] = true
	}
	for _, s := range want {
		w[s] = true
	}
	var b strings.Builder
	for _, s := range want {
		if !g[s] {
			fmt.Fprintf(&b, "\n  missing: %s", s)
		}
	}
	for _, s := range got {
		if !w[s] {
			fmt.Fprintf(&b, "\n  extra:   %s", s)
		}
	}
	return b.String()
}

func checkExporterRBAC(t *testing.T, b *bundle) {
	t.Helper()
	if _, ok := b.serviceAccounts[namespace+"/"+exporterSA]; !ok {
		t.Errorf("no ServiceAccount %s/%s", namespace, exporterSA)
	}
	got := b.permissions(t, "ServiceAccount", namespace, exporterSA)
	if d := diff(got, exporterPermissions(t)); d != "" {
		t.Errorf("the exporter's RBAC differs from what source.Resources() needs:%s", d)
	}
}

func TestExporterRBACIsExactlyWhatTheInformersNeed(t *testing.T) {
	checkExporterRBAC(t, build(t, "."))
}

func TestPlatformPrometheusMayDiscoverAndScrape(t *testing.T) {
	b := build(t, ".")
	got := b.permissions(t, "ServiceAccount", platformPromNS, platformPromSA)
	want := []string{"nonResourceURL " + telemetryPath(t, b.deployments[0]) + " get"}
	for _, v := range []string{"get", "list", "watch"} {
		for _, gr := range []string{" services", " endpoints", " pods", "discovery.k8s.io endpointslices"} {
			g, r, _ := strings.Cut(gr, " ")
			want = append(want, fmt.Sprintf("%s %s %s * %s", namespace, g, r, v))
		}
	}
	sort.Strings(want)
	if d := diff(got, want); d != "" {
		t.Errorf("prometheus-k8s permissions:%s", d)
	}
}

func container(t *testing.T, d *appsv1.Deployment) *corev1.Container {
	t.Helper()
	if n := len(d.Spec.Template.Spec.Containers); n != 1 {
		t.Fatalf("Deployment has %d containers, want 1", n)
	}
	return &d.Spec.Template.Spec.Containers[0]
}

// flags reads the container's --name=value arguments (and bare --name as
// "true").
func flags(t *testing.T, c *corev1.Container) map[string]string {
	t.Helper()
	f := map[string]string{}
	for _, a := range c.Args {
		name, value, ok := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !strings.HasPrefix(a, "--") {
			t.Fatalf("argument %q: write flags as --name=value", a)
		}
		if !ok {
			value = "true"
		}
		f[name] = value
	}
	return f
}

func telemetryPath(t *testing.T, d *appsv1.Deployment) string {
	if p := flags(t, container(t, d))["web.telemetry-path"]; p != "" {
		return p
	}
	return "/metrics"
}

// mountOf finds the volume mounted at the directory holding file.
func mountOf(t *testing.T, d *appsv1.Deployment, file string) *corev1.Volume {
	t.Helper()
	c := container(t, d)
	for _, m := range c.VolumeMounts {
		if path.Dir(file) == path.Clean(m.MountPath) {
			for i, v := range d.Spec.Template.Spec.Volumes {
				if v.Name == m.Name {
					return &d.Spec.Template.Spec.Volumes[i]
				}
			}
		}
	}
	t.Fatalf("no volume is mounted at %s", path.Dir(file))
	return nil
}

func TestDeploymentIsHardened(t *testing.T) {
	d := build(t, ".").deployments[0]
	pod := d.Spec.Template.Spec
	c := container(t, d)
	if pod.ServiceAccountName != exporterSA || d.Namespace != namespace {
		t.Errorf("Deployment %s/%s runs as %q", d.Namespace, d.Name, pod.ServiceAccountName)
	}
	psc, sc := pod.SecurityContext, c.SecurityContext
	if psc == nil || sc == nil {
		t.Fatal("pod and container need a securityContext")
	}
	if psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Error("runAsNonRoot must be true")
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Error("readOnlyRootFilesystem must be true")
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Error("allowPrivilegeEscalation must be false")
	}
	if sc.Privileged != nil && *sc.Privileged {
		t.Error("privileged")
	}
	if sc.Capabilities == nil || !reflect.DeepEqual(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) != 0 {
		t.Errorf("capabilities %+v, want drop [ALL] and nothing added", sc.Capabilities)
	}
	for _, s := range []*corev1.SeccompProfile{psc.SeccompProfile, sc.SeccompProfile} {
		if s == nil || s.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("seccompProfile %+v, want RuntimeDefault", s)
		}
	}
	if pod.HostNetwork || pod.HostPID || pod.HostIPC {
		t.Error("no host namespaces")
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := c.Resources.Requests[r]; !ok || q.IsZero() {
			t.Errorf("no %s request", r)
		}
	}
	limit, ok := c.Resources.Limits[corev1.ResourceMemory]
	if !ok || limit.Cmp(c.Resources.Requests[corev1.ResourceMemory]) < 0 {
		t.Errorf("memory limit %v must be set and at least the request", limit)
	}
	var gomemlimit *corev1.EnvVar
	for i, e := range c.Env {
		if e.Name == "GOMEMLIMIT" {
			gomemlimit = &c.Env[i]
		}
	}
	if gomemlimit == nil || gomemlimit.ValueFrom == nil || gomemlimit.ValueFrom.ResourceFieldRef == nil {
		t.Fatal("GOMEMLIMIT must come from the memory limit through the downward API")
	}
	ref := gomemlimit.ValueFrom.ResourceFieldRef
	// The divisor must be 1: GOMEMLIMIT reads a bare number as bytes.
	if ref.Resource != "limits.memory" || (ref.ContainerName != "" && ref.ContainerName != c.Name) || (!ref.Divisor.IsZero() && ref.Divisor.Value() != 1) {
		t.Errorf("GOMEMLIMIT from %+v, want limits.memory of %s in bytes", ref, c.Name)
	}
	for probe, want := range map[*corev1.Probe]string{c.LivenessProbe: "/healthz", c.ReadinessProbe: "/readyz"} {
		if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Path != want {
			t.Errorf("want an HTTP probe on %s, got %+v", want, probe)
			continue
		}
		if probe.HTTPGet.Port.String() != c.Ports[0].Name || probe.HTTPGet.Scheme != corev1.URISchemeHTTPS {
			t.Errorf("probe %s on %s %s, want HTTPS on %s", want, probe.HTTPGet.Scheme, probe.HTTPGet.Port.String(), c.Ports[0].Name)
		}
	}
}

// TestScrapeConfigurationFitsTogether follows a scrape: ServiceMonitor ->
// Service -> container port and flags -> web config -> serving certificate.
func TestScrapeConfigurationFitsTogether(t *testing.T) {
	b := build(t, ".")
	d, svc, sm := b.deployments[0], b.services[0], b.serviceMonitors[0]
	c := container(t, d)
	f := flags(t, c)
	if f["auth.kubernetes"] != "true" {
		t.Error("the Deployment must run with --auth.kubernetes")
	}
	if len(c.Ports) != 1 {
		t.Fatalf("want one container port, got %+v", c.Ports)
	}
	port := c.Ports[0]
	_, listenPort, err := net.SplitHostPort(f["web.listen-address"])
	if err != nil || listenPort != strconv.Itoa(int(port.ContainerPort)) {
		t.Errorf("--web.listen-address=%q does not listen on containerPort %d", f["web.listen-address"], port.ContainerPort)
	}

	// Service -> Pod
	for k, v := range svc.Spec.Selector {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("Service selector %s=%s does not select the pod (labels %v)", k, v, d.Spec.Template.Labels)
		}
	}
	if svc.Namespace != d.Namespace || len(svc.Spec.Ports) != 1 {
		t.Fatalf("Service %s/%s ports %+v", svc.Namespace, svc.Name, svc.Spec.Ports)
	}
	sp := svc.Spec.Ports[0]
	if sp.Name != "https-metrics" || sp.TargetPort.String() != port.Name {
		t.Errorf("Service port %s -> %s, want https-metrics -> the container port %s", sp.Name, sp.TargetPort.String(), port.Name)
	}

	// ServiceMonitor -> Service
	if sm.Namespace != svc.Namespace || len(sm.Spec.NamespaceSelector.MatchNames) != 0 || sm.Spec.NamespaceSelector.Any {
		t.Errorf("ServiceMonitor %s should select Services in its own namespace %s", sm.Name, svc.Namespace)
	}
	for k, v := range sm.Spec.Selector.MatchLabels {
		if svc.Labels[k] != v {
			t.Errorf("ServiceMonitor selector %s=%s does not select the Service (labels %v)", k, v, svc.Labels)
		}
	}
	if len(sm.Spec.Endpoints) != 1 {
		t.Fatalf("want one ServiceMonitor endpoint, got %d", len(sm.Spec.Endpoints))
	}
	ep := sm.Spec.Endpoints[0]
	if ep.Port != sp.Name || ep.Scheme != "https" || ep.Path != telemetryPath(t, d) {
		t.Errorf("ServiceMonitor scrapes %s://:%s%s, want https://:%s%s", ep.Scheme, ep.Port, ep.Path, sp.Name, telemetryPath(t, d))
	}
	if ep.TLSConfig == nil || ep.TLSConfig.ServerName == nil || *ep.TLSConfig.ServerName != svc.Name+"."+svc.Namespace+".svc" {
		t.Errorf("ServiceMonitor tlsConfig serverName must be %s.%s.svc, the name in the service CA's certificate", svc.Name, svc.Namespace)
	}
	if ep.TLSConfig != nil && ep.TLSConfig.InsecureSkipVerify != nil && *ep.TLSConfig.InsecureSkipVerify {
		t.Error("insecureSkipVerify")
	}
	//nolint:staticcheck // SA1019: the platform Prometheus reads its own token file; OpenShift's components scrape this way.
	if ep.BearerTokenFile == "" || ep.TLSConfig == nil || ep.TLSConfig.CAFile != "/etc/prometheus/configmaps/serving-certs-ca-bundle/service-ca.crt" {
		t.Errorf("the platform Prometheus authenticates with its token file and checks the service CA bundle: %+v", ep)
	}

	// Flags -> web config -> serving certificate Secret
	webConfigFile := f["web.config.file"]
	vol := mountOf(t, d, webConfigFile)
	if vol.ConfigMap == nil {
		t.Fatalf("%s is not on a ConfigMap volume", webConfigFile)
	}
	cm, ok := b.configMaps[d.Namespace+"/"+vol.ConfigMap.Name]
	if !ok {
		t.Fatalf("ConfigMap %s (web config) is not in the bundle", vol.ConfigMap.Name)
	}
	raw, ok := cm.Data[path.Base(webConfigFile)]
	if !ok {
		t.Fatalf("ConfigMap %s has no key %s", cm.Name, path.Base(webConfigFile))
	}
	var wc web.Config
	if err := yaml.UnmarshalStrict([]byte(raw), &wc); err != nil {
		t.Fatalf("web config: %v", err)
	}
	secret := svc.Annotations["service.beta.openshift.io/serving-cert-secret-name"]
	if secret == "" {
		t.Fatal("the Service needs the service.beta.openshift.io/serving-cert-secret-name annotation")
	}
	for file, key := range map[string]string{wc.TLSConfig.TLSCertPath: "tls.crt", wc.TLSConfig.TLSKeyPath: "tls.key"} {
		v := mountOf(t, d, file)
		if v.Secret == nil || v.Secret.SecretName != secret || path.Base(file) != key {
			t.Errorf("web config reads %s, want %s of the serving-cert Secret %s", file, key, secret)
		}
	}
}

func TestNamespaceIsScrapedByPlatformMonitoring(t *testing.T) {
	ns := build(t, ".").namespaces[0]
	if ns.Name != namespace || ns.Labels["openshift.io/cluster-monitoring"] != "true" {
		t.Errorf("Namespace %s labels %v", ns.Name, ns.Labels)
	}
}

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
		t.Errorf("PrometheusRule groups differ from alerts/*rules.yaml; run `make bundle`.\ngot:  %s\nwant: %s", g, w)
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
		t.Errorf("dashboard ConfigMaps hold %d dashboards, dashboards/ has %d, or their content differs; run `make bundle`", len(got), len(want))
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
