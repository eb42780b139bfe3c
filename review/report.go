package review

import (
	"errors"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/prometheus/common/model"

	"github.com/ocl-exporter/ocl_exporter/plaintext"
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

// errNoExporter: the window holds none of the exporter's series.
var errNoExporter = errors.New("no ocl_exporter series in the window: the exporter was not scraped then, " +
	"Prometheus no longer holds that time (its retention), or --cluster names no cluster it holds")

// Build reads the series of one window, and the warnings the querier
// returned with them, into a report. Any warning from the querier makes
// the report partial: it concludes no "no incident" from it.
func Build(s Series, warnings []string, w Window, f Filter) (*Report, error) {
	r := &Report{From: w.From.UTC(), To: w.To.UTC(), Step: Duration(w.Step), Cluster: plaintext.Line(f.Cluster), Pool: plaintext.Line(f.Pool)}
	for _, warning := range warnings {
		r.Warnings = append(r.Warnings, plaintext.Line(warning))
	}
	r.Partial = len(warnings) > 0
	s, dropped := sanitize(s, w)
	r.Warnings = append(r.Warnings, dropped...)
	exp := s[qExporter]
	if len(exp) == 0 || len(exp[0].Values) == 0 {
		return nil, errNoExporter
	}
	r.DataFrom = exp[0].Values[0].Timestamp.Time().UTC()

	pools := map[string]*PoolReport{}
	pool := func(name string) *PoolReport {
		if pools[name] == nil {
			pools[name] = &PoolReport{Pool: name}
		}
		return pools[name]
	}
	builds := map[string]*BuildReport{}
	buildPool := map[string]string{}
	build := func(l model.Metric) *BuildReport {
		name := string(l["machineosbuild"])
		if builds[name] == nil {
			builds[name] = &BuildReport{Name: name}
		}
		buildPool[name] = string(l["pool"])
		return builds[name]
	}

	for _, ss := range s[qPhase] {
		b := build(ss.Metric)
		for _, sp := range spans(ss.Values, w) {
			b.Phases = append(b.Phases, Change{At: sp.Start.UTC(), Value: string(ss.Metric["phase"])})
		}
	}
	for _, q := range []struct {
		name string
		set  func(*BuildReport, *time.Time)
	}{
		{qCreated, func(b *BuildReport, t *time.Time) { b.Created = t }},
		{qStarted, func(b *BuildReport, t *time.Time) { b.Started = t }},
		{qEnded, func(b *BuildReport, t *time.Time) { b.Ended = t }},
	} {
		for _, ss := range s[q.name] {
			if v, ok := lastValue(ss.Values); ok {
				q.set(build(ss.Metric), unixTime(v))
			}
		}
	}
	for _, ss := range s[qPodFailures] {
		b := build(ss.Metric)
		for _, v := range ss.Values {
			b.PodFailures = max(b.PodFailures, int(v.Value))
		}
	}
	for _, ss := range s[qBuildFailure] {
		b := build(ss.Metric)
		for _, sp := range spans(ss.Values, w) {
			b.Failures = addSignal(b.Failures, "MachineOSBuild "+b.Name+" failing", ss.Metric, sp)
		}
	}
	for _, b := range builds {
		slices.SortFunc(b.Phases, func(x, y Change) int { return x.At.Compare(y.At) })
		if b.Started != nil && b.Ended != nil && !b.Ended.Before(*b.Started) {
			b.Duration = durationPtr(b.Ended.Sub(*b.Started))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(builds)) {
		p := pool(buildPool[name])
		p.Builds = append(p.Builds, *builds[name])
	}
	for _, p := range pools {
		slices.SortStableFunc(p.Builds, func(x, y BuildReport) int { return firstMoment(x).Compare(firstMoment(y)) })
	}

	for _, ss := range s[qCurrentBuild] {
		p := pool(string(ss.Metric["pool"]))
		for _, sp := range spans(ss.Values, w) {
			p.CurrentBuild = append(p.CurrentBuild, Change{At: sp.Start.UTC(), Value: string(ss.Metric["machineosbuild"])})
		}
	}
	for _, q := range []struct{ name, what string }{
		{qSecret, "Secret missing"},
		{qPoolMissing, "MachineConfigPool missing"},
	} {
		for _, ss := range s[q.name] {
			p := pool(string(ss.Metric["pool"]))
			what := q.what
			if sec := ss.Metric["secret"]; sec != "" {
				what += ": " + string(ss.Metric["field"]) + " " + string(sec)
			}
			for _, sp := range spans(ss.Values, w) {
				p.Signals = append(p.Signals, Signal{What: what, Span: utcSpan(sp)})
			}
		}
	}

	nodes := map[string]map[string]*NodeReport{} // pool, node
	node := func(l model.Metric) *NodeReport {
		pn, n := string(l["pool"]), string(l["node"])
		if nodes[pn] == nil {
			nodes[pn] = map[string]*NodeReport{}
		}
		if nodes[pn][n] == nil {
			nodes[pn][n] = &NodeReport{Node: n}
		}
		return nodes[pn][n]
	}
	for _, ss := range s[qOffTarget] {
		n := node(ss.Metric)
		pool(string(ss.Metric["pool"]))
		sps := spans(ss.Values, w)
		if len(sps) == 0 {
			continue
		}
		if first := sps[0].Start; first.Sub(r.DataFrom) >= w.Step {
			t := first.UTC()
			n.Targeted = &t
		}
		n.Reached = utcPtr(sps[len(sps)-1].End)
	}
	for _, ss := range s[qNodeFailure] {
		n := node(ss.Metric)
		pool(string(ss.Metric["pool"]))
		for _, sp := range spans(ss.Values, w) {
			n.Failures = addSignal(n.Failures, "node "+n.Node+" failing", ss.Metric, sp)
		}
	}
	for pn, ns := range nodes {
		p := pool(pn)
		for _, name := range slices.Sorted(maps.Keys(ns)) {
			p.Rollout.Nodes = append(p.Rollout.Nodes, *ns[name])
		}
		slices.SortStableFunc(p.Rollout.Nodes, func(x, y NodeReport) int { return cmpTime(x.Targeted, y.Targeted) })
		p.Rollout.Duration = rolloutDuration(p.Rollout.Nodes)
	}
	for _, ss := range s[qCondition] {
		p := pool(string(ss.Metric["pool"]))
		for _, sp := range spans(ss.Values, w) {
			if ss.Metric["condition"] == "Updating" {
				p.Rollout.Updating = append(p.Rollout.Updating, utcSpan(sp))
			} else {
				p.Rollout.Degraded = append(p.Rollout.Degraded, utcSpan(sp))
				p.Signals = append(p.Signals, Signal{What: "MachineConfigPool " + p.Pool + " Degraded", Span: utcSpan(sp)})
			}
		}
	}
	for _, ss := range s[qPaused] {
		p := pool(string(ss.Metric["pool"]))
		for _, sp := range spans(ss.Values, w) {
			p.Rollout.Paused = append(p.Rollout.Paused, utcSpan(sp))
		}
	}
	for _, ss := range s[qAlerts] {
		labels := map[string]string{}
		for k, v := range ss.Metric {
			switch k {
			case model.AlertNameLabel, "severity", "namespace", "cluster":
			default:
				labels[string(k)] = string(v)
			}
		}
		for _, sp := range spans(ss.Values, w) {
			a := Alert{Name: string(ss.Metric[model.AlertNameLabel]), Severity: string(ss.Metric["severity"]), Labels: labels, Span: utcSpan(sp)}
			if pn := labels["pool"]; pn != "" {
				p := pool(pn)
				p.Alerts = append(p.Alerts, a)
			} else {
				r.Alerts = append(r.Alerts, a)
			}
		}
	}

	for _, name := range slices.Sorted(maps.Keys(pools)) {
		p := pools[name]
		if f.Pool != "" && name != f.Pool {
			continue
		}
		p.Signals = append(p.Signals, poolSignals(p)...)
		slices.SortStableFunc(p.Signals, bySignal)
		slices.SortStableFunc(p.CurrentBuild, func(x, y Change) int { return x.At.Compare(y.At) })
		slices.SortStableFunc(p.Alerts, func(x, y Alert) int { return x.Span.Start.Compare(y.Span.Start) })
		for i := range p.Alerts {
			p.Alerts[i].Signal = signalBefore(p.Signals, p.Alerts[i].Span.Start)
		}
		p.Summary = summarize(p.Signals, p.Alerts, p.Builds, p.Rollout.Nodes)
		r.Pools = append(r.Pools, *p)
	}
	slices.SortStableFunc(r.Alerts, func(x, y Alert) int { return x.Span.Start.Compare(y.Span.Start) })
	var signals []Signal
	alerts := slices.Clone(r.Alerts)
	var allBuilds []BuildReport
	var allNodes []NodeReport
	for _, p := range r.Pools {
		signals = append(signals, p.Signals...)
		alerts = append(alerts, p.Alerts...)
		allBuilds = append(allBuilds, p.Builds...)
		allNodes = append(allNodes, p.Rollout.Nodes...)
	}
	slices.SortStableFunc(signals, bySignal)
	slices.SortStableFunc(alerts, func(x, y Alert) int { return x.Span.Start.Compare(y.Span.Start) })
	r.Summary = summarize(signals, alerts, allBuilds, allNodes)
	r.Incident = r.Summary.FirstSignal != nil || r.Summary.Pages > 0
	return r, nil
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
