package alerts

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/ocl-exporter/ocl_exporter/docs"
)

const alertsDoc = "../docs/alerts.md"

// The per-alert tables of docs/alerts.md: the alert table and the table of
// scrape gaps. Their first columns are the rules' (make generate writes
// them), the others prose written by hand.
var (
	alertTable = []string{"Alert", "Severity", "For", "Purpose"}
	gapTable   = []string{"Alert", "Through a gap", "After a restart, its labels come from", "Resolves"}
)

// How an alert comes through a scrape gap, as the gap table opens its
// "Through a gap" cell; what follows in the cell is written by hand.
const (
	gapIsTheGap = "is the gap"             // it reads up: OCLExporterDown
	gapDecides  = "decides on held values" // held recording rules, against the clock
	gapCarried  = "carried"                // its ALERTS_FOR_STATE bridge
)

// TestAlertsDocIsTheRules keeps docs/alerts.md's per-alert tables the
// rules': one row per alert in each, the alert table with its rule's
// severity and for, the gap table opening with how its expression comes
// through a gap (gapWay). make generate (go test ./alerts/ -update)
// writes those cells and the row of a new alert, next to its neighbour
// in the rules; the test names each prose cell still empty.
func TestAlertsDocIsTheRules(t *testing.T) {
	b, err := os.ReadFile(alertsDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	records := recordExprs(t)
	rules := map[string]rulefmt.Rule{}
	var alertKeys, gapKeys []string
	for _, r := range alertRulesInEvalOrder(t) {
		alertKeys = append(alertKeys, fmt.Sprintf("[`%s`](../runbooks/%s.md)", r.Alert, r.Alert))
		gapKeys = append(gapKeys, "`"+r.Alert+"`")
		rules[alertKeys[len(alertKeys)-1]], rules[gapKeys[len(gapKeys)-1]] = r, r
	}
	want := doc
	for _, tb := range []struct {
		header []string
		keys   []string
		row    func(r rulefmt.Rule, old []string) []string
	}{
		{alertTable, alertKeys, func(r rulefmt.Rule, old []string) []string {
			return []string{old[0], r.Labels["severity"], r.For.String(), old[3]}
		}},
		{gapTable, gapKeys, func(r rulefmt.Rule, old []string) []string {
			way, err := gapWay(r.Alert, r.Expr, records)
			if err != nil {
				t.Errorf("%s: %v", r.Alert, err)
			}
			return []string{old[0], way + gapCellRest(old[1]), old[2], old[3]}
		}},
	} {
		old, err := docs.Table(strings.NewReader(want), tb.header...)
		if err != nil {
			t.Fatalf("%s: %v", alertsDoc, err)
		}
		byKey := map[string][]string{}
		for _, row := range old {
			byKey[row[0]] = row
		}
		var rows [][]string
		for _, key := range docs.Keyed(old, tb.keys) {
			prev, ok := byKey[key]
			if !ok {
				prev = make([]string, len(tb.header))
				prev[0] = key
				if !*update {
					t.Errorf("%s: the table | %s | has no row for %s: make generate adds it", alertsDoc, strings.Join(tb.header, " | "), rules[key].Alert)
				}
			}
			row := tb.row(rules[key], prev)
			for i, cell := range row {
				if cell == "" && !*update {
					t.Errorf("%s: write the %q of %s in the table | %s |", alertsDoc, tb.header[i], rules[key].Alert, strings.Join(tb.header, " | "))
				}
			}
			rows = append(rows, row)
		}
		for _, row := range old {
			if _, ok := rules[row[0]]; !ok && !*update {
				t.Errorf("%s: the table | %s | lists %s, which is no alert of alerts/*rules.yaml (or its link is not ../runbooks/<Alert>.md): make generate drops it", alertsDoc, strings.Join(tb.header, " | "), row[0])
			}
		}
		if want, err = docs.ReplaceTable(want, rows, tb.header...); err != nil {
			t.Fatalf("%s: %v", alertsDoc, err)
		}
	}
	if *update {
		if err := os.WriteFile(alertsDoc, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if doc != want && !t.Failed() {
		t.Errorf("%s: the alert tables differ from the rules (a severity, a for, the way through a gap, or the order): make generate rewrites them", alertsDoc)
	}
}

// gapWay says how an alert's expression comes through a scrape gap: it is
// the gap (it reads up), it decides on recording rules that hold their
// last value (nothing else, or those against time() with a bridge for
// the rest), or its bridge carries it.
func gapWay(alert, expr string, records map[string]string) (string, error) {
	e, err := parser.ParseExpr(expr)
	if err != nil {
		return "", err
	}
	lhs, bridged := e, false
	if or, ok := e.(*parser.BinaryExpr); ok && or.Op == parser.LOR {
		if _, ok := bridgeLabels(or.RHS, alert, records); ok {
			lhs, bridged = or.LHS, true
		}
	}
	readsUp, readsHeld, clock := false, false, false
	parser.Inspect(lhs, func(n parser.Node, _ []parser.Node) error {
		switch n := n.(type) {
		case *parser.VectorSelector:
			readsUp = readsUp || n.Name == "up"
			_, isRecord := records[n.Name]
			readsHeld = readsHeld || isRecord && notHeld(n, records, nil) == ""
		case *parser.Call:
			clock = clock || n.Func.Name == "time"
		}
		return nil
	})
	switch {
	case readsUp && !bridged:
		return gapIsTheGap, nil
	case notHeld(lhs, records, nil) == "", bridged && readsHeld && clock:
		return gapDecides, nil
	case bridged:
		return gapCarried, nil
	}
	return "", fmt.Errorf("comes through a scrape gap by no way docs/alerts.md knows (TestAlertsBridgeScrapeGaps says why)")
}

// gapCellRest is what a "Through a gap" cell says after its way, written by
// hand; a cell that opens with no way keeps all it says.
func gapCellRest(cell string) string {
	for _, way := range []string{gapIsTheGap, gapDecides, gapCarried} {
		if rest, ok := strings.CutPrefix(cell, way); ok {
			return rest
		}
	}
	if cell == "" {
		return ""
	}
	return ": " + cell
}

// recordExprs are the recording rules' expressions by name.
func recordExprs(t *testing.T) map[string]string {
	t.Helper()
	records := map[string]string{}
	for _, g := range loadRules(t) {
		for _, r := range g.Rules {
			if r.Record != "" {
				records[r.Record] = r.Expr
			}
		}
	}
	return records
}

// alertRulesInEvalOrder are the alerting rules group by group in
// GroupEvalOrder, each group's in its file's order.
func alertRulesInEvalOrder(t *testing.T) []rulefmt.Rule {
	t.Helper()
	groups := loadRules(t)
	slices.SortStableFunc(groups, func(a, b rulefmt.RuleGroup) int {
		return slices.Index(GroupEvalOrder, a.Name) - slices.Index(GroupEvalOrder, b.Name)
	})
	var out []rulefmt.Rule
	for _, g := range groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				out = append(out, r)
			}
		}
	}
	return out
}
