package gaps

import (
	"slices"
	"strings"
	"testing"
	"time"
)

const (
	upA   = `up{instance="10.0.0.1:29100", job="ocl-exporter", pod="exporter-a"}`
	infoA = `ocl_exporter_build_info{instance="10.0.0.1:29100", job="ocl-exporter", pod="exporter-a", version="v0.1.0"}`
	srcA  = `src{instance="10.0.0.1:29100", job="ocl-exporter", k="x", pod="exporter-a"}`
)

var start = time.Date(2025, 10, 17, 12, 0, 0, 0, time.UTC)

// replay is minutes of one target serving src in three stages: 0, then 1
// (a problem) from minute problem until minute fixed, then 0 again.
func replay(minutes, problem, fixed int) *Replay {
	rp := &Replay{Start: start}
	rp.Append(Round{upA: 1, infoA: 1, srcA: 0}, problem)
	rp.Append(Round{upA: 1, infoA: 1, srcA: 1}, fixed-problem)
	rp.Append(Round{upA: 1, infoA: 1, srcA: 0}, minutes-fixed)
	return rp
}

func testRules(t *testing.T) *Rules {
	t.Helper()
	r, err := LoadRules([]string{"testdata/rules.yaml"}, []string{"g"})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestGapWritesWhatPrometheusStores(t *testing.T) {
	rp := replay(10, 0, 10)
	failed := rp.Gap(3, 2, false)
	for m := 3; m < 5; m++ {
		if got := failed.Rounds[failed.At[m]]; len(got) != 1 || got[upA] != 0 {
			t.Errorf("failed scrape at minute %d: %v, want only %s at 0", m, got, upA)
		}
	}
	if failed.At[5] != rp.At[5] || failed.Differs(rp) == false {
		t.Errorf("after a failed scrape the pod serves as before, and the replay differs during it")
	}
	moved := rp.Gap(3, 2, true)
	if got := moved.Rounds[moved.At[3]]; len(got) != 0 {
		t.Errorf("rescheduled at minute 3: %v, want no target", got)
	}
	for s := range moved.Rounds[moved.At[5]] {
		if !strings.Contains(s, `pod="exporter-a-r"`) {
			t.Errorf("after the gap %s: want the new pod's labels", s)
		}
	}
	if moved.source(moved.At[7]) != rp.At[7] {
		t.Error("the new pods' round does not name the round it copies")
	}
	frozen := rp.Frozen(3, 2)
	if frozen.At[3] != rp.At[2] || frozen.At[4] != rp.At[2] || frozen.At[5] != rp.At[5] {
		t.Errorf("frozen at %v, want minute 2's round at 3 and 4", frozen.At)
	}
}

// TestForkIsAReplay checks the shortcut a cell takes (continue from the
// baseline's state, stop once settled) against evaluating the gapped
// replay from minute 0.
func TestForkIsAReplay(t *testing.T) {
	rules := testRules(t)
	rp := replay(60, 10, 40)
	var starts []int
	for g := 1; g < 55; g += 3 {
		starts = append(starts, g)
	}
	base, err := rules.Run(rp, starts)
	if err != nil {
		t.Fatal(err)
	}
	defer base.Close()
	for _, g := range starts {
		for _, l := range []int{1, 3, 5, 20} {
			frozen := rp.Frozen(g, l)
			for i, gapped := range []*Replay{rp.Gap(g, l, false), rp.Gap(g, l, true), frozen} {
				kind := []string{"failed scrapes", "rescheduled", "frozen"}[i]
				fork, err := base.Fork(g, gapped)
				if err != nil {
					t.Fatal(err)
				}
				full := replayed(t, rules, gapped)
				if !slices.EqualFunc(fork.Timeline, full, slices.Equal) {
					t.Errorf("%s for %d minutes at %d: the fork fires\n%v\nthe replay from minute 0\n%v", kind, l, g, fork.Timeline, full)
				}
				// Side by side with the frozen replay, until they agree.
				x, y, err := base.Pair(g, frozen, gapped)
				if err != nil {
					t.Fatal(err)
				}
				if len(x) != len(y) || !slices.EqualFunc(x, replayed(t, rules, frozen)[:len(x)], slices.Equal) || !slices.EqualFunc(y, full[:len(y)], slices.Equal) {
					t.Errorf("%s for %d minutes at %d, paired with the frozen replay: the pair fires\n%v\n%v", kind, l, g, x, y)
				}
				if !slices.EqualFunc(full[len(y):], replayed(t, rules, frozen)[len(y):], slices.Equal) {
					t.Errorf("%s for %d minutes at %d: the pair stopped at %d, but the replays part again after", kind, l, g, len(y))
				}
			}
		}
	}
}

// replayed is what rp fires, evaluated from minute 0.
func replayed(t *testing.T, rules *Rules, rp *Replay) Timeline {
	t.Helper()
	run, err := rules.Run(rp, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	return run.Timeline
}

// TestCheckFindsEachMove puts the test rules through cells: the bridged
// alert passes, the bare one moves, and Check says how.
func TestCheckFindsEachMove(t *testing.T) {
	rules := testRules(t)
	rp := replay(60, 10, 40)
	base, err := rules.Run(rp, []int{20, 30})
	if err != nil {
		t.Fatal(err)
	}
	defer base.Close()
	for _, c := range []struct {
		cell Cell
		want []string
	}{
		{Cell{Start: 20, Length: 3}, []string{`Bare{k="x"} fires at minutes 15-39 without the gap, at minutes 15-19 and 28-39 with the gap`}},
		{Cell{Start: 30, Length: 20, Rescheduled: true}, []string{
			`Bare{k="x"} fires at minutes 15-39 without the gap, at minutes 15-29 with the gap`,
			`Bridged{k="x"} fires at minutes 15-39 without the gap, at minutes 15-49 with the gap`,
		}},
	} {
		got, err := base.Fork(c.cell.Start, rp.Gap(c.cell.Start, c.cell.Length, c.cell.Rescheduled))
		if err != nil {
			t.Fatal(err)
		}
		if p := Check(c.cell, base.Timeline, got.Timeline, "without the gap", rules.Holds); !slices.Equal(p, c.want) {
			t.Errorf("%s:\n%s\nwant\n%s", c.cell, strings.Join(p, "\n"), strings.Join(c.want, "\n"))
		}
	}
}

func TestCheck(t *testing.T) {
	holds := map[string]time.Duration{ExporterDown: 15 * time.Minute}
	const a, down = `A{k="x"}`, `OCLExporterDown{}`
	timeline := func(minutes int, firing map[string][2]int) Timeline {
		out := make(Timeline, minutes)
		for alert, span := range firing {
			for m := span[0]; m <= span[1]; m++ {
				out[m] = append(out[m], alert)
			}
		}
		for _, f := range out {
			slices.Sort(f)
		}
		return out
	}
	base := timeline(60, map[string][2]int{a: {10, 30}})
	short, long := Cell{Start: 12, Length: 3}, Cell{Start: 12, Length: 20, Rescheduled: true}
	for _, c := range []struct {
		name  string
		cell  Cell
		got   Timeline
		moved bool
	}{
		{"unchanged", short, base, false},
		{"one evaluation late", short, timeline(60, map[string][2]int{a: {11, 30}}), false},
		{"two late", short, timeline(60, map[string][2]int{a: {12, 30}}), true},
		{"early", short, timeline(60, map[string][2]int{a: {9, 30}}), true},
		{"end moved", short, timeline(60, map[string][2]int{a: {10, 31}}), true},
		{"split", short, append(timeline(13, map[string][2]int{a: {10, 12}}), timeline(60, map[string][2]int{a: {20, 30}})[13:]...), true},
		{"lost", short, timeline(60, nil), true},
		{"added", short, timeline(60, map[string][2]int{a: {10, 30}, `B{}`: {20, 25}}), true},
		{"long gap", long, timeline(60, map[string][2]int{a: {10, 30}, down: {27, 31}}), false},
		{"long gap, late", long, timeline(60, map[string][2]int{a: {25, 30}, down: {27, 31}}), false},
		{"long gap, no OCLExporterDown", long, base, true},
		{"long gap, OCLExporterDown past the gap", long, timeline(60, map[string][2]int{a: {10, 30}, down: {27, 33}}), true},
		{"OCLExporterDown in a short gap", short, timeline(60, map[string][2]int{a: {10, 30}, down: {13, 14}}), true},
	} {
		if p := Check(c.cell, base, c.got, "without the gap", holds); (len(p) > 0) != c.moved {
			t.Errorf("%s: %v, want moved %v", c.name, p, c.moved)
		}
	}
	// A page that starts late because of the gap may then start after its
	// end: lost, as a frozen exporter would lose it.
	brief := timeline(60, map[string][2]int{a: {30, 30}})
	if p := Check(long, brief, timeline(60, map[string][2]int{down: {27, 31}}), "without the gap", holds); len(p) > 0 {
		t.Errorf("a one-minute page lost in a long gap: %v", p)
	}
}

func TestCells(t *testing.T) {
	holds := map[string]time.Duration{"A": 5 * time.Minute, ExporterDown: 15 * time.Minute}
	base := make(Timeline, 60)
	for m := 10; m <= 30; m++ {
		base[m] = []string{`A{k="x"}`}
	}
	cells := Cells(base, holds, []int{5, 31, 58})
	have := map[[2]int]string{}
	for _, c := range cells {
		if c.Start < 1 || c.Start+c.Length >= len(base) {
			t.Errorf("%s: outside the replay", c)
		}
		if c.Rescheduled != (c.Length >= 5) {
			t.Errorf("%s: rescheduled %v", c, c.Rescheduled)
		}
		have[[2]int{c.Start, c.Length}] = c.Why
	}
	for _, want := range [][2]int{
		{5, 1}, {5, 3}, {5, 5}, // where A starts pending
		{9, 1}, {7, 3}, // ending as A fires
		{20, 1}, {20, 3}, {20, 5}, // while it fires
		{30, 1}, {28, 3}, {26, 5}, // ending as it resolves
		{31, 1}, {31, 3}, {31, 5}, // as it resolves
		{4, 1}, {4, 3}, {4, 5}, // over the boundary at 5
		{6, Long}, {10, Long}, // pending window, as it fires
	} {
		if _, ok := have[want]; !ok {
			t.Errorf("no %dm gap at minute %d", want[1], want[0])
		}
	}
	if _, ok := have[[2]int{57, 1}]; !ok {
		t.Error("no 1m gap before the boundary at 58")
	}
	if _, ok := have[[2]int{57, 3}]; ok {
		t.Error("a 3m gap at minute 57 runs past the replay")
	}
}
