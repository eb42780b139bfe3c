package gaps

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/ocl-exporter/ocl_exporter/test/lifecycle"
)

// Lengths are the short gaps a page must come through unchanged, in
// minutes: a failed scrape or two, a restart in place, a pod rescheduled.
var Lengths = []int{1, 3, 5}

// Long is a gap OCLExporterDown must page for, and nothing else.
const Long = 20

// ExporterDown is the alert a long gap raises.
const ExporterDown = "OCLExporterDown"

// Cell is one replay of the matrix: the exporter unreachable for Length
// minutes from minute Start.
type Cell struct {
	Start, Length int
	// Rescheduled: the exporter comes back in new pods (5 minutes and
	// more), not in the same ones after failed scrapes.
	Rescheduled bool
	// Why names the point of the lifecycle the gap is placed at.
	Why string
}

func (c Cell) String() string {
	how := "failed scrapes"
	if c.Rescheduled {
		how = "rescheduled"
	}
	return fmt.Sprintf("%dm gap at minutes %d-%d (%s; %s)", c.Length, c.Start, c.Start+c.Length-1, how, c.Why)
}

// page is one interval an alert fires: from its first minute to the
// minute it no longer fires (the replay's length if it fires at the end).
type page struct{ from, until int }

// pages are the firing intervals of each alert of a timeline.
func pages(tl Timeline) map[string][]page {
	out := map[string][]page{}
	for m, firing := range tl {
		for _, a := range firing {
			ps := out[a]
			if n := len(ps); n > 0 && ps[n-1].until == m {
				ps[n-1].until = m + 1
			} else {
				ps = append(ps, page{m, m + 1})
			}
			out[a] = ps
		}
	}
	return out
}

// Cells places gaps at each point of a lifecycle that matters: for each
// page of the baseline, where its pending window starts and where it
// ends (a gap ending as the alert fires), while it fires, just before and
// just after it resolves; at each stage boundary (a gap that hides the
// change, or ends as it happens); each of Lengths long. Long gaps start
// at each page's pending window and while it fires, or halfway through a
// lifecycle that pages nobody. A gap starts at minute 1 at the earliest
// and ends before the replay does.
func Cells(base Timeline, holds map[string]time.Duration, boundaries []int) []Cell {
	minutes := len(base)
	var out []Cell
	seen := map[[2]int]bool{}
	add := func(start, length int, why string) {
		if start < 1 || start+length >= minutes || seen[[2]int{start, length}] {
			return
		}
		seen[[2]int{start, length}] = true
		out = append(out, Cell{Start: start, Length: length, Rescheduled: length >= 5, Why: why})
	}
	ps := pages(base)
	for _, a := range slices.Sorted(maps.Keys(ps)) {
		name, _, _ := strings.Cut(a, "{") // Check names the page in full
		hold := int(holds[name] / time.Minute)
		for _, p := range ps[a] {
			pending := max(p.from-hold, 0)
			for _, l := range Lengths {
				add(pending, l, "where "+name+" starts pending")
				add(max(p.from-l, pending), l, "ending as "+name+" fires")
				add((p.from+p.until)/2, l, "while "+name+" fires")
				if p.until < minutes {
					add(p.until-l, l, "ending as "+name+" resolves")
					add(p.until, l, "as "+name+" resolves")
				}
			}
			add(pending+1, Long, "in "+name+"'s pending window")
			add(p.from, Long, "as "+name+" fires")
		}
	}
	for _, b := range boundaries {
		for _, l := range Lengths {
			add(b-1, l, fmt.Sprintf("over the stage boundary at minute %d", b))
		}
	}
	if len(ps) == 0 {
		add(minutes/2-Long/2, Long, "halfway")
	}
	slices.SortFunc(out, func(x, y Cell) int {
		if x.Start != y.Start {
			return x.Start - y.Start
		}
		return x.Length - y.Length
	})
	return out
}

// Check compares a cell's timeline with a reference's, the baseline's or
// the frozen one's (see Frozen), named refName in what it says, and says
// how each page moved:
//
//   - A page keeps its start, or starts at most one evaluation later, and
//     keeps its end: the rules bridge the gap. Through a long gap a page
//     may start late by as much as the gap: the rules are blind, and
//     OCLExporterDown says so.
//   - No page splits (resolved and fired again), none is lost (unless it
//     would start late after its end), none is added, except
//     OCLExporterDown, which a long gap must raise after its for (15
//     minutes) until the exporter is back.
func Check(c Cell, ref, got Timeline, refName string, holds map[string]time.Duration) []string {
	end := c.Start + c.Length
	late := 1
	if c.Length >= Long {
		late += c.Length
	}
	want, have := pages(ref), pages(got)
	var problems []string
	downFrom := c.Start + int(holds[ExporterDown]/time.Minute)
	for _, a := range slices.Sorted(maps.Keys(have)) {
		if _, ok := want[a]; ok {
			continue
		}
		name, _, _ := strings.Cut(a, "{")
		if name == ExporterDown && c.Length >= Long && slices.Equal(have[a], []page{{downFrom, end}}) {
			continue
		}
		problems = append(problems, fmt.Sprintf("%s fires %s with the gap, never %s", a, spans(have[a]), refName))
	}
	if c.Length >= Long && !slices.ContainsFunc(slices.Collect(maps.Keys(have)), func(a string) bool { return strings.HasPrefix(a, ExporterDown+"{") }) {
		problems = append(problems, fmt.Sprintf("%s does not fire", ExporterDown))
	}
	for _, a := range slices.Sorted(maps.Keys(want)) {
		if moved(want[a], have[a], late) {
			problems = append(problems, fmt.Sprintf("%s fires %s %s, %s with the gap", a, spans(want[a]), refName, spans(have[a])))
		}
	}
	return problems
}

