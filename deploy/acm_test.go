package deploy_test

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/ocl-exporter/ocl_exporter/dashboards"
)

// acmAllowlist is the shape ACM's metrics collector reads from
// metrics_list.yaml (multicluster-observability-operator's
// MetricsAllowlist, the fields this bundle uses).
type acmAllowlist struct {
	Names   []string `json:"names"`
	Matches []string `json:"matches"`
}

// TestACMAllowlistIsWhatTheDashboardsRead keeps deploy/acm/'s allowlist in
// step with the dashboards: the metrics and recording rules it lets ACM
// federate to the hub are exactly those the dashboards' queries and
// variables read, for the platform and the user-workload Prometheus alike.
// A metric added to a dashboard and not to the allowlist would show no
// data on the hub; one left in the allowlist after a dashboard dropped it
// costs every managed cluster for nothing.
func TestACMAllowlistIsWhatTheDashboardsRead(t *testing.T) {
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join(repoRoot, "deploy", "acm"))
	if err != nil {
		t.Fatalf("kustomize build deploy/acm: %v", err)
	}
	var cm *corev1.ConfigMap
	for _, r := range m.Resources() {
		if r.GetKind() != "ConfigMap" || r.GetName() != "observability-metrics-custom-allowlist" {
			continue
		}
		y, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		cm = &corev1.ConfigMap{}
		if err := sigsyaml.UnmarshalStrict(y, cm); err != nil {
			t.Fatal(err)
		}
	}
	if cm == nil {
		t.Fatal("deploy/acm has no ConfigMap observability-metrics-custom-allowlist")
	}
	if cm.Namespace != "open-cluster-management-observability" {
		t.Errorf("the allowlist is in namespace %q; ACM reads it from open-cluster-management-observability on the hub", cm.Namespace)
	}
	want := dashboardMetrics(t)
	for _, key := range []string{"metrics_list.yaml", "uwl_metrics_list.yaml"} {
		var l acmAllowlist
		// Strict: a misspelt key (name: for names:) is silently ignored
		// by ACM, and would be here.
		if err := sigsyaml.UnmarshalStrict([]byte(cm.Data[key]), &l); err != nil {
			t.Errorf("%s: %v", key, err)
			continue
		}
		got := slices.Clone(l.Names)
		for _, match := range l.Matches {
			ms, err := parser.ParseMetricSelector("{" + match + "}")
			if err != nil {
				t.Errorf("%s: matches: %q: %v", key, match, err)
				continue
			}
			name := ""
			for _, m := range ms {
				if m.Name == model.MetricNameLabel && m.Type == labels.MatchEqual {
					name = m.Value
				}
			}
			if name == "" {
				t.Errorf(`%s: matches: %q selects no single metric by __name__="..."`, key, match)
			}
			got = append(got, name)
		}
		slices.Sort(got)
		if dup := slices.Compact(slices.Clone(got)); len(dup) != len(got) {
			t.Errorf("%s lists a metric twice: %v", key, got)
		}
		for _, n := range want {
			if !slices.Contains(got, n) {
				t.Errorf("%s: %s is read by a dashboard but not allowlisted: the hub shows no data for it", key, n)
			}
		}
		for _, n := range got {
			if !slices.Contains(want, n) {
				t.Errorf("%s: %s is allowlisted but no dashboard reads it", key, n)
			}
		}
	}
}

// dashboardMetrics are the metric names in every dashboard's queries and
// variables (dashboards.Files is what dashboards/ holds: a test there
// keeps them equal).
func dashboardMetrics(t *testing.T) []string {
	t.Helper()
	files, err := dashboards.Files()
	if err != nil {
		t.Fatal(err)
	}
	// Variables become something that parses: an interval for Grafana's
	// built-ins ($__rate_interval), a regex for the others.
	variable := regexp.MustCompile(`\$\{?(\w+)\}?`)
	stand := func(v string) string {
		if regexp.MustCompile(`^\$\{?__`).MatchString(v) {
			return "5m"
		}
		return ".*"
	}
	labelValues := regexp.MustCompile(`^label_values\((.*), \w+\)$`)
	set := map[string]bool{}
	for f, b := range files {
		var d struct {
			Panels []struct {
				Targets []struct {
					Expr string `json:"expr"`
				} `json:"targets"`
			} `json:"panels"`
			Templating struct {
				List []struct {
					Query string `json:"query"`
				} `json:"list"`
			} `json:"templating"`
		}
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var exprs []string
		for _, p := range d.Panels {
			for _, tg := range p.Targets {
				exprs = append(exprs, tg.Expr)
			}
		}
		for _, v := range d.Templating.List {
			if m := labelValues.FindStringSubmatch(v.Query); m != nil {
				exprs = append(exprs, m[1])
			}
		}
		for _, e := range exprs {
			root, err := parser.ParseExpr(variable.ReplaceAllStringFunc(e, stand))
			if err != nil {
				t.Fatalf("%s: %q: %v", f, e, err)
			}
			parser.Inspect(root, func(n parser.Node, _ []parser.Node) error {
				if vs, ok := n.(*parser.VectorSelector); ok {
					set[vs.Name] = true
				}
				return nil
			})
		}
	}
	if len(set) == 0 {
		t.Fatal("no metric in dashboards/")
	}
	var out []string
	for n := range set {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
