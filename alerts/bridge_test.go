package alerts

import (
	"fmt"
	"maps"
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
// recording rules that hold their last value. A bridge reads its group's
// record of the alerts' state (stateGate), recorded before it in the same
// group, whose alert names are the alerts that read it.
func TestAlertsBridgeScrapeGaps(t *testing.T) {
	records := recordExprs(t)
	sources := labelSources(t)
	for _, g := range loadRules(t) {
		earlier := map[string]string{}
		readers := map[string][]string{}
		for _, r := range g.Rules {
			if r.Record != "" {
				earlier[r.Record] = r.Expr
				continue
			}
			if r.Alert == "OCLExporterDown" { // the gap itself
				continue
			}
			if p := gapProblem(r.Alert, r.Expr, records, earlier, sources); p != "" {
				t.Errorf("%s: %s", r.Alert, p)
			}
			if name := bridgeRecord(r.Expr, r.Alert, earlier); name != "" {
				readers[name] = append(readers[name], r.Alert)
			}
		}
		for name, expr := range earlier {
			if listed := stateGate(expr); listed != nil && !slices.Equal(slices.Sorted(slices.Values(listed)), slices.Sorted(slices.Values(readers[name]))) {
				t.Errorf("%s/%s lists the alerts %v, the alerts bridged by it are %v", g.Name, name, listed, readers[name])
			}
		}
	}
}

// TestGapProblemRejects makes sure the check above can fail.
func TestGapProblemRejects(t *testing.T) {
	records := map[string]string{"x:held": "max by (pool) (ocl_pool_paused) or x:held unless on () " + exporterScraped}
	bridges := map[string]string{
		"g:alerts_for_state:unscraped": `ALERTS_FOR_STATE{alertname=~"X|Z"} * NaN unless on () ` + exporterScraped,
		"g:ungated":                    `ALERTS_FOR_STATE{alertname=~"X"} * NaN`,
		"g:others":                     `ALERTS_FOR_STATE{alertname=~"Y|Z"} * NaN unless on () ` + exporterScraped,
	}
	maps.Copy(records, bridges)
	records["g:later"] = bridges["g:alerts_for_state:unscraped"]
	sources := labelSources(t)
	sources["x:held"] = []string{"pool"}
	for _, expr := range []string{
		`max by (pool) (ocl_pool_paused) == 1`,
		`max by (pool) (ocl_pool_paused) == 1 or max by (pool) (ALERTS_FOR_STATE{alertname="X"}) * NaN unless on () ` + exporterScraped,
		`max by (pool) (ocl_pool_paused) == 1 or max by (pool) (g:ungated{alertname="X"})`,
		`max by (pool) (ocl_pool_paused) == 1 or max by (pool, node) (g:alerts_for_state:unscraped{alertname="X"})`,
		`max by (pool) (ocl_pool_paused) == 1 or max by (pool) (g:alerts_for_state:unscraped{alertname="Y"})`,
		`max by (pool) (ocl_pool_paused) == 1 or max by (pool) (g:others{alertname="X"})`,
		`max by (pool) (ocl_pool_paused) == 1 or max by (pool) (g:later{alertname="X"})`,
		`x:held > 0 and on (pool) ocl_pool_paused == 1`,
	} {
		if gapProblem("X", expr, records, bridges, sources) == "" {
			t.Errorf("%s passed the check", expr)
		}
	}
	for _, expr := range []string{
		`max by (pool) (ocl_pool_paused) == 1 or max by (pool) (g:alerts_for_state:unscraped{alertname="X"})`,
		`time() - x:held > 60`,
	} {
		if p := gapProblem("X", expr, records, bridges, sources); p != "" {
			t.Errorf("%s: %s", expr, p)
		}
	}
}

// gapProblem says why alert's expr does not come through a scrape gap, or
// "". bridges are the records its bridge may read: its group's, recorded
// before it.
func gapProblem(alert, expr string, records, bridges map[string]string, sources map[string][]string) string {
	e, err := parser.ParseExpr(expr)
	if err != nil {
		return err.Error()
	}
	if or, ok := e.(*parser.BinaryExpr); ok && or.Op == parser.LOR {
		if want, ok := bridgeLabels(or.RHS, alert, bridges); ok {
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
		return fmt.Sprintf("no bridge (or max by (<its labels>) (<group>:alerts_for_state:unscraped{alertname=%q}), that record listing it and recorded before it in its group), and it reads %s, which does not hold its last value through a gap", alert, name)
	}
	return ""
}

// bridgeRecord is the record alert's expr bridges it by (bridgeLabels), or
// "".
func bridgeRecord(expr, alert string, bridges map[string]string) string {
	e, err := parser.ParseExpr(expr)
	if err != nil {
		return ""
	}
	if or, ok := e.(*parser.BinaryExpr); ok && or.Op == parser.LOR {
		if _, ok := bridgeLabels(or.RHS, alert, bridges); ok {
			return or.RHS.(*parser.AggregateExpr).Expr.(*parser.VectorSelector).Name
		}
	}
	return ""
}

// bridgeLabels reads e as alert's bridge, max by (<labels>) of one of
// bridges (a stateGate listing alert) selected for alert, and returns the
// labels it carries, sorted.
func bridgeLabels(e parser.Expr, alert string, bridges map[string]string) ([]string, bool) {
	agg, ok := e.(*parser.AggregateExpr)
	if !ok || agg.Op != parser.MAX || agg.Without {
		return nil, false
	}
	vs, ok := agg.Expr.(*parser.VectorSelector)
	if !ok || alertNameMatched(vs) != alert {
		return nil, false
	}
	gate, ok := bridges[vs.Name]
	if !ok || !slices.Contains(stateGate(gate), alert) {
		return nil, false
	}
	return slices.Sorted(slices.Values(agg.Grouping)), true
}

// stateGate reads expr as a group's record of its alerts' state while no
// exporter is scraped, ALERTS_FOR_STATE{alertname=~"A|B"} * NaN unless on
// () ocl_exporter_build_info, and returns the alerts it lists, or nil.
func stateGate(expr string) []string {
	e, err := parser.ParseExpr(expr)
	if err != nil {
		return nil
	}
	unless, ok := e.(*parser.BinaryExpr)
	if !ok || unless.Op != parser.LUNLESS || !isGate(unless) {
		return nil
	}
	times, ok := unless.LHS.(*parser.BinaryExpr)
	if !ok || times.Op != parser.MUL || times.RHS.String() != "NaN" {
		return nil
	}
	vs, ok := times.LHS.(*parser.VectorSelector)
	if !ok || vs.Name != forState {
		return nil
	}
	return alertNamesListed(vs)
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