// moved reports whether an alert's pages moved more than late allows.
func moved(want, have []page, late int) bool {
	if n := len(want); len(have) == n-1 && want[n-1].from+late >= want[n-1].until {
		want = want[:n-1] // the last page started too late to fire at all
	}
	if len(have) != len(want) {
		return true
	}
	for i, w := range want {
		h := have[i]
		if h.from < w.from || h.from > w.from+late || h.until != w.until {
			return true
		}
	}
	return false
}

// spans writes pages as minute ranges, "none" for none.
func spans(ps []page) string {
	if len(ps) == 0 {
		return "never"
	}
	var s []string
	for _, p := range ps {
		s = append(s, fmt.Sprintf("%d-%d", p.from, p.until-1))
	}
	return "at minutes " + strings.Join(s, " and ")
}

// Matrix replays rp through the rules without a gap, which must fire want
// at every minute (a lifecycle's expectations: promtool checks the same),
// then plays every cell of Cells, failing the test with each page that
// moved. A cell continues from the baseline's state at the minute before
// its gap, as a configuration reload carries it over, so it costs the
// minutes from its gap until its alerts and samples are the baseline's
// again (settled, see reads).
func Matrix(t testing.TB, rules *Rules, rp *Replay, want Timeline, boundaries []int) {
	t.Helper()
	cells := Cells(want, rules.Holds, boundaries)
	var starts []int
	for _, c := range cells {
		starts = append(starts, c.Start)
	}
	base, err := rules.Run(rp, starts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := base.Close(); err != nil {
			t.Error(err)
		}
	}()
	for m := range want {
		if !slices.Equal(base.Timeline[m], want[m]) {
			t.Fatalf("without a gap, minute %d fires %v, the lifecycle expects %v", m, base.Timeline[m], want[m])
		}
	}
	for _, c := range cells {
		if err := play(t, rules, rp, base, c); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
	}
}

// play replays one cell and reports how its pages moved. Where the gap
// hides a stage boundary, the change shows when it ends: the cell is held
// to what an exporter that kept serving its last scrape would page, the
// frozen replay, played side by side with it until the two agree.
func play(t testing.TB, rules *Rules, rp *Replay, base *Baseline, c Cell) error {
	t.Helper()
	gapped := rp.Gap(c.Start, c.Length, c.Rescheduled)
	var problems []string
	if frozen := rp.Frozen(c.Start, c.Length); frozen.Differs(rp) {
		ref, got, err := base.Pair(c.Start, frozen, gapped)
		if err != nil {
			return err
		}
		problems = Check(c, ref, got, "with the exporter frozen at its last scrape", rules.Holds)
	} else {
		got, err := base.Fork(c.Start, gapped)
		if err != nil {
			return err
		}
		problems = Check(c, base.Timeline, got.Timeline, "without the gap", rules.Holds)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", c, p)
	}
	return nil
}

// Expected is what a lifecycle expects firing at each minute, as
// Identity writes the alerts: its selectors with the rules' own labels.
func (r *Rules) Expected(l *lifecycle.Lifecycle) (Timeline, error) {
	out := make(Timeline, l.End+1)
	for _, e := range l.Expect {
		var firing []string
		for _, f := range e.Firing {
			ms, err := parser.ParseMetricSelector(f)
			if err != nil {
				return nil, fmt.Errorf("expected alert %s: %w", f, err)
			}
			b := labels.NewBuilder(labels.EmptyLabels())
			for _, m := range ms {
				if m.Type != labels.MatchEqual {
					return nil, fmt.Errorf("expected alert %s: only = matchers name an alert", f)
				}
				b.Set(m.Name, m.Value)
			}
			name := b.Get(model.MetricNameLabel)
			own, ok := r.static[name]
			if !ok {
				return nil, fmt.Errorf("expected alert %s: no alert %s in the rule files", f, name)
			}
			for k, v := range own {
				if b.Get(k) == "" {
					b.Set(k, v)
				}
			}
			b.Del(model.MetricNameLabel).Set(labels.AlertName, name)
			firing = append(firing, Identity(b.Labels()))
		}
		slices.Sort(firing)
		for _, m := range e.Minutes() {
			out[m] = firing
		}
	}
	return out, nil
}
