// Package history writes a Prometheus TSDB holding what a real Prometheus
// would have stored while it scraped a lifecycle and evaluated the
// bundle's rules: the exporter's series of a generated promtool lifecycle
// test (alerts/tests/lifecycle-*.yaml) at their real timestamps, and the
// rules' results (ALERTS, ALERTS_FOR_STATE and the recording rules),
// evaluated minute by minute by Prometheus' own rule engine as promtool
// does. A real Prometheus started on the directory then serves the
// lifecycle as history, for `ocl_exporter review`.
package history

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
	"go.yaml.in/yaml/v3"
)

// promtoolTest is the part of a promtool unit test file Write reads.
// It is read as promtool reads it (YAML into strings: "0x100" is 0 a
// hundred times, not the hexadecimal 256 a YAML-to-JSON reader makes it).
type promtoolTest struct {
	RuleFiles          []string       `yaml:"rule_files"`
	EvaluationInterval model.Duration `yaml:"evaluation_interval"`
	Tests              []struct {
		Interval       model.Duration `yaml:"interval"`
		StartTimestamp time.Time      `yaml:"start_timestamp"`
		InputSeries    []struct {
			Series string `yaml:"series"`
			Values string `yaml:"values"`
		} `yaml:"input_series"`
	} `yaml:"tests"`
}

// Written is the time range Write stored.
type Written struct {
	Start, End time.Time
}

// Write stores the first test of the promtool file testFile, and its rules'
// results, as one persisted block in dir.
func Write(dir, testFile string) (Written, error) {
	b, err := os.ReadFile(testFile)
	if err != nil {
		return Written{}, err
	}
	var pt promtoolTest
	if err := yaml.Unmarshal(b, &pt); err != nil {
		return Written{}, fmt.Errorf("%s: %w", testFile, err)
	}
	if len(pt.Tests) == 0 {
		return Written{}, fmt.Errorf("%s: no test", testFile)
	}
	test := pt.Tests[0]
	interval, evalEvery := time.Duration(test.Interval), time.Duration(pt.EvaluationInterval)
	if interval == 0 || evalEvery == 0 {
		return Written{}, fmt.Errorf("%s: interval and evaluation_interval must be set", testFile)
	}
	var ruleFiles []string
	for _, pattern := range pt.RuleFiles {
		m, err := filepath.Glob(filepath.Join(filepath.Dir(testFile), pattern))
		if err != nil {
			return Written{}, err
		}
		ruleFiles = append(ruleFiles, m...)
	}
	type input struct {
		lbls labels.Labels
		vals []parser.SequenceValue
	}
	inputs := make([]input, 0, len(test.InputSeries))
	start := test.StartTimestamp
	end := start
	for _, s := range test.InputSeries {
		lbls, vals, err := parser.ParseSeriesDesc(s.Series + " " + s.Values)
		if err != nil {
			return Written{}, fmt.Errorf("%s: series %s: %w", testFile, s.Series, err)
		}
		inputs = append(inputs, input{lbls, vals})
		for i, v := range vals {
			if ts := start.Add(time.Duration(i) * interval); !v.Omitted && ts.After(end) {
				end = ts
			}
		}
	}
	series := func(app storage.Appender) error {
		for _, in := range inputs {
			for i, v := range in.vals {
				if v.Omitted {
					continue
				}
				ts := start.Add(time.Duration(i) * interval)
				if _, err := app.Append(0, in.lbls, ts.UnixMilli(), v.Value); err != nil {
					return fmt.Errorf("%s: %s at %s: %w", testFile, in.lbls, ts, err)
				}
			}
		}
		return nil
	}
	w := Written{Start: start, End: end}
	return w, Store(dir, w, series, ruleFiles, evalEvery)
}

// Store writes into dir, as one persisted block, what series appends and
// the results of the rules of ruleFiles evaluated every evalEvery from
// w.Start to w.End, in the files' order, by Prometheus' rule engine.
func Store(dir string, w Written, series func(storage.Appender) error, ruleFiles []string, evalEvery time.Duration) error {
	opts := tsdb.DefaultOptions()
	// One block for the whole range: no compaction moves the head's lower
	// bound while the rules append at earlier times.
	opts.MinBlockDuration = int64(7 * 24 * time.Hour / time.Millisecond)
	opts.MaxBlockDuration = opts.MinBlockDuration
	logger := slog.New(slog.DiscardHandler)
	db, err := tsdb.Open(dir, logger, nil, opts, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	db.DisableCompactions()

	app := db.Appender(context.Background())
	if err := series(app); err != nil {
		return err
	}
	if err := app.Commit(); err != nil {
		return err
	}

	ctx := context.Background()
	engine := promql.NewEngine(promql.EngineOpts{Logger: logger, MaxSamples: 50_000_000, Timeout: time.Minute, LookbackDelta: 5 * time.Minute})
	mgr := rules.NewManager(&rules.ManagerOptions{
		QueryFunc: rules.EngineQueryFunc(engine, db), Appendable: db, Queryable: db,
		Context: ctx, Logger: logger, NotifyFunc: func(context.Context, string, ...*rules.Alert) {},
	})
	groups, errs := mgr.LoadGroups(evalEvery, labels.EmptyLabels(), "", nil, false, ruleFiles...)
	if len(errs) > 0 {
		return fmt.Errorf("loading %v: %v", ruleFiles, errs)
	}
	ordered := make([]*rules.Group, 0, len(groups))
	for _, f := range ruleFiles {
		for _, g := range groups {
			if g.File() == f {
				ordered = append(ordered, g)
			}
		}
	}
	for _, g := range ordered {
		for _, r := range g.Rules() {
			if ar, ok := r.(*rules.AlertingRule); ok {
				// A Prometheus that ran through the range has nothing to
				// restore: it writes ALERTS from the first evaluation.
				ar.SetRestored(true)
			}
		}
	}
	for ts := w.Start; !ts.After(w.End); ts = ts.Add(evalEvery) {
		for _, g := range ordered {
			g.Eval(ctx, ts)
		}
	}

	// Persist the head as a block, so a Prometheus of another version
	// reads it without replaying this version's write-ahead log.
	if err := db.CompactHead(tsdb.NewRangeHead(db.Head(), w.Start.UnixMilli(), w.End.Add(evalEvery).UnixMilli())); err != nil {
		return fmt.Errorf("compacting: %w", err)
	}
	if err := db.Close(); err != nil {
		return err
	}
	for _, d := range []string{"wal", "chunks_head"} {
		if err := os.RemoveAll(filepath.Join(dir, d)); err != nil {
			return err
		}
	}
	return nil
}
