package rulebench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"
)

// basePrefix starts the base's group names in a paired run.
const basePrefix = "base/"

// renameRules renames a rule file's groups, recording rules and alerts as
// a paired run's base, and its selectors of them.
func renameRules(b []byte) ([]byte, error) {
	groups, errs := rulefmt.Parse(b, false, model.UTF8Validation)
	if len(errs) > 0 {
		return nil, fmt.Errorf("parsing: %v", errs)
	}
	recorded, alerts := map[string]bool{}, map[string]bool{}
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			if r.Record != "" {
				recorded[r.Record] = true
			} else {
				alerts[r.Alert] = true
			}
		}
	}
	for i := range groups.Groups {
		g := &groups.Groups[i]
		g.Name = basePrefix + g.Name
		for j := range g.Rules {
			r := &g.Rules[j]
			if r.Record != "" {
				r.Record += ":base"
			}
			if r.Alert != "" {
				r.Alert = "Base" + r.Alert
			}
			expr, err := renameExpr(r.Expr, recorded, alerts)
			if err != nil {
				return nil, fmt.Errorf("%s%s: %w", r.Record, r.Alert, err)
			}
			r.Expr = expr
		}
	}
	return yaml.Marshal(groups)
}

// renameExpr renames, in a PromQL expression, the selectors of recorded
// series and the alertname matchers of ALERTS.
func renameExpr(expr string, recorded, alerts map[string]bool) (string, error) {
	e, err := parser.ParseExpr(expr)
	if err != nil {
		return "", err
	}
	var failed error
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		if recorded[vs.Name] {
			vs.Name += ":base"
		}
		for i, m := range vs.LabelMatchers {
			renamed, err := renameMatcher(m, recorded, alerts)
			if err != nil {
				failed = err
			}
			vs.LabelMatchers[i] = renamed
		}
		return nil
	})
	return e.String(), failed
}

// renameMatcher renames a __name__ matcher of a recorded series (each
// alternative of a regular expression) and an alertname matcher (each
// alternative of a regular expression gets the prefix: "OCL.*" matches
// the base's alerts only as "BaseOCL.*", "A|B" as "BaseA|BaseB").
func renameMatcher(m *labels.Matcher, recorded, alerts map[string]bool) (*labels.Matcher, error) {
	value := m.Value
	switch {
	case m.Name == model.MetricNameLabel && m.Type == labels.MatchRegexp:
		parts := strings.Split(value, "|")
		for i, p := range parts {
			if recorded[p] {
				parts[i] += ":base"
			}
		}
		value = strings.Join(parts, "|")
	case m.Name == model.MetricNameLabel && recorded[value]:
		value += ":base"
	case m.Name == "alertname" && (m.Type == labels.MatchRegexp || m.Type == labels.MatchNotRegexp):
		value = "Base" + strings.ReplaceAll(value, "|", "|Base")
	case m.Name == "alertname" && alerts[value]:
		value = "Base" + value
	default:
		return m, nil
	}
	return labels.NewMatcher(m.Type, m.Name, value)
}

// TestRenameRules: a base's copy of the bundle's rules is valid, names
// nothing the tree's rules name (groups, recorded series, alerts), and
// reads its own recorded series and alerts, not the tree's.
func TestRenameRules(t *testing.T) {
	files, err := filepath.Glob("../../alerts/*rules.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no rule files: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		tree, errs := rulefmt.Parse(b, false, model.UTF8Validation)
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		renamed, err := renameRules(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		base, errs := rulefmt.Parse(renamed, false, model.UTF8Validation)
		if len(errs) > 0 {
			t.Fatalf("%s renamed: %v\n%s", f, errs, renamed)
		}
		for i, g := range base.Groups {
			if g.Name != basePrefix+tree.Groups[i].Name {
				t.Errorf("group %q", g.Name)
			}
			for j, r := range g.Rules {
				want := tree.Groups[i].Rules[j]
				if (want.Record != "" && r.Record != want.Record+":base") || (want.Alert != "" && r.Alert != "Base"+want.Alert) {
					t.Errorf("%s%s renamed %s%s", want.Record, want.Alert, r.Record, r.Alert)
				}
			}
		}
	}
	for expr, want := range map[string]string{
		`sum(pool:ocl_nodes_off_target:count) > 0`:                               `sum(pool:ocl_nodes_off_target:count:base) > 0`,
		`{__name__=~"pool:ocl_nodes_off_target:count|ocl_pool_nodes"}`:           `{__name__=~"pool:ocl_nodes_off_target:count:base|ocl_pool_nodes"}`,
		`count(ALERTS{alertname=~"OCL.*",alertstate="firing"})`:                  `count(ALERTS{alertname=~"BaseOCL.*",alertstate="firing"})`,
		`ALERTS{alertname="OCLPoolDegraded"} unless ocl_pool_nodes`:              `ALERTS{alertname="BaseOCLPoolDegraded"} unless ocl_pool_nodes`,
		`ALERTS_FOR_STATE{alertname=~"OCLPoolDegraded|OCLRolloutStalled"} * NaN`: `ALERTS_FOR_STATE{alertname=~"BaseOCLPoolDegraded|BaseOCLRolloutStalled"} * NaN`,
		`rate(pool:ocl_nodes_off_target:count[5m]) and on (pool) ocl_pool_nodes`: `rate(pool:ocl_nodes_off_target:count:base[5m]) and on (pool) ocl_pool_nodes`,
	} {
		got, err := renameExpr(expr, map[string]bool{"pool:ocl_nodes_off_target:count": true}, map[string]bool{"OCLPoolDegraded": true})
		if err != nil {
			t.Fatal(err)
		}
		w, _ := parser.ParseExpr(want)
		if got != w.String() {
			t.Errorf("%s\n got %s\nwant %s", expr, got, w)
		}
	}
}
