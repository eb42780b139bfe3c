//go:build rulebench

package rulebench

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/util/teststorage"

	"github.com/ocl-exporter/ocl_exporter/alerts"
)

// workWarmUp is the simulated time evaluated before the measured cycles:
// past the longest for of a rule that holds alerts at these sizes
// (OCLNodeNotOnDesiredImage's hour), so that its alerts fire and expand
// their templates as in a Prometheus that has run for a while.
const workWarmUp = 65 * time.Minute

// workCycles is how many cycles are measured in process: cheap enough to
// take five times make bench-rules' 40.
const workCycles = 200

// TestRuleWork pairs the working tree's rules with RULEBENCH_BASE's in
// this process: Prometheus' own rule manager and PromQL engine (the
// module's release) over a test TSDB that holds the synthetic cluster's
// scrape, stepped on a simulated 15 s clock. Both sets read the same
// series, each cycle evaluates them one after the other (the first
// alternating), and nothing else runs: no timers, no scrapes, no HTTP. It
// measures the work the rules do, which moves by a per cent or so between
// runs where make bench-rules' wall clock moves by 8%; make bench-rules
// remains the measurement of the rules in a real Prometheus. A garbage
// collection before each set's evaluation keeps one set's garbage (and
// the scrape's) out of the other's times: a rule pays for what it
// allocates, not for when the collector happens to run.
func TestRuleWork(t *testing.T) {
	baseRef := os.Getenv("RULEBENCH_BASE")
	if baseRef == "" {
		t.Fatal("RULEBENCH_BASE is empty: the commit to pair the tree with (make bench-rules-work BASE=main)")
	}
	var report strings.Builder
	report.WriteString(pairedHeader)
	for _, n := range sizes(t) {
		tree, base := evaluateInProcess(t, n, baseRef)
		report.WriteString(pairedReport(n, tree, base))
		logPairedRules(t, n, tree, base)
	}
	t.Log("the working tree against " + baseRef + ", evaluated in process:\n\n" + report.String())
}

// evaluateInProcess steps both rule sets through workWarmUp and then
// workCycles measured cycles, the simulated clock ending now (the
// synthetic cluster's times are fixed, and the rules compare them with
// time()).
func evaluateInProcess(t *testing.T, nodes int, baseRef string) (tree, base set) {
	t.Helper()
	samples := scraped(t, registry(t, nodes), "127.0.0.1:8443")
	st := teststorage.New(t)
	engine := promql.NewEngine(promql.EngineOpts{MaxSamples: 50_000_000, Timeout: time.Minute, LookbackDelta: lookback})
	m := rules.NewManager(&rules.ManagerOptions{
		QueryFunc:  rules.EngineQueryFunc(engine, st),
		Appendable: st,
		Queryable:  st,
		Context:    t.Context(),
		Logger:     slog.New(slog.DiscardHandler),
		NotifyFunc: func(context.Context, string, ...*rules.Alert) {},
	})
	files, err := filepath.Glob(filepath.Join(repoRoot, "alerts", "*rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, baseRules(t, baseRef, t.TempDir(), files)...)
	loaded, errs := m.LoadGroups(scrapeInterval, labels.EmptyLabels(), "", nil, false, files...)
	if len(errs) > 0 {
		t.Fatalf("loading the rules: %v", errs)
	}
	treeGroups, baseGroups := inEvalOrder(loaded)
	tree, base = set{}, set{}
	refs := make([]storage.SeriesRef, len(samples))
	measured := workCycles * scrapeInterval
	start := time.Now().Add(-workWarmUp - measured).Truncate(scrapeInterval)
	for i := 0; tree.cycles() < workCycles; i++ {
		ts := start.Add(time.Duration(i) * scrapeInterval)
		store(t, st, samples, refs, ts)
		record := ts.Sub(start) >= workWarmUp
		first, second := evalSide{treeGroups, tree}, evalSide{baseGroups, base}
		if i%2 == 1 {
			first, second = second, first
		}
		// Each rule evaluates a second after the scrape it reads.
		first.eval(t.Context(), ts.Add(time.Second), record)
		second.eval(t.Context(), ts.Add(time.Second), record)
	}
	return tree, base
}

// store appends one scrape of samples at ts.
func store(t *testing.T, st *teststorage.TestStorage, samples []sample, refs []storage.SeriesRef, ts time.Time) {
	t.Helper()
	app := st.Appender(t.Context())
	if err := appendScrape(app, samples, refs, ts); err != nil {
		t.Fatal(err)
	}
	if err := app.Commit(); err != nil {
		t.Fatal(err)
	}
}

// inEvalOrder splits the loaded groups into the tree's and the base's,
// each in alerts.GroupEvalOrder (a group it does not name last).
func inEvalOrder(loaded map[string]*rules.Group) (tree, base []*rules.Group) {
	rank := func(g *rules.Group) int {
		if i := slices.Index(alerts.GroupEvalOrder, strings.TrimPrefix(g.Name(), basePrefix)); i >= 0 {
			return i
		}
		return len(alerts.GroupEvalOrder)
	}
	for _, g := range loaded {
		if strings.HasPrefix(g.Name(), basePrefix) {
			base = append(base, g)
		} else {
			tree = append(tree, g)
		}
	}
	byRank := func(a, b *rules.Group) int {
		if d := rank(a) - rank(b); d != 0 {
			return d
		}
		return strings.Compare(a.Name(), b.Name())
	}
	slices.SortFunc(tree, byRank)
	slices.SortFunc(base, byRank)
	return tree, base
}

// evalSide is one rule set's groups and where their evaluations go.
type evalSide struct {
	groups []*rules.Group
	into   set
}

// eval evaluates each group at ts and, when record, keeps the time of the
// group (measured around it, as Prometheus' own loop does) and of each
// rule with its pending and firing alerts, by group name without the
// base's prefix.
func (s evalSide) eval(ctx context.Context, ts time.Time, record bool) {
	runtime.GC()
	for _, g := range s.groups {
		began := time.Now()
		g.Eval(ctx, ts)
		if !record {
			continue
		}
		e := evaluation{total: time.Since(began)}
		for _, r := range g.Rules() {
			var active int
			if a, ok := r.(*rules.AlertingRule); ok {
				active = a.ActiveAlertsCount()
			}
			e.rules = append(e.rules, ruleEvaluation{name: r.Name(), d: r.GetEvaluationDuration(), alerts: active})
		}
		name := strings.TrimPrefix(g.Name(), basePrefix)
		s.into[name] = append(s.into[name], e)
	}
}
