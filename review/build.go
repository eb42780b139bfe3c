package review

import (
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/prometheus/common/model"

	"github.com/ocl-exporter/ocl_exporter/plaintext"
)

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

	rd := &reading{
		s: s, w: w, r: r, pools: map[string]*PoolReport{},
		builds: map[string]*BuildReport{}, buildPool: map[string]string{}, nodes: map[string]map[string]*NodeReport{},
	}
	// The order matters: a pool's signals are sorted stably, so those
	// read first come first at the same moment.
	rd.readBuilds()
	rd.readPoolSignals()
	rd.readNodes()
	rd.readPoolConditions()
	rd.readAlerts()
	rd.summarizePools(f)
	return r, nil
}

// reading is what Build's steps share: the window's series and the
// reports made of them so far.
type reading struct {
	s         Series
	w         Window
	r         *Report
	pools     map[string]*PoolReport
	builds    map[string]*BuildReport
	buildPool map[string]string                 // pool by build
	nodes     map[string]map[string]*NodeReport // by pool and node
}

func (rd *reading) pool(name string) *PoolReport {
	if rd.pools[name] == nil {
		rd.pools[name] = &PoolReport{Pool: name}
	}
	return rd.pools[name]
}

func (rd *reading) build(l model.Metric) *BuildReport {
	name := string(l["machineosbuild"])
	if rd.builds[name] == nil {
		rd.builds[name] = &BuildReport{Name: name}
	}
	rd.buildPool[name] = string(l["pool"])
	return rd.builds[name]
}

func (rd *reading) node(l model.Metric) *NodeReport {
	pn, n := string(l["pool"]), string(l["node"])
	if rd.nodes[pn] == nil {
		rd.nodes[pn] = map[string]*NodeReport{}
	}
	if rd.nodes[pn][n] == nil {
		rd.nodes[pn][n] = &NodeReport{Node: n}
	}
	return rd.nodes[pn][n]
}

// readBuilds reads each build's phases, times, pod failures and failure
// signals, and files the builds under their pools, oldest first.
func (rd *reading) readBuilds() {
	s, w := rd.s, rd.w
	for _, ss := range s[qPhase] {
		b := rd.build(ss.Metric)
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
				q.set(rd.build(ss.Metric), unixTime(v))
			}
		}
	}
	for _, ss := range s[qPodFailures] {
		b := rd.build(ss.Metric)
		for _, v := range ss.Values {
			b.PodFailures = max(b.PodFailures, int(v.Value))
		}
	}
	for _, ss := range s[qBuildFailure] {
		b := rd.build(ss.Metric)
		for _, sp := range spans(ss.Values, w) {
			b.Failures = addSignal(b.Failures, "MachineOSBuild "+b.Name+" failing", ss.Metric, sp)
		}
	}
	for _, b := range rd.builds {
		slices.SortFunc(b.Phases, func(x, y Change) int { return x.At.Compare(y.At) })
		if b.Started != nil && b.Ended != nil && !b.Ended.Before(*b.Started) {
			b.Duration = durationPtr(b.Ended.Sub(*b.Started))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(rd.builds)) {
		p := rd.pool(rd.buildPool[name])
		p.Builds = append(p.Builds, *rd.builds[name])
	}
	for _, p := range rd.pools {
		slices.SortStableFunc(p.Builds, func(x, y BuildReport) int { return firstMoment(x).Compare(firstMoment(y)) })
	}
}

// readPoolSignals reads each pool's current build, and its missing Secret
// and missing pool as signals.
func (rd *reading) readPoolSignals() {
	for _, ss := range rd.s[qCurrentBuild] {
		p := rd.pool(string(ss.Metric["pool"]))
		for _, sp := range spans(ss.Values, rd.w) {
			p.CurrentBuild = append(p.CurrentBuild, Change{At: sp.Start.UTC(), Value: string(ss.Metric["machineosbuild"])})
		}
	}
	for _, q := range []struct{ name, what string }{
		{qSecret, "Secret missing"},
		{qPoolMissing, "MachineConfigPool missing"},
	} {
		for _, ss := range rd.s[q.name] {
			p := rd.pool(string(ss.Metric["pool"]))
			what := q.what
			if sec := ss.Metric["secret"]; sec != "" {
				what += ": " + string(ss.Metric["field"]) + " " + string(sec)
			}
			for _, sp := range spans(ss.Values, rd.w) {
				p.Signals = append(p.Signals, Signal{What: what, Span: utcSpan(sp)})
			}
		}
	}
}

