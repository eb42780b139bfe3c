package gaps

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
)

// recorder sums what the rules write at each minute, per metric name.
type recorder struct {
	storage.Appendable
	written map[string]uint64
}

func (r *recorder) Appender(ctx context.Context) storage.Appender {
	return recording{r.Appendable.Appender(ctx), r}
}

// minute returns what the rules wrote since the last call, and the
// state of the groups' alerts.
func (r *recorder) minute(groups []*rules.Group) minute {
	out := minute{written: r.written}
	r.written = nil
	for _, g := range groups {
		for _, rule := range g.Rules() {
			if ar, ok := rule.(*rules.AlertingRule); ok {
				ar.ForEachActiveAlert(func(a *rules.Alert) {
					if a.State != rules.StateInactive {
						out.alerts += a.Labels.Hash() ^ uint64(a.State)<<32 ^ uint64(a.ActiveAt.Unix())
					}
				})
			}
		}
	}
	return out
}

type recording struct {
	storage.Appender
	r *recorder
}

func (a recording) Append(ref storage.SeriesRef, l labels.Labels, t int64, v float64) (storage.SeriesRef, error) {
	if a.r.written == nil {
		a.r.written = map[string]uint64{}
	}
	h := fnv.New64a()
	fmt.Fprint(h, math.Float64bits(v))
	a.r.written[l.Get(model.MetricNameLabel)] += l.Hash() ^ h.Sum64()
	return a.Appender.Append(ref, l, t, v)
}

func openDB(dir string) (*tsdb.DB, error) {
	opts := tsdb.DefaultOptions()
	opts.WALSegmentSize = -1 // in memory: the storage lives for one run
	opts.MinBlockDuration = int64(7 * 24 * time.Hour / time.Millisecond)
	opts.MaxBlockDuration = opts.MinBlockDuration
	db, err := tsdb.Open(dir, slog.New(slog.DiscardHandler), nil, opts, nil)
	if err != nil {
		return nil, err
	}
	db.DisableCompactions()
	return db, nil
}

// appendSeries writes the replay's samples from minute from on, a series
// that vanishes getting a stale marker at the first minute it is
// missing, as Prometheus writes on a failed scrape or a dropped target.
func appendSeries(db *tsdb.DB, rp *Replay, from int) error {
	app := db.Appender(context.Background())
	for s, vals := range rp.series() {
		lbls, err := parser.ParseMetric(s)
		if err != nil {
			return fmt.Errorf("series %s: %w", s, err)
		}
		var ref storage.SeriesRef
		for m := from; m < len(vals); m++ {
			v := vals[m]
			switch {
			case v.present:
			case m > 0 && vals[m-1].present:
				v.v = math.Float64frombits(value.StaleNaN)
			default:
				continue
			}
			ts := rp.Start.Add(time.Duration(m) * interval).UnixMilli()
			if ref, err = app.Append(ref, lbls, ts, v.v); err != nil {
				return errors.Join(fmt.Errorf("series %s at minute %d: %w", s, m, err), app.Rollback())
			}
		}
	}
	return app.Commit()
}

// copyBefore copies every sample of from before the time before into to:
// the inputs and the rules' results a fork starts from.
func copyBefore(from, to *tsdb.DB, before int64) error {
	q, err := from.Querier(math.MinInt64, before-1)
	if err != nil {
		return err
	}
	defer q.Close()
	app := to.Appender(context.Background())
	ss := q.Select(context.Background(), false, nil, labels.MustNewMatcher(labels.MatchRegexp, model.MetricNameLabel, ".+"))
	var it chunkenc.Iterator
	for ss.Next() {
		s := ss.At()
		it = s.Iterator(it)
		var ref storage.SeriesRef
		for it.Next() == chunkenc.ValFloat {
			ts, v := it.At()
			if ref, err = app.Append(ref, s.Labels(), ts, v); err != nil {
				return errors.Join(err, app.Rollback())
			}
		}
		if err := it.Err(); err != nil {
			return errors.Join(err, app.Rollback())
		}
	}
	if err := ss.Err(); err != nil {
		return errors.Join(err, app.Rollback())
	}
	return app.Commit()
}
