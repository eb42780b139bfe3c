package review

import (
	"math"
	"time"

	"github.com/prometheus/common/model"
)

// spans reads the moments a series is present, a step apart, as windows:
// a gap of more than a step ends one. The last ends nil when it lasts to
// the window's end.
func spans(vs []model.SamplePair, w Window) []Span {
	var out []Span
	for i, v := range vs {
		t := v.Timestamp.Time()
		if i == 0 || t.Sub(vs[i-1].Timestamp.Time()) > w.Step {
			if i > 0 {
				end := vs[i-1].Timestamp.Time().Add(w.Step)
				out[len(out)-1].End = &end
			}
			out = append(out, Span{Start: t})
		}
	}
	if n := len(out); n > 0 {
		last := vs[len(vs)-1].Timestamp.Time()
		if w.To.Sub(last) >= w.Step {
			end := last.Add(w.Step)
			out[n-1].End = &end
		}
	}
	return out
}

// lastValue is the last sample's value that is a number.
func lastValue(vs []model.SamplePair) (float64, bool) {
	for i := len(vs) - 1; i >= 0; i-- {
		if f := float64(vs[i].Value); !math.IsNaN(f) {
			return f, true
		}
	}
	return 0, false
}

func unixTime(f float64) *time.Time {
	if f <= 0 {
		return nil
	}
	t := time.Unix(0, int64(f*float64(time.Second))).UTC()
	return &t
}

// bySignal orders signals by when they showed; at the same moment a
// classified failure (a build's, a node's) before the state it explains
// (the pool Degraded).
func bySignal(x, y Signal) int {
	if c := x.Span.Start.Compare(y.Span.Start); c != 0 {
		return c
	}
	switch {
	case x.Class != "" && y.Class == "":
		return -1
	case x.Class == "" && y.Class != "":
		return 1
	}
	return 0
}

// poolSignals are the build and node failures of a pool, as signals.
func poolSignals(p *PoolReport) []Signal {
	var out []Signal
	for _, b := range p.Builds {
		out = append(out, b.Failures...)
	}
	for _, n := range p.Rollout.Nodes {
		out = append(out, n.Failures...)
	}
	return out
}

// addSignal adds one window of a failure series (class, excerpt) to the
// signals of one object: the same class extends its signal, keeping the
// first excerpt and the last.
func addSignal(sigs []Signal, what string, l model.Metric, sp Span) []Signal {
	class, excerpt := string(l["class"]), string(l["excerpt"])
	sp = utcSpan(sp)
	for i := range sigs {
		if sigs[i].Class != class {
			continue
		}
		if sp.Start.Before(sigs[i].Span.Start) {
			sigs[i].Span.Start, sigs[i].First = sp.Start, excerpt
		}
		if sigs[i].Span.End != nil && (sp.End == nil || sp.End.After(*sigs[i].Span.End)) {
			sigs[i].Span.End, sigs[i].Last = sp.End, excerpt
		}
		return sigs
	}
	return append(sigs, Signal{What: what, Class: class, Span: sp, First: excerpt, Last: excerpt})
}

// signalBefore is the first signal that showed before (or at) t.
func signalBefore(sigs []Signal, t time.Time) *Signal {
	for i := range sigs {
		if !sigs[i].Span.Start.After(t) {
			s := sigs[i]
			return &s
		}
	}
	return nil
}

// summarize counts pages (alerts not of severity info) and times them
// against the first signal.
func summarize(sigs []Signal, alerts []Alert, builds []BuildReport, nodes []NodeReport) Summary {
	var s Summary
	if len(sigs) > 0 {
		first := sigs[0]
		s.FirstSignal = &first
	}
	resolved := true
	var last time.Time
	for _, a := range alerts {
		if a.Severity == "info" {
			continue
		}
		s.Pages++
		if s.FirstPage == nil || a.Span.Start.Before(*s.FirstPage) {
			t := a.Span.Start
			s.FirstPage = &t
		}
		if a.Span.End == nil {
			resolved = false
		} else if a.Span.End.After(last) {
			last = *a.Span.End
		}
	}
	if s.FirstPage != nil && s.FirstSignal != nil && !s.FirstPage.Before(s.FirstSignal.Span.Start) {
		s.TimeToDetect = durationPtr(s.FirstPage.Sub(s.FirstSignal.Span.Start))
	}
	if s.Pages > 0 && resolved {
		s.Resolved = &last
		if s.FirstSignal != nil && !last.Before(s.FirstSignal.Span.Start) {
			s.TimeToResolve = durationPtr(last.Sub(s.FirstSignal.Span.Start))
		}
	}
	s.Builds = len(builds)
	for _, b := range builds {
		s.FailedPods += b.PodFailures
	}
	for _, n := range nodes {
		s.NodesOffTarget++
		if len(n.Failures) > 0 {
			s.NodesFailing++
		}
	}
	return s
}

// rolloutDuration runs from the first node targeted to the last one on
// target, when every node targeted in the window is.
func rolloutDuration(nodes []NodeReport) *Duration {
	var first, last time.Time
	for _, n := range nodes {
		if n.Targeted == nil {
			continue
		}
		if n.Reached == nil {
			return nil
		}
		if first.IsZero() || n.Targeted.Before(first) {
			first = *n.Targeted
		}
		if n.Reached.After(last) {
			last = *n.Reached
		}
	}
	if first.IsZero() || last.Before(first) {
		return nil
	}
	return durationPtr(last.Sub(first))
}

func firstMoment(b BuildReport) time.Time {
	switch {
	case b.Created != nil:
		return *b.Created
	case len(b.Phases) > 0:
		return b.Phases[0].At
	}
	return time.Time{}
}

func cmpTime(a, b *time.Time) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	return a.Compare(*b)
}

func utcSpan(s Span) Span { return Span{Start: s.Start.UTC(), End: utcPtr(s.End)} }

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
