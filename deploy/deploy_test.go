package deploy_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
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
	disruptionBudgets   []*policyv1.PodDisruptionBudget
}

func build(t *testing.T, dir string) *bundle {
	t.Helper()
	return buildIn(t, filesys.MakeFsOnDisk(), dir)
}

// buildIn is build on the file system fsys.
func buildIn(t *testing.T, fsys filesys.FileSystem, dir string) *bundle {
	t.Helper()
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fsys, dir)
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
		// The Perses overlay's objects have no Go types here;
		// perses_test.go checks them.
		if r.GetGvk().Group == "perses.dev" {
			continue
		}
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
		case *policyv1.PodDisruptionBudget:
			b.disruptionBudgets = append(b.disruptionBudgets, o)
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
		expand(set, "*", cr.Rules)
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
		expand(set, rb.Namespace, role.Rules)
	}
	var out []string
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// expand adds what rules grant in scope to set, one string per
// permissions' tuple.
func expand(set map[string]bool, scope string, rules []rbacv1.PolicyRule) {
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
