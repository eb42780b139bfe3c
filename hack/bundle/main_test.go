package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/ocl-exporter/ocl_exporter/runbooks"
)

// TestGeneratedFilesAreCurrent keeps one source of truth: the committed
// generated directories of deploy/ must be exactly what `make bundle`
// writes from alerts/ and dashboards/, the runbooks linked on main as
// alerts/ links them (`make manifests` and `make dist` pin a ref).
func TestGeneratedFilesAreCurrent(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, o := range outputs {
		want, err := o.generate(root, runbooks.Main)
		if err != nil {
			t.Fatal(err)
		}
		entries, err := os.ReadDir(filepath.Join(root, o.dir))
		if err != nil {
			t.Fatalf("%v; run `make generate`", err)
		}
		got := map[string][]byte{}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(root, o.dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			got[e.Name()] = b
		}
		for name, b := range want {
			if g, ok := got[name]; !ok {
				t.Errorf("%s/%s is missing; run `make generate`", o.dir, name)
			} else if !bytes.Equal(g, b) {
				t.Errorf("%s/%s differs from what alerts/ and dashboards/ generate; run `make generate`", o.dir, name)
			}
		}
		for name := range got {
			if _, ok := want[name]; !ok {
				t.Errorf("%s/%s is stale: nothing generates it; run `make generate`", o.dir, name)
			}
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

const rulesA = `groups:
  - name: ocl-build
    rules:
      - alert: OCLBuildFailed
        expr: |
          max by (machineosbuild, pool) (mosb_build_phase{phase="Failed"}) == 1
        for: 5m
        labels:
          severity: warning
          namespace: openshift-machine-config-operator
        annotations:
          summary: A MachineOSBuild failed.
          description: 'Build {{ $labels.machineosbuild }} failed.'
          runbook_url: https://example.com/runbooks/OCLBuildFailed.md
`

const rulesB = `groups:
  - name: ocl-rollout
    interval: 1m
    rules:
      - record: ocl:node_layered_image_mismatch:sum
        expr: sum by (pool) (node_layered_image_mismatch)
`

func TestGenerateFromNothing(t *testing.T) {
	files, err := GenerateWith(t.TempDir(), testBase)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || !strings.Contains(string(files["kustomization.yaml"]), "resources: []") {
		t.Errorf("no alerts and no dashboards: want an empty kustomization only, got %v", keys(files))
	}
}

func TestGenerateRulesAndDashboards(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "alerts", "b-rules.yaml"), rulesB)
	writeFile(t, filepath.Join(root, "alerts", "a-rules.yaml"), rulesA)
	writeFile(t, filepath.Join(root, "alerts", "tests", "a-test.yaml"), "rule_files: [../a-rules.yaml]\n")
	writeFile(t, filepath.Join(root, "dashboards", "OCL Overview.json"), `{"title": "OCL overview", "rows": []}`)
	writeFile(t, filepath.Join(root, "dashboards", "ocl-builds.json"), `{"title": "OCL builds", "rows": []}`)

	files, err := GenerateWith(root, testBase)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"dashboard-ocl-builds.yaml", "dashboard-ocl-overview.yaml", "kustomization.yaml", "prometheusrule.yaml"}
	if got := keys(files); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("files %v, want %v", got, want)
	}

	var pr monitoringv1.PrometheusRule
	if err := yaml.UnmarshalStrict(files["prometheusrule.yaml"], &pr); err != nil {
		t.Fatal(err)
	}
	if pr.Kind != "PrometheusRule" || pr.Namespace != Namespace || len(pr.Spec.Groups) != 2 ||
		pr.Spec.Groups[0].Name != "ocl-build" || pr.Spec.Groups[1].Name != "ocl-rollout" {
		t.Fatalf("PrometheusRule %+v: want groups from a-rules.yaml then b-rules.yaml", pr)
	}
	r := pr.Spec.Groups[0].Rules[0]
	if r.Alert != "OCLBuildFailed" || !strings.Contains(r.Expr.String(), `mosb_build_phase{phase="Failed"}`) ||
		r.For == nil || *r.For != "5m" || r.Labels["severity"] != "warning" || r.Annotations["summary"] != "A MachineOSBuild failed." {
		t.Errorf("rule not carried over: %+v", r)
	}
	if !strings.HasPrefix(string(files["prometheusrule.yaml"]), "# Code generated") {
		t.Error("generated files start with a DO NOT EDIT header")
	}

	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict(files["dashboard-ocl-overview.yaml"], &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Name != "ocl-exporter-ocl-overview" || cm.Namespace != DashboardNamespace || cm.Labels[DashboardLabel] != "true" ||
		cm.Data["OCL Overview.json"] != `{"title": "OCL overview", "rows": []}` {
		t.Errorf("dashboard ConfigMap %+v", cm)
	}
	k := string(files["kustomization.yaml"])
	for _, name := range want[:2] {
		if !strings.Contains(k, "  - "+name+"\n") {
			t.Errorf("kustomization.yaml does not list %s:\n%s", name, k)
		}
	}
}

func TestGenerateRejectsWhatTheCRDWouldDrop(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"unknown rule field": {"alerts/x-rules.yaml": "groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: up\n        severity: warning\n"},
		"duplicate group":    {"alerts/a-rules.yaml": rulesA, "alerts/b-rules.yaml": rulesA},
		"invalid dashboard":  {"dashboards/x.json": "{"},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			for p, c := range files {
				writeFile(t, filepath.Join(root, p), c)
			}
			if _, err := GenerateWith(root, testBase); err == nil {
				t.Error("want an error")
			}
		})
	}
}

