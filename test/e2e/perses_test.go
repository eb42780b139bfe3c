//go:build e2e

package e2e

// The Perses overlay on the Cluster Observability Operator's CRDs, and
// every query of its dashboards asked of a real Prometheus.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ocl-exporter/ocl_exporter/test/cluster"
)

// The Cluster Observability Operator's module (rhobs/observability-
// operator), pinned at a release tag by hack/observability-operator, and
// the CRDs of its deploy/ the overlay's objects and uiplugin.yaml need.
const (
	cooModule   = "github.com/rhobs/observability-operator"
	cooToolsDir = repoRoot + "/hack/observability-operator"
)

var cooCRDs = []string{
	"deploy/perses/crds/perses.dev_persesdashboards.yaml",
	"deploy/perses/crds/perses.dev_persesdatasources.yaml",
	"deploy/crds/common/observability.openshift.io_uiplugins.yaml",
}

var persesOverlay = filepath.Join(repoRoot, "deploy", "overlays", "perses")

// persesScenarios are the fixtures the dashboards' queries are asked
// about: together they give every query data, except persesFaultOnly.
var persesScenarios = []string{
	"seed004-build-failed",       // a failed build, its class and excerpt
	"stage2-pod-unschedulable",   // a running build whose pod cannot run
	"seed002-manifest-unknown",   // nodes failing to pull the image
	"stage3-rollout-in-progress", // nodes working through a rollout
	"stage1-push-spec-uppercase", // the operator Degraded
}

// persesFaultOnly are the panels (dashboard/title) that have data only
// while the exporter cannot read the cluster, which no fixture plays
// (the fault tests of this suite make those series).
var persesFaultOnly = map[string]string{
	"ocl-overview/Resources the exporter cannot read": "a resource the exporter cannot list",
}

// TestPersesOverlay installs the operator's perses.dev and UIPlugin CRDs
// server-side; `make manifests BUNDLE=deploy/overlays/perses` passes a
// strict dry run; the overlay's PersesDatasource and PersesDashboards are
// created under strict field validation (the rest of the overlay, the
// bundle the suite applied, and uiplugin.yaml pass a strict dry run) and
// the dashboards read back as the API server stores them. Then, for each of
// persesScenarios, a Prometheus scraping the exporter with alerts/'s rules
// answers every variable and every panel query of those stored dashboards,
// with the variables as Perses fills them: no query may fail, each must
// return data in some scenario (persesFaultOnly aside).
func TestPersesOverlay(t *testing.T) {
	installCOOCRDs(t)
	t.Run("make manifests", func(t *testing.T) { manifestsApply(t, "deploy/overlays/perses") })
	stored := applyPersesOverlay(t)
	var qs []persesQuery
	for _, d := range stored {
		qs = append(qs, persesQueries(t, d)...)
	}
	if len(qs) == 0 {
		t.Fatal("the stored dashboards have no query")
	}
	withData := map[string]bool{}
	for _, name := range persesScenarios {
		t.Run(name, func(t *testing.T) {
			objs, _ := play(t, scenario(name))
			m := startMonitoring(t)
			waitRulesEvaluated(t, m.promURL)
			askPerses(t, m.promURL, stored, qs, withData)
			removeAndExpectBaseline(t, nil, objs, settle)
		})
	}
	if t.Failed() {
		return
	}
	for _, q := range qs {
		_, faultOnly := persesFaultOnly[q.panel]
		switch {
		case !withData[q.where] && !faultOnly:
			t.Errorf("%s: no data in any of %v", q.where, persesScenarios)
		case withData[q.where] && faultOnly:
			t.Errorf("%s: has data in a scenario; take it out of persesFaultOnly", q.where)
		}
	}
	t.Logf("%d Perses queries of %d dashboards asked in %d scenarios", len(qs), len(stored), len(persesScenarios))
}

