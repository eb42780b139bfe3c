package gaps

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
)

// lookback is the engine's, Prometheus' default; interval is the rules'
// and the scrapes', one a minute as the lifecycles are written.
const (
	lookback = 5 * time.Minute
	interval = time.Minute
)

// Rules are the rule files a replay runs, loaded once: the alerts,
// without their annotations, and the recording rules they read, directly
// or through others (the rest, for dashboards and the fleet, cannot move
// a page).
type Rules struct {
	files  []string
	order  []string // group evaluation order, as the tests' group_eval_order
	loader *loader
	reads  reads
	static map[string]map[string]string // each alert's own labels
	// Holds are each alert's for.
	Holds map[string]time.Duration
}

// LoadRules reads the rule files; order is the groups' evaluation order
// at each minute (alerts.GroupEvalOrder).
func LoadRules(files, order []string) (*Rules, error) {
	r := &Rules{
		files: files, order: order, Holds: map[string]time.Duration{}, static: map[string]map[string]string{},
		loader: &loader{files: map[string]*rulefmt.RuleGroups{}, exprs: map[string]parser.Expr{}},
		reads:  reads{byName: map[string]time.Duration{}},
	}
	all := map[string]*rulefmt.RuleGroups{}
	for _, f := range files {
		rgs, errs := rulefmt.ParseFile(f, false, model.UTF8Validation)
		if len(errs) > 0 {
			return nil, fmt.Errorf("%s: %w", f, errors.Join(errs...))
		}
		all[f] = rgs
	}
	needed, err := alertInputs(all)
	if err != nil {
		return nil, err
	}
	for f, rgs := range all {
		kept := &rulefmt.RuleGroups{}
		for _, g := range rgs.Groups {
			g.Rules = slices.DeleteFunc(slices.Clone(g.Rules), func(rule rulefmt.Rule) bool { return rule.Record != "" && !needed[rule.Record] })
			kept.Groups = append(kept.Groups, g)
			for i, rule := range g.Rules {
				// Annotations never move a page; expanding them (their
				// queries) at every evaluation of every cell would.
				g.Rules[i].Annotations = nil
				expr, err := parser.ParseExpr(rule.Expr)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", f, err)
				}
				r.reads.add(expr, interval, lookback)
				if rule.Alert != "" {
					r.Holds[rule.Alert] = time.Duration(rule.For)
					r.static[rule.Alert] = rule.Labels
				}
			}
		}
		r.loader.files[f] = kept
	}
	return r, nil
}

// alertInputs are the recording rules the alerts read, directly or
// through other recording rules.
func alertInputs(all map[string]*rulefmt.RuleGroups) (map[string]bool, error) {
	reads := map[string][]string{} // rule (alert or record) -> names it reads
	var records, queue []string
	for _, rgs := range all {
		for _, g := range rgs.Groups {
			for _, rule := range g.Rules {
				expr, err := parser.ParseExpr(rule.Expr)
				if err != nil {
					return nil, err
				}
				name := rule.Record
				if rule.Alert != "" {
					name = "alert:" + rule.Alert
					queue = append(queue, name)
				} else {
					records = append(records, name)
				}
				parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
					if vs, ok := node.(*parser.VectorSelector); ok {
						for _, m := range vs.LabelMatchers {
							if m.Name == model.MetricNameLabel {
								reads[name] = append(reads[name], m.String())
							}
						}
					}
					return nil
				})
			}
		}
	}
	needed := map[string]bool{}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		for _, matcher := range reads[name] {
			for _, record := range records {
				if needed[record] {
					continue
				}
				m, err := parser.ParseMetricSelector("{" + matcher + "}")
				if err != nil {
					return nil, err
				}
				if m[0].Matches(record) {
					needed[record] = true
					queue = append(queue, record)
				}
			}
		}
	}
	return needed, nil
}

// loader is a rules.GroupLoader of the rule files Rules kept, each
// expression parsed once: every fork loads the groups anew.
type loader struct {
	mu    sync.Mutex
	files map[string]*rulefmt.RuleGroups
	exprs map[string]parser.Expr
}

func (l *loader) Load(file string, _ bool, _ model.ValidationScheme) (*rulefmt.RuleGroups, []error) {
	if rgs, ok := l.files[file]; ok {
		return rgs, nil
	}
	return nil, []error{fmt.Errorf("%s: not loaded", file)}
}

func (l *loader) Parse(query string) (parser.Expr, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.exprs[query]; ok {
		return e, nil
	}
	e, err := parser.ParseExpr(query)
	if err == nil {
		l.exprs[query] = e
	}
	return e, err
}

// Timeline is what fired at each minute: the alerts' label sets
// (Identity), sorted.
type Timeline [][]string

// Run is a replay evaluated: what fired and what the rules did at each
// minute.
type Run struct {
	Timeline Timeline
	replay   *Replay
	minutes  []minute
}

// Baseline is a replay evaluated from minute 0 to its end, holding the
// rules' state at the minutes forks start from.
type Baseline struct {
	Run
	rules *Rules
	db    *tsdb.DB
	dir   string
	forks map[int]*snapshot
}

