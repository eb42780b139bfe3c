package alerts

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
)

// identityLabels are the labels an alert may carry from its expression:
// each names the object or the cause of one problem and keeps its value
// while the problem lasts. Free text (an excerpt, a message, an image
// reference a user may edit) changes while the cause stays the same, and a
// changed label set is a new alert: the page resolves, waits out its for
// again and pages anew. Such text goes in the description, read with a
// query template from the _info series (docs/alerts.md, "Alert identity").
var identityLabels = []string{
	"machineosconfig", "machineosbuild", "pool", "node", // objects
	"field", "secret", // a MachineOSConfig's secret reference
	"resource",            // a watched resource (closed set)
	"class",               // the parsed cause (closed set)
	"reason", "condition", // condition reasons and types the MCO writes from fixed sets
}

// targetLabel stands for the scrape target's labels (pod, instance, job),
// which every alert aggregates away so that two replicas give one alert.
const targetLabel = "<scrape target labels>"

// outputLabels returns the label names the result of e can carry, given
// the labels of every metric and recording rule. It follows PromQL's
// rules for aggregations and vector matching; functions keep their vector
// argument's labels.
func outputLabels(e parser.Expr, metrics map[string][]string) ([]string, error) {
	switch n := e.(type) {
	case *parser.NumberLiteral, *parser.StringLiteral:
		return nil, nil
	case *parser.ParenExpr:
		return outputLabels(n.Expr, metrics)
	case *parser.UnaryExpr:
		return outputLabels(n.Expr, metrics)
	case *parser.StepInvariantExpr:
		return outputLabels(n.Expr, metrics)
	case *parser.MatrixSelector:
		return outputLabels(n.VectorSelector, metrics)
	case *parser.SubqueryExpr:
		return outputLabels(n.Expr, metrics)
	case *parser.VectorSelector:
		names, err := selectorNames(n)
		if err != nil {
			return nil, err
		}
		var out []string
		for _, name := range names {
			labels, ok := metrics[name]
			if !ok {
				return nil, fmt.Errorf("%s: labels unknown", name)
			}
			out = union(out, labels)
		}
		return out, nil
	case *parser.AggregateExpr:
		switch {
		case n.Op == parser.TOPK || n.Op == parser.BOTTOMK || n.Op == parser.LIMITK || n.Op == parser.LIMIT_RATIO:
			return outputLabels(n.Expr, metrics) // these select samples, labels kept
		case n.Without:
			return nil, fmt.Errorf("%s without (...): name the labels kept with by (...)", n.Op)
		}
		return n.Grouping, nil
	case *parser.Call:
		switch n.Func.Name {
		case "absent", "absent_over_time":
			// Labels from the selector's equality matchers: static text.
			return nil, nil
		case "label_replace", "label_join":
			return nil, fmt.Errorf("%s: a label computed from values is not an identity", n.Func.Name)
		}
		var out []string
		for _, a := range n.Args {
			if a.Type() == parser.ValueTypeVector || a.Type() == parser.ValueTypeMatrix {
				l, err := outputLabels(a, metrics)
				if err != nil {
					return nil, err
				}
				out = union(out, l)
			}
		}
		if n.Func.ReturnType != parser.ValueTypeVector {
			return nil, nil
		}
		return out, nil
	case *parser.BinaryExpr:
		return binaryLabels(n, metrics)
	}
	return nil, fmt.Errorf("%T: not handled by the identity check", e)
}