// installCOOCRDs applies cooCRDs from the pinned module version,
// server-side, and deletes them when the test ends.
func installCOOCRDs(t *testing.T) {
	t.Helper()
	dir, err := moduleDir(cooToolsDir, cooModule)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range cooCRDs {
		files = append(files, filepath.Join(dir, f))
	}
	crds, err := applyCRDs(t.Context(), files)
	t.Cleanup(func() {
		for _, crd := range crds {
			_ = env.kube.Remove(context.Background(), crd)
		}
	})
	if err != nil {
		t.Fatalf("%s: %v", cooModule, err)
	}
}

// applyPersesOverlay creates the overlay's perses.dev objects (deleted
// when the test ends), dry-runs the rest and uiplugin.yaml, and returns
// the PersesDashboards as stored, which must be what was written.
func applyPersesOverlay(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	objs, err := kustomizeBuild(persesOverlay)
	if err != nil {
		t.Fatal(err)
	}
	plugin, err := cluster.LoadFile(filepath.Join(persesOverlay, "uiplugin.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var stored []*unstructured.Unstructured
	for _, u := range append(objs, plugin...) {
		if u.GroupVersionKind().Group != "perses.dev" {
			if err := env.kube.Apply(t.Context(), u, true); err != nil {
				t.Errorf("%s %s: %v", u.GetKind(), objectName(u), err)
			}
			continue
		}
		if err := env.kube.Create(t.Context(), u); err != nil {
			t.Fatalf("the API server refuses %s %s: %v", u.GetKind(), objectName(u), err)
		}
		t.Cleanup(func() { _ = env.kube.Remove(context.Background(), u) })
		ri, err := env.kube.Resource(u)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ri.Get(t.Context(), u.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(asJSON(t, u.Object["spec"]), asJSON(t, got.Object["spec"])); d != "" {
			t.Errorf("%s %s: the API server stores another spec than the overlay's (-overlay +stored):\n%s", u.GetKind(), objectName(u), d)
		}
		if u.GetKind() == "PersesDashboard" {
			stored = append(stored, got)
		}
	}
	return stored
}

// asJSON is v as encoding/json reads it back: the API server answers
// integers where the YAML decoder gave floats.
func asJSON(t *testing.T, v any) any {
	t.Helper()
	var out any
	if err := json.Unmarshal(mustJSON(t, v), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// persesQuery is one panel query of a stored dashboard.
type persesQuery struct {
	where, panel string // for messages; panel is uid/title
	expr         string
	table        bool // the Table panel asks an instant query, the others a range
}

func persesQueries(t *testing.T, d *unstructured.Unstructured) []persesQuery {
	t.Helper()
	panels, _, _ := unstructured.NestedMap(d.Object, "spec", "config", "panels")
	var out []persesQuery
	for _, id := range slices.Sorted(maps.Keys(panels)) {
		spec, _, _ := unstructured.NestedMap(panels[id].(map[string]any), "spec")
		title, _, _ := unstructured.NestedString(spec, "display", "name")
		kind, _, _ := unstructured.NestedString(spec, "plugin", "kind")
		queries, _, _ := unstructured.NestedSlice(spec, "queries")
		for i, q := range queries {
			expr, _, _ := unstructured.NestedString(q.(map[string]any), "spec", "plugin", "spec", "query")
			out = append(out, persesQuery{
				where: fmt.Sprintf("%s %q query %d", d.GetName(), title, i), panel: d.GetName() + "/" + title,
				expr: expr, table: kind == "Table",
			})
		}
	}
	return out
}

// waitRulesEvaluated waits until the Prometheus has scraped the exporter
// a few times and evaluated the recording rules the dashboards read.
func waitRulesEvaluated(t *testing.T, promURL string) {
	t.Helper()
	poll(t, time.Minute, "Prometheus has not scraped and evaluated the rules", func() string {
		ls, _, err := query(promURL, `count_over_time(ocl_exporter_build_info[1m]) > 5 and on () count(ocl:build_max_duration_seconds) > 0`)
		if err != nil {
			return err.Error()
		}
		if len(ls) == 0 {
			return "not yet"
		}
		return ""
	})
}

// askPerses fills each dashboard's variables as Perses does, asks every
// query with the pool variable at All and at each pool it lists, and
// records in withData the queries that returned something.
func askPerses(t *testing.T, promURL string, dashboards []*unstructured.Unstructured, qs []persesQuery, withData map[string]bool) {
	t.Helper()
	end := time.Now()
	for _, d := range dashboards {
		vars := persesVariables(t, promURL, d)
		pools := vars["pool"]
		for _, q := range qs {
			if !strings.HasPrefix(q.where, d.GetName()+" ") {
				continue
			}
			for _, pool := range append([]string{".*"}, pools...) {
				values := map[string]string{"cluster": "", "pool": pool, "__rate_interval": "1m", "__interval": "5s", "__range": "2m"}
				if pool != ".*" {
					values["pool"] = "(" + pool + ")" // one value of a multi-value variable
				}
				expr, err := persesInterpolate(q.expr, values)
				if err != nil {
					t.Errorf("%s: %v", q.where, err)
					continue
				}
				n, err := askPrometheus(promURL, expr, q.table, end)
				if err != nil {
					t.Errorf("%s, pool %s: %v\n%s", q.where, pool, err, expr)
				}
				withData[q.where] = withData[q.where] || n > 0
			}
		}
	}
}

// persesVariables lists each variable's values as the Prometheus plugin's
// PrometheusLabelValuesVariable does (/api/v1/label/NAME/values with the
// matchers, the variables before it filled in). The cluster variable lists
// nothing on one cluster, whose series have no cluster label: Perses then
// fills in "" (resolveDefaultValue), and cluster=~"" matches them.
func persesVariables(t *testing.T, promURL string, d *unstructured.Unstructured) map[string][]string {
	t.Helper()
	vars, _, _ := unstructured.NestedSlice(d.Object, "spec", "config", "variables")
	out := map[string][]string{}
	for _, v := range vars {
		spec, _, _ := unstructured.NestedMap(v.(map[string]any), "spec")
		name, _, _ := unstructured.NestedString(spec, "name")
		label, _, _ := unstructured.NestedString(spec, "plugin", "spec", "labelName")
		matchers, _, _ := unstructured.NestedStringSlice(spec, "plugin", "spec", "matchers")
		q := url.Values{}
		for _, m := range matchers {
			filled, err := persesInterpolate(m, map[string]string{"cluster": ""})
			if err != nil {
				t.Fatalf("%s: variable %s: %v", d.GetName(), name, err)
			}
			q.Add("match[]", filled)
		}
		var values []string
		if err := promGet(promURL, "/api/v1/label/"+label+"/values", q, &values); err != nil {
			t.Errorf("%s: variable %s: %v", d.GetName(), name, err)
		}
		out[name] = values
	}
	if len(out["cluster"]) != 0 {
		t.Errorf("%s: the cluster variable lists %v on one cluster", d.GetName(), out["cluster"])
	}
	return out
}

var persesVariable = regexp.MustCompile(`\$\{(\w+)\}|\$(\w+)`)

// persesInterpolate replaces $name and ${name} with values, failing on a
// variable neither the dashboard nor Perses' Prometheus plugin defines.
func persesInterpolate(expr string, values map[string]string) (string, error) {
	var err error
	out := persesVariable.ReplaceAllStringFunc(expr, func(v string) string {
		m := persesVariable.FindStringSubmatch(v)
		name := m[1] + m[2]
		s, ok := values[name]
		if !ok {
			err = fmt.Errorf("unknown variable %s in %s", v, expr)
		}
		return s
	})
	return out, err
}

// askPrometheus asks expr as an instant query at end, or over the last two
// minutes at a 5s step, and returns how many series it answered.
func askPrometheus(promURL, expr string, instant bool, end time.Time) (int, error) {
	var data struct {
		Result []any `json:"result"`
	}
	if instant {
		err := promGet(promURL, "/api/v1/query", url.Values{"query": {expr}, "time": {unix(end)}}, &data)
		return len(data.Result), err
	}
	err := promGet(promURL, "/api/v1/query_range", url.Values{
		"query": {expr}, "start": {unix(end.Add(-2 * time.Minute))}, "end": {unix(end)}, "step": {"5"},
	}, &data)
	return len(data.Result), err
}

func unix(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }
