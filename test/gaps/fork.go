package gaps

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/tsdb"
)

// fork is the rules continuing from the baseline's state at minute from
// on another replay, rp, which equals the baseline's before from: on a
// copy of the baseline's samples before from (as far back as the rules
// read) and rp's after, written as the fork goes.
type fork struct {
	b      *Baseline
	rp     *Replay
	db     *tsdb.DB
	dir    string
	rec    *recorder
	writer *writer // rp's samples, written a minute ahead of each evaluation
	groups []*rules.Group
	run    Run
	// alerts are this fork's values of the alerts it shares with the
	// snapshot (rules.Group.CopyState shares them): put in before each
	// of its evaluations, kept after, so that two forks of one snapshot
	// can take turns.
	alerts map[*rules.Alert]rules.Alert
}

func (b *Baseline) fork(from int, rp *Replay) (*fork, error) {
	snap := b.forks[from]
	if snap == nil {
		return nil, fmt.Errorf("no fork kept at minute %d", from)
	}
	dir, err := os.MkdirTemp("", "ocl-gaps-")
	if err != nil {
		return nil, err
	}
	f := &fork{b: b, rp: rp, dir: dir, alerts: maps.Clone(snap.alerts),
		run: Run{Timeline: slices.Clone(b.Timeline[:from]), replay: rp, minutes: slices.Clone(b.minutes[:from])}}
	if f.db, err = openDB(dir); err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	before := rp.Start.Add(time.Duration(from) * interval)
	if err := copyBefore(b.db, f.db, before.Add(-b.rules.reads.reach-interval).UnixMilli(), before.UnixMilli()); err != nil {
		return nil, errors.Join(err, f.close())
	}
	f.writer = newWriter(f.db, rp)
	f.rec = &recorder{Appendable: f.db}
	if f.groups, err = b.rules.groups(f.db, f.rec); err != nil {
		return nil, errors.Join(err, f.close())
	}
	for i, g := range f.groups {
		g.CopyState(snap.groups[i])
	}
	return f, nil
}

// step writes minute m of the replay and evaluates it.
func (f *fork) step(m int) (minute, error) {
	if err := f.writer.write(m, m+1); err != nil {
		return minute{}, err
	}
	for a, v := range f.alerts {
		*a = v
	}
	firing, err := evalAt(f.groups, f.rp.Start, m)
	for a := range f.alerts {
		f.alerts[a] = *a
	}
	if err != nil {
		return minute{}, err
	}
	got := f.rec.minute(f.groups)
	f.run.Timeline, f.run.minutes = append(f.run.Timeline, firing), append(f.run.minutes, got)
	return got, nil
}

func (f *fork) close() error { return errors.Join(f.db.Close(), os.RemoveAll(f.dir)) }

// Fork evaluates rp, which equals the baseline's replay before minute
// from, from there on (from must be in the baseline's forkAt). Once the
// fork's alerts, and every sample the rules may still read, are the
// baseline's at the same minute, the rest is the baseline's and is not
// evaluated again.
func (b *Baseline) Fork(from int, rp *Replay) (*Run, error) {
	f, err := b.fork(from, rp)
	if err != nil {
		return nil, err
	}
	defer f.close()
	last := lastDiffering(rp, b.replay, from)
	changed := map[string]int{} // metric name -> last minute it differed
	for m := from; m < rp.Minutes(); m++ {
		got, err := f.step(m)
		if err != nil {
			return nil, err
		}
		if b.converged(rp, b.replay, m, last, got, b.minutes[m], changed) {
			f.run.Timeline = append(f.run.Timeline, b.Timeline[m+1:]...)
			f.run.minutes = append(f.run.minutes, b.minutes[m+1:]...)
			break
		}
	}
	return &f.run, nil
}

// Pair evaluates two replays that equal the baseline's before minute from
// side by side from there on, until they agree: their alerts, and every
// sample the rules may still read, are the same, so from then on they
// fire the same. It returns what each fired until then.
func (b *Baseline) Pair(from int, x, y *Replay) (Timeline, Timeline, error) {
	fx, err := b.fork(from, x)
	if err != nil {
		return nil, nil, err
	}
	defer fx.close()
	fy, err := b.fork(from, y)
	if err != nil {
		return nil, nil, err
	}
	defer fy.close()
	last := lastDiffering(x, y, from)
	changed := map[string]int{}
	for m := from; m < x.Minutes(); m++ {
		gx, err := fx.step(m)
		if err != nil {
			return nil, nil, err
		}
		gy, err := fy.step(m)
		if err != nil {
			return nil, nil, err
		}
		if b.converged(x, y, m, last, gx, gy, changed) {
			break
		}
	}
	return fx.run.Timeline, fy.run.Timeline, nil
}

// lastDiffering is the last minute from from on at which x and y serve
// other rounds, from if none.
func lastDiffering(x, y *Replay, from int) int {
	last := from
	for m := from; m < x.Minutes(); m++ {
		if !sameRound(x, y, m) {
			last = m
		}
	}
	return last
}

// converged notes what differs between two runs at minute m (their
// replays x and y, what the rules did, got and want) and reports whether
// they go on alike: past the last minute their replays differ, the same
// alerts in the same states, and no differing sample read after m.
func (b *Baseline) converged(x, y *Replay, m, last int, got, want minute, changed map[string]int) bool {
	if !sameRound(x, y, m) {
		for _, round := range []Round{x.Rounds[x.At[m]], y.Rounds[y.At[m]]} {
			for s := range round {
				name, _, _ := strings.Cut(s, "{")
				changed[name] = m
			}
		}
	}
	for _, w := range []map[string]uint64{got.written, want.written} {
		for name := range w {
			if got.written[name] != want.written[name] {
				changed[name] = m
			}
		}
	}
	if m < last || got.alerts != want.alerts {
		return false
	}
	for name, at := range changed {
		if at+b.rules.reads.window(name) > m {
			return false
		}
	}
	return true
}

// sameRound: two replays serve the same at minute m, or the same served
// by rescheduled pods, which no rule tells apart (every expression
// aggregates the target's labels away).
func sameRound(a, b *Replay, m int) bool { return a.source(a.At[m]) == b.source(b.At[m]) }
