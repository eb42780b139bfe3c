// Package gaps replays a lifecycle's scrapes through the bundle's rules with
// Prometheus' own rule engine (the code promtool runs), minute by minute,
// then again with the exporter absent for a while at each point that
// matters: the gap matrix of docs/alerts.md. A page must come through a
// short gap unchanged, and a long one must raise OCLExporterDown and
// nothing else.
package gaps

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// Round is what Prometheus stored from one round of scrapes of the
// exporter's targets: every series, the target's labels included, in
// PromQL notation, with its value, each target's up among them.
type Round map[string]float64

// Replay is what Prometheus scraped minute by minute: Rounds[At[m]] at
// minute m. Minutes that scrape the same objects share a round.
type Replay struct {
	Start  time.Time
	Rounds []Round
	At     []int
	// origin is, for a round served by rescheduled pods, the round it
	// copies under the new pods' names; absent for any other.
	origin map[int]int
	parsed *parsed // shared with the replays derived from this one
}

// parsed are series parsed once: each cell's replay writes them anew.
type parsed struct {
	mu     sync.Mutex
	series map[string]labels.Labels
}

// labels are the labels of series s, one of the replay's.
func (r *Replay) labels(s string) (labels.Labels, error) {
	p := r.cache()
	p.mu.Lock()
	defer p.mu.Unlock()
	if l, ok := p.series[s]; ok {
		return l, nil
	}
	l, err := parser.ParseMetric(s)
	if err != nil {
		return labels.EmptyLabels(), fmt.Errorf("series %s: %w", s, err)
	}
	p.series[s] = l
	return l, nil
}

func (r *Replay) cache() *parsed {
	if r.parsed == nil {
		r.parsed = &parsed{series: map[string]labels.Labels{}}
	}
	return r.parsed
}

// Minutes is how many minutes the replay lasts, minute 0 included.
func (r *Replay) Minutes() int { return len(r.At) }

// Append adds minutes scraped as round (nil: no target at all).
func (r *Replay) Append(round Round, minutes int) {
	r.Rounds = append(r.Rounds, round)
	for range minutes {
		r.At = append(r.At, len(r.Rounds)-1)
	}
}

// Gap is the replay with the exporter unreachable from minute from for
// length minutes. A failed scrape (rescheduled false: the process restarts
// in its pod) leaves each target's up at 0; a rescheduled exporter (its pod
// evicted, a new one started) leaves no target until the new pods serve,
// under new names and addresses from then on. Either way Prometheus marks
// every series of the targets stale at the first missed scrape.
func (r *Replay) Gap(from, length int, rescheduled bool) *Replay {
	out := &Replay{Start: r.Start, Rounds: slices.Clone(r.Rounds), At: slices.Clone(r.At), origin: maps.Clone(r.origin), parsed: r.cache()}
	if out.origin == nil {
		out.origin = map[int]int{}
	}
	down := len(out.Rounds)
	if rescheduled {
		out.Rounds = append(out.Rounds, Round{})
	} else {
		failed := Round{}
		for s := range r.Rounds[r.At[from-1]] {
			if strings.HasPrefix(s, "up{") {
				failed[s] = 0
			}
		}
		out.Rounds = append(out.Rounds, failed)
	}
	until := min(from+length, len(out.At))
	for m := from; m < until; m++ {
		out.At[m] = down
	}
	if rescheduled {
		moved := map[int]int{}
		for m := until; m < len(out.At); m++ {
			i := out.At[m]
			if _, ok := moved[i]; !ok {
				moved[i] = len(out.Rounds)
				out.origin[moved[i]] = r.source(i)
				out.Rounds = append(out.Rounds, r.reschedule(r.Rounds[i]))
			}
			out.At[m] = moved[i]
		}
	}
	return out
}

// Frozen is the replay with the exporter serving, from minute from for
// length minutes, what it served at minute from-1: what Prometheus could
// know through a gap there. A page may move with a gap only as it moves
// here, where a change inside the gap shows when the gap ends.
func (r *Replay) Frozen(from, length int) *Replay {
	out := &Replay{Start: r.Start, Rounds: r.Rounds, At: slices.Clone(r.At), origin: r.origin, parsed: r.cache()}
	for m := from; m < min(from+length, len(out.At)); m++ {
		out.At[m] = out.At[from-1]
	}
	return out
}

// Differs reports whether the exporter serves anything else at some
// minute than in o.
func (r *Replay) Differs(o *Replay) bool {
	for m := range r.At {
		if !sameRound(r, o, m) {
			return true
		}
	}
	return false
}

// source is the round i copies, or i.
func (r *Replay) source(i int) int {
	if o, ok := r.origin[i]; ok {
		return o
	}
	return i
}

// reschedule is a round served by new pods of the same Deployment: the
// target labels pod and instance change (the exporter has neither label
// of its own).
func (r *Replay) reschedule(in Round) Round {
	out := make(Round, len(in))
	for s, v := range in {
		lbls, err := r.labels(s)
		if err != nil {
			panic(err) // the replay's own series: parsed when it was written
		}
		b := labels.NewBuilder(lbls)
		if pod := lbls.Get("pod"); pod != "" {
			b.Set("pod", pod+"-r")
		}
		if inst := lbls.Get("instance"); inst != "" {
			b.Set("instance", "r-"+inst)
		}
		out[format(b.Labels())] = v
	}
	return out
}

// format writes a series as the replays key it: name{label="value", ...}.
func format(lbls labels.Labels) string {
	return lbls.Get(model.MetricNameLabel) + labels.NewBuilder(lbls).Del(model.MetricNameLabel).Labels().String()
}

// series lays the replay out per series: its value at each minute, and
// whether it was scraped then.
func (r *Replay) series() map[string][]sample {
	out := map[string][]sample{}
	for m, i := range r.At {
		for s, v := range r.Rounds[i] {
			if out[s] == nil {
				out[s] = make([]sample, len(r.At))
			}
			out[s][m] = sample{v, true}
		}
	}
	return out
}

// Values are the replay per series as promtool's input reads it: each
// minute's value without an exponent (promtool's expanding notation, a+bxn,
// would misread one), "" where the series was not scraped.
func (r *Replay) Values() map[string][]string {
	out := map[string][]string{}
	for s, samples := range r.series() {
		vs := make([]string, len(samples))
		for m, v := range samples {
			if v.present {
				vs[m] = strconv.FormatFloat(v.v, 'f', -1, 64)
			}
		}
		out[s] = vs
	}
	return out
}

type sample struct {
	v       float64
	present bool
}