func binaryLabels(n *parser.BinaryExpr, metrics map[string][]string) ([]string, error) {
	lhs, err := outputLabels(n.LHS, metrics)
	if err != nil {
		return nil, err
	}
	rhs, err := outputLabels(n.RHS, metrics)
	if err != nil {
		return nil, err
	}
	lv, rv := n.LHS.Type() == parser.ValueTypeVector, n.RHS.Type() == parser.ValueTypeVector
	switch {
	case !lv && !rv:
		return nil, nil
	case !rv:
		return lhs, nil
	case !lv:
		return rhs, nil
	}
	m := n.VectorMatching
	switch {
	case n.Op == parser.LAND || n.Op == parser.LUNLESS:
		return lhs, nil
	case n.Op == parser.LOR:
		return union(lhs, rhs), nil
	case m != nil && m.Card == parser.CardManyToOne:
		return union(lhs, m.Include), nil
	case m != nil && m.Card == parser.CardOneToMany:
		return union(rhs, m.Include), nil
	case m != nil && m.On:
		return m.MatchingLabels, nil
	case m != nil:
		return slices.DeleteFunc(slices.Clone(lhs), func(l string) bool { return slices.Contains(m.MatchingLabels, l) }), nil
	}
	return lhs, nil
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, l := range b {
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}

// labelSources are the label names of every documented metric (plus the
// scrape target's), up, and every recording rule's result.
func labelSources(t *testing.T) map[string][]string {
	t.Helper()
	// ALERTS_FOR_STATE and ALERTS carry an alert's labels, its name and
	// static labels among them: an expression must aggregate it to its own.
	forState := append([]string{"alertname", "namespace", "severity"}, identityLabels...)
	out := map[string][]string{"up": {targetLabel}, "ALERTS_FOR_STATE": forState, "ALERTS": append(slices.Clone(forState), "alertstate")}
	for name, m := range readMetricsDoc(t) {
		out[name] = append(slices.Clone(m.Labels), targetLabel)
	}
	for _, g := range loadRules(t) {
		for _, r := range g.Rules {
			if r.Record == "" {
				continue
			}
			e, err := parser.ParseExpr(r.Expr)
			if err != nil {
				t.Fatalf("%s: %v", r.Record, err)
			}
			out[r.Record] = nil // a held rule reads its own last value: no label of its own
			if out[r.Record], err = outputLabels(e, out); err != nil {
				t.Fatalf("%s: %v", r.Record, err)
			}
		}
	}
	return out
}

// identityProblems lists the labels expr can give an alert that are not
// identity labels.
func identityProblems(expr string, sources map[string][]string) []string {
	e, err := parser.ParseExpr(expr)
	if err != nil {
		return []string{err.Error()}
	}
	labels, err := outputLabels(e, sources)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, l := range labels {
		if !slices.Contains(identityLabels, l) {
			out = append(out, fmt.Sprintf("label %q is not an identity label (%s): free text and values that change during one problem go in the description", l, strings.Join(identityLabels, ", ")))
		}
	}
	return out
}

func TestAlertLabelsIdentifyTheProblem(t *testing.T) {
	sources := labelSources(t)
	for _, r := range alertRules(t) {
		for _, p := range identityProblems(r.Expr, sources) {
			t.Errorf("%s: %s", r.Alert, p)
		}
	}
}

// TestIdentityProblemsRejects makes sure the check above can fail.
func TestIdentityProblemsRejects(t *testing.T) {
	sources := labelSources(t)
	for _, expr := range []string{
		// The excerpt joined in as a label, as the rules once did.
		`max by (machineosbuild, class) (mosb_failure_class) == 1
		  * on (machineosbuild, class) group_left (excerpt) topk by (machineosbuild, class) (1, mosb_failure_info)`,
		`max by (node, pool, class, excerpt) (node_update_failure_info) == 1`,
		`max by (machineosconfig) (mosc_push_spec_valid) == 0 * on (machineosconfig) group_left (rendered_image_push_spec) mosc_info`,
		// Not aggregated: the scrape target's labels split the alert per replica.
		`mosb_build_phase{phase="Failed"} == 1`,
		`max without (pod) (mosb_failure_class) == 1`,
		`label_replace(max by (pool) (ocl_pool_paused), "x", "$1", "pool", "(.*)")`,
	} {
		if len(identityProblems(expr, sources)) == 0 {
			t.Errorf("%s passed the check", expr)
		}
	}
	for _, expr := range []string{
		`max by (pool) (ocl_pool_status_machines) - max by (pool) (ocl_pool_nodes_on_current_image) > 0`,
		`time() - max by (machineosbuild) (mosb_build_start_timestamp_seconds) > scalar(ocl:build_max_duration_seconds)`,
		`absent(up{job=~".*ocl-exporter.*"} == 1)`,
	} {
		if p := identityProblems(expr, sources); len(p) != 0 {
			t.Errorf("%s: %v", expr, p)
		}
	}
}