// readNodes reads when each node was targeted and reached its target,
// and its failures, into its pool's rollout, in the order nodes were
// targeted.
func (rd *reading) readNodes() {
	for _, ss := range rd.s[qOffTarget] {
		n := rd.node(ss.Metric)
		rd.pool(string(ss.Metric["pool"]))
		sps := spans(ss.Values, rd.w)
		if len(sps) == 0 {
			continue
		}
		// A node off target from the first sample on was targeted
		// before the window: when is unknown.
		if first := sps[0].Start; first.Sub(rd.r.DataFrom) >= rd.w.Step {
			t := first.UTC()
			n.Targeted = &t
		}
		n.Reached = utcPtr(sps[len(sps)-1].End)
	}
	for _, ss := range rd.s[qNodeFailure] {
		n := rd.node(ss.Metric)
		rd.pool(string(ss.Metric["pool"]))
		for _, sp := range spans(ss.Values, rd.w) {
			n.Failures = addSignal(n.Failures, "node "+n.Node+" failing", ss.Metric, sp)
		}
	}
	for pn, ns := range rd.nodes {
		p := rd.pool(pn)
		for _, name := range slices.Sorted(maps.Keys(ns)) {
			p.Rollout.Nodes = append(p.Rollout.Nodes, *ns[name])
		}
		slices.SortStableFunc(p.Rollout.Nodes, func(x, y NodeReport) int { return cmpTime(x.Targeted, y.Targeted) })
		p.Rollout.Duration = rolloutDuration(p.Rollout.Nodes)
	}
}

// readPoolConditions reads when each pool was Updating, Degraded (a
// signal too) and paused.
func (rd *reading) readPoolConditions() {
	for _, ss := range rd.s[qCondition] {
		p := rd.pool(string(ss.Metric["pool"]))
		for _, sp := range spans(ss.Values, rd.w) {
			if ss.Metric["condition"] == "Updating" {
				p.Rollout.Updating = append(p.Rollout.Updating, utcSpan(sp))
			} else {
				p.Rollout.Degraded = append(p.Rollout.Degraded, utcSpan(sp))
				p.Signals = append(p.Signals, Signal{What: "MachineConfigPool " + p.Pool + " Degraded", Span: utcSpan(sp)})
			}
		}
	}
	for _, ss := range rd.s[qPaused] {
		p := rd.pool(string(ss.Metric["pool"]))
		for _, sp := range spans(ss.Values, rd.w) {
			p.Rollout.Paused = append(p.Rollout.Paused, utcSpan(sp))
		}
	}
}

// readAlerts files each alert under its pool, or the cluster's when it
// names none; the labels every alert has are left out.
func (rd *reading) readAlerts() {
	for _, ss := range rd.s[qAlerts] {
		labels := map[string]string{}
		for k, v := range ss.Metric {
			switch k {
			case model.AlertNameLabel, "severity", "namespace", "cluster":
			default:
				labels[string(k)] = string(v)
			}
		}
		for _, sp := range spans(ss.Values, rd.w) {
			a := Alert{Name: string(ss.Metric[model.AlertNameLabel]), Severity: string(ss.Metric["severity"]), Labels: labels, Span: utcSpan(sp)}
			if pn := labels["pool"]; pn != "" {
				p := rd.pool(pn)
				p.Alerts = append(p.Alerts, a)
			} else {
				rd.r.Alerts = append(rd.r.Alerts, a)
			}
		}
	}
}

// summarizePools sums up each pool f keeps, then the whole report from
// them.
func (rd *reading) summarizePools(f Filter) {
	r := rd.r
	for _, name := range slices.Sorted(maps.Keys(rd.pools)) {
		p := rd.pools[name]
		if f.Pool != "" && name != f.Pool {
			continue
		}
		p.Signals = append(p.Signals, poolSignals(p)...)
		slices.SortStableFunc(p.Signals, bySignal)
		slices.SortStableFunc(p.CurrentBuild, func(x, y Change) int { return x.At.Compare(y.At) })
		slices.SortStableFunc(p.Alerts, byStart)
		for i := range p.Alerts {
			p.Alerts[i].Signal = signalBefore(p.Signals, p.Alerts[i].Span.Start)
		}
		p.Summary = summarize(p.Signals, p.Alerts, p.Builds, p.Rollout.Nodes)
		r.Pools = append(r.Pools, *p)
	}
	slices.SortStableFunc(r.Alerts, byStart)
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
	slices.SortStableFunc(alerts, byStart)
	r.Summary = summarize(signals, alerts, allBuilds, allNodes)
	r.Incident = r.Summary.FirstSignal != nil || r.Summary.Pages > 0
}

// byStart orders alerts by when they started.
func byStart(x, y Alert) int { return x.Span.Start.Compare(y.Span.Start) }
