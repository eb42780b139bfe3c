package review

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"time"

	"github.com/prometheus/common/model"

	"github.com/ocl-exporter/ocl_exporter/plaintext"
)

// Bounds of a plausible sample. A querier answers what it holds, and a
// broken or hostile exporter, relabelling or remote write can make that
// NaN, ±Inf, a negative count or a time in year 300,000: such a sample
// would become a negative duration or a time JSON cannot write.
const (
	// maxCount bounds a count (failed pods): no build retries a million
	// times.
	maxCount = 1e6
	// slack is how far past the window's end a timestamp value may lie
	// (clocks differ).
	slack = 24 * time.Hour
)

// minUnixTime is the earliest timestamp value a series may hold: no
// MachineOSBuild is older than OCL.
var minUnixTime = float64(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Unix())

// timestampQueries hold Unix times as values; countQueries counts.
var (
	timestampQueries = []string{qCreated, qStarted, qEnded}
	countQueries     = []string{qPodFailures}
)

// plausible says whether sample v of query name at its timestamp can be
// read in window w.
func plausible(name string, v model.SamplePair, w Window) bool {
	t := v.Timestamp.Time()
	f := float64(v.Value)
	switch {
	case t.Before(w.From.Add(-w.Step)) || t.After(w.To.Add(w.Step)):
		return false
	case math.IsNaN(f) || math.IsInf(f, 0):
		return false
	case slices.Contains(timestampQueries, name):
		return f >= minUnixTime && f <= float64(w.To.Add(slack).Unix())
	case slices.Contains(countQueries, name):
		return f >= 0 && f <= maxCount
	}
	return true
}

var metricName = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*\{`)

// sanitize returns s with every label value cleaned (plaintext.Line: the
// querier's labels are printed in every format) and the implausible
// samples dropped, with one warning per query that had some.
func sanitize(s Series, w Window) (Series, []string) {
	out := Series{}
	var warnings []string
	for _, name := range slices.Sorted(maps.Keys(s)) {
		dropped := 0
		for _, ss := range s[name] {
			c := &model.SampleStream{Metric: model.Metric{}}
			for k, v := range ss.Metric {
				c.Metric[model.LabelName(plaintext.Line(string(k)))] = model.LabelValue(plaintext.Line(string(v)))
			}
			for _, v := range ss.Values {
				if plausible(name, v, w) {
					c.Values = append(c.Values, v)
				} else {
					dropped++
				}
			}
			if len(c.Values) > 0 {
				out[name] = append(out[name], c)
			}
		}
		if dropped > 0 {
			what := name
			if m := metricName.FindString(queries[name]); m != "" {
				what = m[:len(m)-1]
			}
			warnings = append(warnings, fmt.Sprintf("ignored %d sample(s) of %s: NaN, ±Inf, a count out of [0, %g], a time out of [2020, --to + %s], or a sample outside the window", dropped, what, float64(maxCount), slack))
		}
	}
	return out, warnings
}
