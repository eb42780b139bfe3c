package diagnose

import (
	"fmt"
	"slices"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"

	"github.com/ocl-exporter/ocl_exporter/classify"
)

// nodeFailureFamily is the series a node failure's class is read from.
const nodeFailureFamily = "node_update_failure_class"

// TestNodeFailureRunbooksAreTheRules: for every class, a node failing with
// it links the runbook of the one alert whose rule pages for it, read
// from the class matchers of the rules that select the failure's class
// series (an exclusion, the right side of an unless, aside). No scenario
// need hold the class: a class split off OCLNodeUpdateFailing into an
// alert of its own fails here until diagnose links that alert.
func TestNodeFailureRunbooksAreTheRules(t *testing.T) {
	exprs := map[string]string{}
	for name, r := range rules(t) {
		if r.Alert != "" {
			exprs[name] = r.Expr
		}
	}
	for _, p := range classRunbookProblems(exprs, spec(CheckNodes).Alerts, nodeFailureAlert) {
		t.Error(p)
	}
}

// TestClassRunbookProblemsRejects makes sure the check above can fail: a
// class split off into an alert diagnose does not link, a class no alert
// pages for, a class two alerts page for.
func TestClassRunbookProblemsRejects(t *testing.T) {
	general := func(classify.Class) string { return alertNodeUpdateFailing }
	split := map[string]string{
		alertNodeUpdateFailing: `node_update_failure_class{class!="drain_failed"} == 1`,
		"OCLNodeDrainFailing":  `node_update_failure_class{class="drain_failed"} == 1 unless on (node) node_update_failure_class{class="unknown"}`,
	}
	checkAlerts := []string{alertNodeUpdateFailing, "OCLNodeDrainFailing"}
	if ps := classRunbookProblems(split, checkAlerts, general); len(ps) != 1 {
		t.Errorf("a class split off, linked to the old runbook: %q, want one problem", ps)
	}
	chosen := func(c classify.Class) string {
		if c == classify.DrainFailed {
			return "OCLNodeDrainFailing"
		}
		return alertNodeUpdateFailing
	}
	if ps := classRunbookProblems(split, checkAlerts, chosen); len(ps) != 0 {
		t.Errorf("a class split off and linked: %q, want none", ps)
	}
	if ps := classRunbookProblems(map[string]string{alertNodeUpdateFailing: `node_update_failure_class{class=~"drain_failed|unknown"} == 1`}, checkAlerts, general); len(ps) != len(classify.Classes())-2 {
		t.Errorf("classes no alert pages for: %d problems, want %d", len(ps), len(classify.Classes())-2)
	}
	twice := map[string]string{alertNodeUpdateFailing: `node_update_failure_class == 1`, "OCLNodeDrainFailing": `node_update_failure_class{class="drain_failed"}`}
	if ps := classRunbookProblems(twice, checkAlerts, chosen); len(ps) != 1 {
		t.Errorf("a class two alerts page for: %q, want one problem", ps)
	}
}

// classRunbookProblems names each class for which the alert chosen links
// another runbook than the alert of exprs (alert -> expression) that
// pages for it, or that no alert of the check (checkAlerts) or more than
// one pages for.
func classRunbookProblems(exprs map[string]string, checkAlerts []string, chosen func(classify.Class) string) []string {
	var out []string
	for _, c := range classify.Classes() {
		var paging []string
		for alert, expr := range exprs {
			takes, err := selectsClass(expr, nodeFailureFamily, string(c))
			if err != nil {
				out = append(out, fmt.Sprintf("%s: %v", alert, err))
			}
			if takes {
				paging = append(paging, alert)
			}
		}
		slices.Sort(paging)
		switch got := chosen(c); {
		case len(paging) != 1:
			out = append(out, fmt.Sprintf("class %s: the alerts %v page for a node failing with it, want one (alerts/*rules.yaml: one rule takes the class, the others exclude it)", c, paging))
		case !slices.Contains(checkAlerts, paging[0]):
			out = append(out, fmt.Sprintf("class %s: %s pages for a node failing with it; add it to the Alerts of check %s (diagnose/checks.go)", c, paging[0], CheckNodes))
		case got != paging[0]:
			out = append(out, fmt.Sprintf("class %s: %s pages for a node failing with it, diagnose links %s: add the class to nodeFailureAlerts (diagnose/stage3.go)", c, paging[0], got))
		}
	}
	return out
}

// selectsClass reports whether expr selects family for class other than
// to exclude it (under the right side of an unless).
func selectsClass(expr, family, class string) (bool, error) {
	e, err := parser.ParseExpr(expr)
	if err != nil {
		return false, err
	}
	takes := false
	parser.Inspect(e, func(n parser.Node, path []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok || vs.Name != family || excluded(path, n) {
			return nil
		}
		for _, m := range vs.LabelMatchers {
			if m.Name == "class" && !m.Matches(class) {
				return nil
			}
		}
		takes = true
		return nil
	})
	return takes, nil
}

// excluded reports whether n, reached through path, lies on the right
// side of an unless.
func excluded(path []parser.Node, n parser.Node) bool {
	for i, p := range path {
		child := n
		if i+1 < len(path) {
			child = path[i+1]
		}
		if b, ok := p.(*parser.BinaryExpr); ok && b.Op == parser.LUNLESS && child == b.RHS {
			return true
		}
	}
	return false
}
