// Command bundle writes the generated part of the deploy bundle from its
// single sources of truth: the PrometheusRule from the plain rule files
// alerts/*rules.yaml (what promtool checks and tests), and one console
// dashboard ConfigMap per dashboards/*.json; and for an ACM hub one Grafana
// dashboard ConfigMap per dashboards/*.json and dashboards/*/*.json (the
// fleet ones); and the PersesDashboards of deploy/overlays/perses/ from
// the dashboards' Go definitions. Run it from the repository root (make
// bundle); the test next to it fails when deploy/base/generated/,
// deploy/acm/generated/ or deploy/overlays/perses/generated/ differs from
// what it would write.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/ocl-exporter/ocl_exporter/runbooks"
)

const (
	// GeneratedDir holds everything this command writes, and nothing else.
	GeneratedDir = "deploy/base/generated"
	// Namespace is where the exporter and its PrometheusRule live.
	Namespace = "ocl-exporter"
	// DashboardNamespace and DashboardLabel are where the OpenShift console
	// looks for dashboards.
	DashboardNamespace = "openshift-config-managed"
	DashboardLabel     = "console.openshift.io/dashboard"

	rulesGlob      = "alerts/*rules.yaml"
	dashboardsGlob = "dashboards/*.json"
	ruleFile       = "prometheusrule.yaml"
)

func main() {
	root := flag.String("root", ".", "repository root")
	base := flag.String("runbook-url", "", "base URL of the runbooks the bundle links, ending in /; default: the -repository's runbooks on main (the committed files), or with -manifests at the tag or commit checked out")
	repository := flag.String("repository", runbooks.Canonical, "repository (GitHub URL layout) whose runbooks the bundle links")
	manifests := flag.String("manifests", "", "instead of writing the generated files, write the bundle as one YAML to this file (- for standard output), with -image set")
	image := flag.String("image", "", "with -manifests: the exporter's image, REGISTRY/REPOSITORY:TAG or @sha256:DIGEST")
	dir := flag.String("dir", "deploy", "with -manifests: the kustomization to render (deploy, or an overlay of it)")
	release := flag.String("version", "", "with -manifests: link the runbooks at this version's ref (its tag for a release, else -revision) rather than the tag or commit checked out")
	revision := flag.String("revision", "", "with -version: the commit the version was built from")
	flag.Parse()
	if *manifests == "" {
		if *base == "" {
			*base = runbooks.AtIn(*repository, "main")
		}
		if err := write(*root, *base); err != nil {
			fmt.Fprintln(os.Stderr, "bundle:", err)
			os.Exit(1)
		}
		return
	}
	pinned, err := pinnedBase(*root, *base, *repository, *release, *revision)
	if err == nil {
		err = writeManifests(*root, *dir, *image, *manifests, pinned)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bundle:", err)
		os.Exit(1)
	}
}

// pinnedBase is where rendered manifests link the runbooks: base when
// given, else the runbooks at version's ref when a version is given (a
// release), else at the tag or commit checked out. Never main, which
// moves on under a deployed rule.
func pinnedBase(root, base, repository, version, revision string) (string, error) {
	switch {
	case base != "":
		return base, nil
	case version != "":
		return runbooks.AtIn(repository, runbooks.Ref(version, revision)), nil
	}
	ref, err := CheckedOutRef(root)
	if err != nil {
		return "", fmt.Errorf("the manifests link the runbooks at the tag or commit checked out: %w; outside a git checkout pass -runbook-url (make manifests RUNBOOK_URL=...)", err)
	}
	return runbooks.AtIn(repository, ref), nil
}

// writeManifests renders the bundle into out, whole or not at all.
func writeManifests(root, dir, image, out, runbookBase string) error {
	b, err := Manifests(root, dir, image, runbookBase)
	if err != nil {
		return err
	}
	if out == "-" {
		_, err = os.Stdout.Write(b)
		return err
	}
	tmp := out + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}

