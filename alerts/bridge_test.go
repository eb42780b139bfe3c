package alerts

import (
	"fmt"
	"slices"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
)

// exporterScraped is the gate of every bridge: the exporter's own series,
// there at every successful scrape and gone (stale) without one.
const exporterScraped = "ocl_exporter_build_info"

// TestAlertsBridgeScrapeGaps holds every alert but OCLExporterDown to one
// of the two ways docs/alerts.md ("Scrape gaps, restarts and resolution")
// gives it through a gap: it carries itself, or it reads nothing but
// recording rules that hold their last value.
func TestAlertsBridgeScrapeGaps(t *testing.T) {
	records := recordExprs(t)
	sources := labelSources(t)
	for _, r := range alertRules(t) {
		if r.Alert == "OCLExporterDown" { // the gap itself
			continue
		}
		if p := gapProblem(r.Alert, r.Expr, records, sources); p != "" {
			t.Errorf("%s: %s", r.Alert, p)
		}
	}
}

// TestGapProblemRejects makes sure the check above can fail.
func TestGapProblemRejects(t *testing.T) {
	records := map[string]string{"x:held": "max by (pool) (ocl_pool_paused) or x:held unless on () " + exporterScraped}
	sources := labelSources(t)
	sources["x:held"] = []string{"pool"}
	for _, expr := range []string{
		`max by (pool) (ocl_pool_paused) == 1`,
		`max by (pool) (ocl_pool_paused) == 1 or max by (pool) (ALERTS_FOR_STATE{alertname="X"}) * NaN`,
		`max by (pool) (ocl_pool_paused) == 1 or max by (pool, node) (ALERTS_FOR_STATE{alertname="X"}) * NaN unless on () ` + exporterScraped,
		`max by (pool) (ocl_pool_paused) == 1 or max by (pool) (ALERTS_FOR_STATE{alertname="Y"}) * NaN unless on () ` + exporterScraped,
		`x:held > 0 and on (pool) ocl_pool_paused == 1`,
	} {
		if gapProblem("X", expr, records, sources) == "" {
			t.Errorf("%s passed the check", expr)
		}
	}
	for _, expr := range []string{
		`max by (pool) (ocl_pool_paused) == 1 or max by (pool) (ALERTS_FOR_STATE{alertname="X"}) * NaN unless on () ` + exporterScraped,
		`time() - x:held > 60`,
	} {
		if p := gapProblem("X", expr, records, sources); p != "" {
			t.Errorf("%s: %s", expr, p)
		}
	}
}

// gapProblem says why alert's expr does not come through a scrape gap, or
// "".
func gapProblem(alert, expr string, records map[string]string, sources map[string][]string) string {
	e, err := parser.ParseExpr(expr)
	if err != nil {
		return err.Error()
	}
	if or, ok := e.(*parser.BinaryExpr); ok && or.Op == parser.LOR {
		if want, ok := bridgeLabels(or.RHS, alert); ok {
			got, err := outputLabels(or.LHS, sources)
			if err != nil {
				return err.Error()
			}
			if got = slices.Sorted(slices.Values(got)); !slices.Equal(got, want) {
				return fmt.Sprintf("its bridge carries the labels %v, its expression gives %v", want, got)
			}
			return ""
		}
	}
	if name := notHeld(e, records, nil); name != "" {
		return fmt.Sprintf("no bridge (or max by (<its labels>) (ALERTS_FOR_STATE{alertname=%q}) * NaN unless on () %s), and it reads %s, which does not hold its last value through a gap", alert, exporterScraped, name)
	}
	return ""
}

// bridgeLabels reads e as alert's bridge and returns the labels it
// carries, sorted.
func bridgeLabels(e parser.Expr, alert string) ([]string, bool) {
	unless, ok := e.(*parser.BinaryExpr)
	if !ok || unless.Op != parser.LUNLESS || !isGate(unless) {
		return nil, false
	}
	times, ok := unless.LHS.(*parser.BinaryExpr)
	if !ok || times.Op != parser.MUL || times.RHS.String() != "NaN" {
		return nil, false
	}
	agg, ok := times.LHS.(*parser.AggregateExpr)
	if !ok || agg.Op != parser.MAX || agg.Without {
		return nil, false
	}
	vs, ok := agg.Expr.(*parser.VectorSelector)
	if !ok || vs.Name != forState || alertNameMatched(vs) != alert {
		return nil, false
	}
	return slices.Sorted(slices.Values(agg.Grouping)), true
}

// isGate reports whether b is "... unless on () ocl_exporter_build_info".
func isGate(b *parser.BinaryExpr) bool {
	return b.VectorMatching != nil && b.VectorMatching.On && len(b.VectorMatching.MatchingLabels) == 0 && b.RHS.String() == exporterScraped
}

// holdsItself reports whether record's expression e holds its last value
// through a gap: <expr> or <record> unless on () ocl_exporter_build_info.
func holdsItself(record string, e parser.Expr) bool {
	or, ok := e.(*parser.BinaryExpr)
	if !ok || or.Op != parser.LOR {
		return false
	}
	unless, ok := or.RHS.(*parser.BinaryExpr)
	return ok && unless.Op == parser.LUNLESS && isGate(unless) && unless.LHS.String() == record
}

// notHeld returns a series e reads that is not held through a gap: one
// that is not a recording rule holding its last value (holdsItself), nor
// one computed from such alone. "" when every series is held.
func notHeld(e parser.Expr, records map[string]string, seen []string) string {
	var out string
	parser.Inspect(e, func(node parser.Node, _ []parser.Node) error {
		vs, ok := node.(*parser.VectorSelector)
		if !ok || out != "" || slices.Contains(seen, vs.Name) {
			return nil
		}
		expr, ok := records[vs.Name]
		if !ok {
			out = vs.String()
			return nil
		}
		re, err := parser.ParseExpr(expr)
		if err != nil {
			out = err.Error()
			return nil
		}
		if holdsItself(vs.Name, re) {
			return nil
		}
		if n := notHeld(re, records, append(seen, vs.Name)); n != "" {
			out = vs.Name + " (it reads " + n + ")"
		}
		return nil
	})
	return out
}