// minute is what the rules did at one minute: a sum of what they wrote,
// per metric name, and of their alerts' states.
type minute struct {
	written map[string]uint64
	alerts  uint64
}

// snapshot is the rules' state after a minute's evaluation. The groups
// share their alerts with the run they were copied from
// (rules.Group.CopyState, as a configuration reload carries them over),
// so the alerts' values are kept too and put back before each fork.
type snapshot struct {
	groups []*rules.Group
	alerts map[*rules.Alert]rules.Alert
}

// Run evaluates the rules on the replay minute by minute, keeping their
// state at each minute of forkAt for Fork. Close releases its storage.
func (r *Rules) Run(rp *Replay, forkAt []int) (*Baseline, error) {
	dir, err := os.MkdirTemp("", "ocl-gaps-")
	if err != nil {
		return nil, err
	}
	db, err := openDB(dir)
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	b := &Baseline{Run: Run{replay: rp}, rules: r, db: db, dir: dir, forks: map[int]*snapshot{}}
	if err := newWriter(db, rp).write(0, rp.Minutes()); err != nil {
		return nil, errors.Join(err, b.Close())
	}
	rec := &recorder{Appendable: db}
	groups, err := r.groups(db, rec)
	if err != nil {
		return nil, errors.Join(err, b.Close())
	}
	for m := range rp.Minutes() {
		if slices.Contains(forkAt, m) {
			b.forks[m] = r.snapshot(groups)
		}
		firing, err := evalAt(groups, rp.Start, m)
		if err != nil {
			return nil, errors.Join(err, b.Close())
		}
		b.Timeline = append(b.Timeline, firing)
		b.minutes = append(b.minutes, rec.minute(groups))
	}
	return b, nil
}

// Close removes the baseline's storage.
func (b *Baseline) Close() error {
	return errors.Join(b.db.Close(), os.RemoveAll(b.dir))
}

// snapshot keeps the state of groups after their last evaluation.
func (r *Rules) snapshot(from []*rules.Group) *snapshot {
	s := &snapshot{alerts: map[*rules.Alert]rules.Alert{}}
	// Not bound to any storage: they are only copied from.
	s.groups, _ = r.groups(nil, nil) // loaded once already: no error
	for i, g := range s.groups {
		g.CopyState(from[i])
		for _, rule := range g.Rules() {
			if ar, ok := rule.(*rules.AlertingRule); ok {
				ar.ForEachActiveAlert(func(a *rules.Alert) { s.alerts[a] = *a })
			}
		}
	}
	return s
}

// groups loads the rule groups in their evaluation order, reading q and
// writing to app, every alerting rule restored (it writes ALERTS from
// its first evaluation, as promtool's do).
func (r *Rules) groups(q storage.Queryable, app storage.Appendable) ([]*rules.Group, error) {
	logger := slog.New(slog.DiscardHandler)
	engine := promql.NewEngine(promql.EngineOpts{Logger: logger, MaxSamples: 50_000_000, Timeout: time.Minute, LookbackDelta: lookback})
	opts := &rules.ManagerOptions{
		Appendable: app, Queryable: q, Context: context.Background(), Logger: logger,
		NotifyFunc: func(context.Context, string, ...*rules.Alert) {}, GroupLoader: r.loader,
	}
	if q != nil {
		opts.QueryFunc = rules.EngineQueryFunc(engine, q)
	}
	loaded, errs := rules.NewManager(opts).LoadGroups(interval, labels.EmptyLabels(), "", nil, false, r.files...)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	var out []*rules.Group
	for _, name := range r.order {
		for _, g := range loaded {
			if g.Name() == name {
				out = append(out, g)
			}
		}
	}
	if len(out) != len(loaded) {
		return nil, fmt.Errorf("%d rule groups, %d in the evaluation order %v", len(loaded), len(out), r.order)
	}
	for _, g := range out {
		for _, rule := range g.Rules() {
			if ar, ok := rule.(*rules.AlertingRule); ok {
				ar.SetRestored(true)
			}
		}
	}
	return out, nil
}

// evalAt evaluates every group at minute m and returns the firing alerts.
func evalAt(groups []*rules.Group, start time.Time, m int) ([]string, error) {
	ts := start.Add(time.Duration(m) * interval)
	var firing []string
	for _, g := range groups {
		g.Eval(context.Background(), ts)
		for _, rule := range g.Rules() {
			if err := rule.LastError(); err != nil {
				return nil, fmt.Errorf("minute %d: %s: %w", m, rule.Name(), err)
			}
			if ar, ok := rule.(*rules.AlertingRule); ok {
				for _, a := range ar.ActiveAlerts() {
					if a.State == rules.StateFiring {
						firing = append(firing, Identity(a.Labels))
					}
				}
			}
		}
	}
	slices.Sort(firing)
	return firing, nil
}

// Identity writes an alert's labels as the lifecycles write it:
// alertname{label="value", ...}.
func Identity(lbls labels.Labels) string {
	return lbls.Get(labels.AlertName) + labels.NewBuilder(lbls).Del(labels.AlertName).Labels().String()
}