func TestWriteRemovesStaleFiles(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, GeneratedDir, "dashboard-gone.yaml"), "stale")
	writeFile(t, filepath.Join(root, "alerts", "a-rules.yaml"), rulesA)
	if err := write(root, testBase); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Join(root, GeneratedDir))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "kustomization.yaml prometheusrule.yaml" {
		t.Errorf("deploy/base/generated holds %v", names)
	}
}

func keys(m map[string][]byte) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	sort.Strings(k)
	return k
}

// testBase is the runbook base of the tests that generate into a
// temporary directory.
const testBase = "https://runbooks.test.example/ocl/"

func committedAlerts(t *testing.T, root string) []monitoringv1.Rule {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, GeneratedDir, ruleFile))
	if err != nil {
		t.Fatal(err)
	}
	var pr monitoringv1.PrometheusRule
	if err := yaml.Unmarshal(b, &pr); err != nil {
		t.Fatal(err)
	}
	var alerts []monitoringv1.Rule
	for _, g := range pr.Spec.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				alerts = append(alerts, r)
			}
		}
	}
	if len(alerts) == 0 {
		t.Fatal("the PrometheusRule has no alerts")
	}
	return alerts
}

// reachable reports whether ref is a tag or a commit of HEAD's history.
// An object merely present is not enough: a local clone copies commits
// that were amended or left on a deleted branch, and a clone from GitHub
// does not have them.
func reachable(root, ref string) bool {
	if _, err := git(root, "rev-parse", "--verify", "--quiet", "refs/tags/"+ref); err == nil {
		return true
	}
	_, err := git(root, "merge-base", "--is-ancestor", ref, "HEAD")
	return err == nil
}

// repositoryLink is a link into this repository at a ref: blob/<ref>/<path>.
var repositoryLink = regexp.MustCompile(regexp.QuoteMeta(runbooks.Canonical) + `/blob/([^/\s"']+)/([^\s"'#?)]+)`)

// TestGeneratedLinksResolve: the committed bundle links runbooks that
// exist. Every alert of the committed PrometheusRule links its own runbook
// on main, as alerts/ does (`make manifests` and `make dist` pin a ref);
// every link into this repository in deploy/ and dashboards/ names main
// and a file HEAD holds (so main holds it once this commit lands), or a
// ref this clone has (a tag, or a commit of its history) and a file at
// that ref.
func TestGeneratedLinksResolve(t *testing.T) {
	root := filepath.Join("..", "..")
	if _, err := git(root, "rev-parse", "--git-dir"); err != nil {
		t.Skipf("not a git checkout, so the links' refs cannot be checked: %v", err)
	}
	for _, r := range committedAlerts(t, root) {
		if u, want := r.Annotations["runbook_url"], runbooks.Main+r.Alert+".md"; u != want {
			t.Errorf("%s: runbook_url %q, want %q (make generate)", r.Alert, u, want)
		}
	}
	checked := map[string]bool{}
	for _, dir := range []string{"deploy", "dashboards"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range repositoryLink.FindAllStringSubmatch(string(b), -1) {
				ref, file := m[1], m[2]
				if checked[ref+":"+file] {
					continue
				}
				checked[ref+":"+file] = true
				at := ref
				if ref == "main" {
					at = "HEAD"
				} else if !reachable(root, ref) {
					if !checked[ref] {
						t.Errorf("%s links %s: ref %q is neither a tag nor a commit of HEAD's history (amended, or left on another branch): link main", path, m[0], ref)
					}
					checked[ref] = true
					continue
				}
				if _, err := git(root, "cat-file", "-e", at+":"+file); err != nil {
					t.Errorf("%s links %s: %s does not exist at %s; commit it", path, m[0], file, ref)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(checked) == 0 {
		t.Fatal("no link into the repository found in deploy/ or dashboards/")
	}
}

func TestRunbookBaseIsConfigurable(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "alerts", "a-rules.yaml"), strings.ReplaceAll(rulesA, "https://example.com/runbooks/", runbooks.Main))
	files, err := GenerateWith(root, "https://runbooks.internal.example/ocl/")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(files[ruleFile]), "runbook_url: https://runbooks.internal.example/ocl/OCLBuildFailed.md") {
		t.Errorf("runbook_url not moved to the configured base:\n%s", files[ruleFile])
	}
}

// TestCheckedOutRef: a commit, or the tag at HEAD once there is one.
func TestCheckedOutRef(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		out, err := git(dir, append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		if err != nil {
			t.Skipf("git: %v", err)
		}
		return out
	}
	if _, err := CheckedOutRef(dir); err == nil {
		t.Error("an empty directory has a ref")
	}
	run("init", "-q")
	run("commit", "-q", "--allow-empty", "-m", "first")
	head := run("rev-parse", "HEAD")
	if ref, err := CheckedOutRef(dir); err != nil || ref != head {
		t.Errorf("untagged: %q, %v; want the commit %s", ref, err, head)
	}
	run("tag", "v1.2.3")
	if ref, err := CheckedOutRef(dir); err != nil || ref != "v1.2.3" {
		t.Errorf("tagged: %q, %v; want v1.2.3", ref, err)
	}
}
