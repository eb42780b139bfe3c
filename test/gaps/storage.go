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

// writer writes a replay into a storage minute by minute, a series that
// vanishes getting a stale marker at the first minute it is missing, as
// Prometheus writes on a failed scrape or a dropped target.
type writer struct {
	db   *tsdb.DB
	rp   *Replay
	refs map[string]storage.SeriesRef
}

func newWriter(db *tsdb.DB, rp *Replay) *writer {
	return &writer{db: db, rp: rp, refs: map[string]storage.SeriesRef{}}
}

// write writes the minutes from until before until.
func (w *writer) write(from, until int) error {
	app := w.db.Appender(context.Background())
	for m := from; m < until; m++ {
		if err := w.minute(app, m); err != nil {
			return errors.Join(err, app.Rollback())
		}
	}
	return app.Commit()
}

func (w *writer) minute(app storage.Appender, m int) error {
	rp := w.rp
	ts := rp.Start.Add(time.Duration(m) * interval).UnixMilli()
	add := func(s string, v float64) error {
		lbls, err := rp.labels(s)
		if err != nil {
			return err
		}
		if w.refs[s], err = app.Append(w.refs[s], lbls, ts, v); err != nil {
			return fmt.Errorf("series %s at minute %d: %w", s, m, err)
		}
		return nil
	}
	now := rp.Rounds[rp.At[m]]
	for s, v := range now {
		if err := add(s, v); err != nil {
			return err
		}
	}
	if m == 0 || rp.At[m-1] == rp.At[m] {
		return nil
	}
	for s := range rp.Rounds[rp.At[m-1]] {
		if _, ok := now[s]; !ok {
			if err := add(s, math.Float64frombits(value.StaleNaN)); err != nil {
				return err
			}
		}
	}
	return nil
}

// copyBefore copies the samples of from between the times since and
// before into to: the inputs and the rules' results a fork starts from.
func copyBefore(from, to *tsdb.DB, since, before int64) error {
	q, err := from.Querier(since, before-1)
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
