package gaps

import (
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// reads is how long the rules read each metric's samples after they are
// written: the range and offset of a range selector (and the ranges of
// the subqueries around it); the offset of an instant selector and one
// evaluation more, since an instant selector reads the newest sample
// (a stale marker included, which every vanished series gets) and so
// reads the same in two runs once their samples agree again. A fork whose
// alerts and samples have been the baseline's for that long goes on as
// the baseline does.
type reads struct {
	byName   map[string]time.Duration
	patterns []patternRead // selectors whose name is a pattern
	// reach is how far back any rule reads at all: what a fork copies of
	// the baseline's samples.
	reach time.Duration
}

type patternRead struct {
	m      *labels.Matcher
	window time.Duration
}

func (r *reads) add(expr parser.Expr, interval, lookback time.Duration) {
	parser.Inspect(expr, func(node parser.Node, path []parser.Node) error {
		vs, ok := node.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		window, reach := vs.OriginalOffset+interval, vs.OriginalOffset+lookback
		if len(path) > 0 {
			if ms, ok := path[len(path)-1].(*parser.MatrixSelector); ok {
				window, reach = ms.Range+vs.OriginalOffset, ms.Range+vs.OriginalOffset
			}
		}
		for _, p := range path {
			if sq, ok := p.(*parser.SubqueryExpr); ok {
				window += sq.Range + sq.OriginalOffset
				reach += sq.Range + sq.OriginalOffset
			}
		}
		r.reach = max(r.reach, reach)
		for _, m := range vs.LabelMatchers {
			if m.Name != model.MetricNameLabel {
				continue
			}
			if m.Type == labels.MatchEqual {
				r.byName[m.Value] = max(r.byName[m.Value], window)
			} else {
				r.patterns = append(r.patterns, patternRead{m, window})
			}
		}
		return nil
	})
}

// window is how long a sample of the metric name is read after it is
// written, in whole minutes (rounded up).
func (r *reads) window(name string) int {
	w := r.byName[name]
	for _, p := range r.patterns {
		if p.m.Matches(name) {
			w = max(w, p.window)
		}
	}
	return int((w + interval - 1) / interval)
}