// outputs are the directories this command fills, and what fills each.
var outputs = []struct {
	dir      string
	generate func(root, runbookBase string) (map[string][]byte, error)
}{
	{GeneratedDir, GenerateWith},
	{ACMGeneratedDir, func(root, _ string) (map[string][]byte, error) { return GenerateACM(root) }},
	{PersesGeneratedDir, func(string, string) (map[string][]byte, error) { return GeneratePerses() }},
}

// write replaces the contents of each output directory with what its
// generator returns.
func write(root, runbookBase string) error {
	for _, o := range outputs {
		files, err := o.generate(root, runbookBase)
		if err != nil {
			return err
		}
		if err := writeDir(filepath.Join(root, o.dir), files); err != nil {
			return err
		}
	}
	return nil
}

func writeDir(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	old, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range old {
		if _, keep := files[e.Name()]; !keep && !e.IsDir() {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// GenerateWith returns the files of deploy/base/generated/ by name: a
// kustomization.yaml listing the others, the PrometheusRule when alerts/
// has rule groups, and a ConfigMap per dashboard. No rule files or no
// dashboards (yet) is not an error. The rules' runbook_url values under
// runbooks.Main are moved to runbookBase.
func GenerateWith(root, runbookBase string) (map[string][]byte, error) {
	files := map[string][]byte{}
	var resources []string

	groups, sources, err := ReadRuleGroups(root)
	if err != nil {
		return nil, err
	}
	if err := pinRunbooks(groups, runbookBase); err != nil {
		return nil, err
	}
	if len(groups) > 0 {
		b, err := render(PrometheusRule(groups), strings.Join(sources, ", "))
		if err != nil {
			return nil, err
		}
		files[ruleFile] = b
		resources = append(resources, ruleFile)
	}

	dashboards, err := filepath.Glob(filepath.Join(root, dashboardsGlob))
	if err != nil {
		return nil, err
	}
	if err := addDashboards(files, &resources, root, dashboards, DashboardConfigMap); err != nil {
		return nil, err
	}
	files["kustomization.yaml"] = kustomization("alerts/*rules.yaml and dashboards/*.json", resources)
	return files, nil
}

// addDashboards adds one ConfigMap file per dashboard JSON file, made by
// configMap, to files and resources.
func addDashboards(files map[string][]byte, resources *[]string, root string, paths []string, configMap func(string) (*corev1.ConfigMap, error)) error {
	sort.Strings(paths)
	for _, path := range paths {
		cm, err := configMap(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		b, err := render(cm, filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		name := "dashboard-" + slug(strings.TrimSuffix(filepath.Base(path), ".json")) + ".yaml"
		if _, dup := files[name]; dup {
			return fmt.Errorf("%s: two dashboards map to %s", path, name)
		}
		files[name] = b
		*resources = append(*resources, name)
	}
	return nil
}

// kustomization lists the generated resources.
func kustomization(from string, resources []string) []byte {
	var k bytes.Buffer
	k.WriteString(header(from))
	k.WriteString("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n")
	if len(resources) == 0 {
		k.WriteString("resources: []\n")
	} else {
		k.WriteString("resources:\n")
		for _, r := range resources {
			k.WriteString("  - " + r + "\n")
		}
	}
	return k.Bytes()
}

// CheckedOutRef is the git ref the checkout at root is built from: the tag
// at HEAD when there is one (a release), else HEAD's commit. A deployed rule
// then links the runbooks of the commit its bundle was generated at, which
// the repository's history keeps, never ones written for a later version
// and never a tag that was not made.
func CheckedOutRef(root string) (string, error) {
	if tag, err := git(root, "describe", "--tags", "--exact-match", "HEAD"); err == nil {
		return tag, nil
	}
	return git(root, "rev-parse", "HEAD")
}

// git runs a git command in dir and returns its trimmed output.
func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// pinRunbooks moves every runbook_url under runbooks.Main to base.
func pinRunbooks(groups []monitoringv1.RuleGroup, base string) error {
	if !strings.HasSuffix(base, "/") {
		return fmt.Errorf("runbook base %q must end in /", base)
	}
	for _, g := range groups {
		for _, r := range g.Rules {
			if u, ok := r.Annotations["runbook_url"]; ok {
				if rest, found := strings.CutPrefix(u, runbooks.Main); found {
					r.Annotations["runbook_url"] = base + rest
				}
			}
		}
	}
	return nil
}

// ReadRuleGroups reads the rule groups of alerts/*rules.yaml in file name
// order, strictly: a field the PrometheusRule CRD does not know fails here
// instead of vanishing from the cluster's copy.
func ReadRuleGroups(root string) ([]monitoringv1.RuleGroup, []string, error) {
	paths, err := filepath.Glob(filepath.Join(root, rulesGlob))
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(paths)
	var groups []monitoringv1.RuleGroup
	var sources []string
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, err
		}
		var f struct {
			Groups []monitoringv1.RuleGroup `json:"groups"`
		}
		if err := yaml.UnmarshalStrict(b, &f); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		groups = append(groups, f.Groups...)
		sources = append(sources, filepath.ToSlash(filepath.Join("alerts", filepath.Base(path))))
	}
	seen := map[string]bool{}
	for _, g := range groups {
		if seen[g.Name] {
			return nil, nil, fmt.Errorf("rule group %q appears twice in %s", g.Name, rulesGlob)
		}
		seen[g.Name] = true
	}
	return groups, sources, nil
}

// PrometheusRule wraps the groups for the prometheus-operator.
func PrometheusRule(groups []monitoringv1.RuleGroup) *monitoringv1.PrometheusRule {
	return &monitoringv1.PrometheusRule{
		TypeMeta: metav1.TypeMeta{APIVersion: monitoringv1.SchemeGroupVersion.String(), Kind: monitoringv1.PrometheusRuleKind},
		ObjectMeta: metav1.ObjectMeta{
			Name: "ocl-exporter", Namespace: Namespace,
			Labels: map[string]string{"app.kubernetes.io/name": "ocl-exporter", "role": "alert-rules"},
		},
		Spec: monitoringv1.PrometheusRuleSpec{Groups: groups},
	}
}

// DashboardConfigMap puts one dashboard JSON file into a ConfigMap the
// OpenShift console shows under Observe > Dashboards.
func DashboardConfigMap(path string) (*corev1.ConfigMap, error) {
	return dashboardConfigMap(path, metav1.ObjectMeta{Namespace: DashboardNamespace, Labels: map[string]string{DashboardLabel: "true"}})
}

// dashboardConfigMap puts one dashboard JSON file into a ConfigMap named
// after it, in meta's namespace with meta's labels and annotations.
func dashboardConfigMap(path string, meta metav1.ObjectMeta) (*corev1.ConfigMap, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if !json.Valid(b) {
		return nil, fmt.Errorf("%s: not valid JSON", path)
	}
	base := filepath.Base(path)
	meta.Name = "ocl-exporter-" + slug(strings.TrimSuffix(base, ".json"))
	meta.Labels["app.kubernetes.io/name"] = "ocl-exporter"
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: meta,
		Data:       map[string]string{base: string(b)},
	}, nil
}

var nonDNS = regexp.MustCompile(`[^a-z0-9]+`)

// slug turns a file name into a DNS-1123 label fragment.
func slug(s string) string {
	return strings.Trim(nonDNS.ReplaceAllString(strings.ToLower(s), "-"), "-")
}

func header(from string) string {
	return "# Code generated by `make bundle` (go run ./hack/bundle) from " + from + ". DO NOT EDIT.\n"
}

func render(obj any, from string) ([]byte, error) {
	b, err := yaml.Marshal(obj)
	if err != nil {
		return nil, err
	}
	// creationTimestamp: null is noise every generated object carries.
	b = bytes.ReplaceAll(b, []byte("  creationTimestamp: null\n"), nil)
	return append([]byte(header(from)), b...), nil
}
