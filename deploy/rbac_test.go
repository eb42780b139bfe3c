package deploy_test

import (
	"cmp"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
)

var update = flag.Bool("update", false, "rewrite the rules of the exporter's roles in base/rbac.yaml from snapshot.Resources() (make generate)")

const rbacFile = "base/rbac.yaml"

// rule is a rule of the exporter's roles, with the comment it is written
// under.
type rule struct {
	comment string
	rbacv1.PolicyRule
}

// exporterRules are the rules of the exporter's roles by scope ("*" for
// its ClusterRole, else the namespace of a Role), derived from the table
// its informers are built from: list and watch on each resource,
// cluster-wide or in its namespace, on one object by resourceNames where
// the informer selects it by name; then the two reviews --auth.kubernetes
// makes. A group's resources share a rule, in the table's order.
func exporterRules(t *testing.T) map[string][]rule {
	t.Helper()
	out := map[string][]rule{}
	for _, r := range snapshot.Resources() {
		rbacName, _, _ := strings.Cut(r.Name, "@")
		resource, group, _ := strings.Cut(rbacName, ".")
		if resource != r.GVR.Resource || group != r.GVR.Group {
			t.Fatalf("resource %q does not match its GVR %v", r.Name, r.GVR)
		}
		scope := "*"
		if r.Namespaced {
			scope = cmp.Or(r.Namespace, snapshot.DefaultNamespace)
		}
		name, named := strings.CutPrefix(r.FieldSelector, "metadata.name=")
		rules := out[scope]
		i := slices.IndexFunc(rules, func(x rule) bool {
			return x.APIGroups[0] == group && (len(x.ResourceNames) > 0) == named && (!named || x.Resources[0] == resource)
		})
		if i < 0 {
			i, rules = len(rules), append(rules, rule{PolicyRule: rbacv1.PolicyRule{APIGroups: []string{group}, Verbs: []string{"list", "watch"}}})
		}
		if !slices.Contains(rules[i].Resources, resource) {
			rules[i].Resources = append(rules[i].Resources, resource)
		}
		if named && !slices.Contains(rules[i].ResourceNames, name) {
			rules[i].ResourceNames = append(rules[i].ResourceNames, name)
		}
		out[scope] = rules
	}
	out["*"] = append(out["*"],
		rule{"--auth.kubernetes: review the bearer token of each scrape (cached).", rbacv1.PolicyRule{
			APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}}},
		rule{"", rbacv1.PolicyRule{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}}})
	return out
}

// yamlRules writes rules as the rules: block of base/rbac.yaml does.
func yamlRules(rules []rule) string {
	list := func(s []string) string {
		if len(s) == 1 && s[0] == "" {
			return `[""]`
		}
		return "[" + strings.Join(s, ", ") + "]"
	}
	var b strings.Builder
	for _, r := range rules {
		if r.comment != "" {
			fmt.Fprintf(&b, "  # %s\n", r.comment)
		}
		fmt.Fprintf(&b, "  - apiGroups: %s\n    resources: %s\n", list(r.APIGroups), list(r.Resources))
		if len(r.ResourceNames) > 0 {
			fmt.Fprintf(&b, "    resourceNames: %s\n", list(r.ResourceNames))
		}
		fmt.Fprintf(&b, "    verbs: %s\n", list(r.Verbs))
	}
	return b.String()
}

type rbacDoc struct {
	Kind     string
	Metadata struct{ Name, Namespace string }
	Subjects []rbacv1.Subject
	RoleRef  rbacv1.RoleRef `json:"roleRef"`
}

// withExporterRules rewrites the rules: block of each role that
// rbac.yaml binds to the exporter's ServiceAccount with exporterRules.
func withExporterRules(t *testing.T, rbac string) string {
	t.Helper()
	docs := strings.Split(rbac, "\n---\n")
	parsed := make([]rbacDoc, len(docs))
	bound := map[string]string{} // scope -> role
	for i, d := range docs {
		if err := yaml.Unmarshal([]byte(d), &parsed[i]); err != nil {
			t.Fatalf("%s: document %d: %v", rbacFile, i+1, err)
		}
		p := parsed[i]
		if !slices.Contains(p.Subjects, rbacv1.Subject{Kind: "ServiceAccount", Name: exporterSA, Namespace: namespace}) {
			continue
		}
		switch p.Kind {
		case "ClusterRoleBinding":
			bound["*"] = p.RoleRef.Name
		case "RoleBinding":
			bound[p.Metadata.Namespace] = p.RoleRef.Name
		}
	}
	for scope, rules := range exporterRules(t) {
		i := slices.IndexFunc(parsed, func(p rbacDoc) bool {
			return p.Metadata.Name == bound[scope] && (scope == "*" && p.Kind == "ClusterRole" || p.Kind == "Role" && p.Metadata.Namespace == scope)
		})
		if i < 0 {
			t.Fatalf("%s binds no role of the exporter's ServiceAccount in scope %s (* for cluster-wide), which snapshot.Resources() reads: add a Role and a RoleBinding there", rbacFile, scope)
		}
		head, block, ok := strings.Cut(docs[i], "\nrules:\n")
		if !ok {
			t.Fatalf("%s: %s %s has no rules:", rbacFile, parsed[i].Kind, parsed[i].Metadata.Name)
		}
		// The block is its indented lines; a document but the file's last
		// ends without a newline (the split took it).
		lines := strings.SplitAfter(block, "\n")
		n := 0
		for n < len(lines) && strings.HasPrefix(lines[n], " ") {
			n++
		}
		written := yamlRules(rules)
		if n == len(lines) && !strings.HasSuffix(block, "\n") {
			written = strings.TrimSuffix(written, "\n")
		}
		docs[i] = head + "\nrules:\n" + written + strings.Join(lines[n:], "")
	}
	return strings.Join(docs, "\n---\n")
}

// TestExporterRBACIsExactlyWhatTheInformersNeed: the rules of the roles
// base/rbac.yaml binds to the exporter are what snapshot.Resources()
// needs (make generate writes them: this test with -update), and the
// bundle, overlays included, grants the exporter nothing more.
func TestExporterRBACIsExactlyWhatTheInformersNeed(t *testing.T) {
	b, err := os.ReadFile(rbacFile)
	if err != nil {
		t.Fatal(err)
	}
	want := withExporterRules(t, string(b))
	if *update {
		if err := os.WriteFile(rbacFile, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	} else if want != string(b) {
		t.Errorf("the rules of the exporter's roles in deploy/%s are not what snapshot.Resources() needs: run `make generate`", rbacFile)
	}
	checkExporterRBAC(t, build(t, "."))
}

// checkExporterRBAC: the bundle grants the exporter's ServiceAccount
// exactly exporterRules, in their scopes.
func checkExporterRBAC(t *testing.T, b *bundle) {
	t.Helper()
	if _, ok := b.serviceAccounts[namespace+"/"+exporterSA]; !ok {
		t.Errorf("no ServiceAccount %s/%s", namespace, exporterSA)
	}
	set := map[string]bool{}
	for scope, rules := range exporterRules(t) {
		for _, r := range rules {
			expand(set, scope, []rbacv1.PolicyRule{r.PolicyRule})
		}
	}
	got := b.permissions(t, "ServiceAccount", namespace, exporterSA)
	if d := diff(got, slices.Sorted(maps.Keys(set))); d != "" {
		t.Errorf("the exporter's RBAC differs from what snapshot.Resources() needs:%s", d)
	}
}
