package review

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

var t0 = time.Date(2025, 10, 17, 12, 0, 0, 0, time.UTC)

// minute is t0 plus m minutes.
func minute(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }

// present is a series sampled every minute from from to to-1 (the
// window's step is a minute, its last point is minute 60: to 61 is
// present to the end) with value v.
func present(labels model.Metric, from, to int, v float64) *model.SampleStream {
	ss := &model.SampleStream{Metric: labels}
	for m := from; m < to; m++ {
		ss.Values = append(ss.Values, model.SamplePair{Timestamp: model.TimeFromUnixNano(minute(m).UnixNano()), Value: model.SampleValue(v)})
	}
	return ss
}

var window = Window{From: minute(0), To: minute(60), Step: time.Minute}

// incident: build b1 of pool worker fails from minute 5 (a failing pod at
// 5, Failed at 15), the alert fires from 15 to 40, b2 builds from 40 and
// succeeds at 50, then node n1 rolls out 50 to 55 and n2 55 to 60 (still
// at the end).
func incident() Series {
	b1 := model.Metric{"pool": "worker", "machineosbuild": "b1"}
	b2 := model.Metric{"pool": "worker", "machineosbuild": "b2"}
	with := func(m model.Metric, k, v string) model.Metric {
		out := m.Clone()
		out[model.LabelName(k)] = model.LabelValue(v)
		return out
	}
	return Series{
		qExporter:     {present(model.Metric{}, 0, 61, 1)},
		qPhase:        {present(with(b1, "phase", "Building"), 0, 15, 1), present(with(b1, "phase", "Failed"), 15, 40, 1), present(with(b2, "phase", "Building"), 40, 50, 1), present(with(b2, "phase", "Succeeded"), 50, 61, 1)},
		qStarted:      {present(b1, 0, 40, float64(minute(-3).Unix())), present(b2, 40, 61, float64(minute(40).Unix()))},
		qEnded:        {present(b1, 15, 40, float64(minute(15).Unix())), present(b2, 50, 61, float64(minute(50).Unix()))},
		qPodFailures:  {present(b1, 5, 10, 1), present(b1, 10, 40, 4)},
		qBuildFailure: {present(with(with(b1, "class", "package_not_found"), "excerpt", "No match for argument: tmux"), 5, 40, 1)},
		qCurrentBuild: {present(b1, 0, 40, 1), present(b2, 40, 61, 1)},
		qOffTarget:    {present(model.Metric{"pool": "worker", "node": "n1"}, 50, 55, 1), present(model.Metric{"pool": "worker", "node": "n2"}, 55, 61, 1)},
		qCondition:    {present(model.Metric{"pool": "worker", "condition": "Updating"}, 40, 61, 1)},
		qAlerts: {present(model.Metric{model.AlertNameLabel: "OCLMachineOSBuildFailed", "severity": "warning", "namespace": "openshift-machine-config-operator",
			"pool": "worker", "machineosbuild": "b1", "class": "package_not_found"}, 15, 40, 1)},
	}
}

func TestBuildReadsTheIncident(t *testing.T) {
	r, err := Build(incident(), nil, window, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Incident || len(r.Pools) != 1 {
		t.Fatalf("incident %v, pools %d", r.Incident, len(r.Pools))
	}
	p := r.Pools[0]
	s := p.Summary
	check := func(what string, got, want any) {
		t.Helper()
		if got != want {
			t.Errorf("%s: %v, want %v", what, got, want)
		}
	}
	check("first signal", s.FirstSignal.Span.Start, minute(5))
	check("first signal class", s.FirstSignal.Class, "package_not_found")
	check("first page", *s.FirstPage, minute(15))
	check("time to detect", time.Duration(*s.TimeToDetect), 10*time.Minute)
	check("resolved", *s.Resolved, minute(40))
	check("time to resolve", time.Duration(*s.TimeToResolve), 35*time.Minute)
	check("pages", s.Pages, 1)
	check("builds", s.Builds, 2)
	check("failed pods", s.FailedPods, 4)
	check("nodes off target", s.NodesOffTarget, 2)
	check("b1 failed at", p.Builds[0].Phases[1], Change{At: minute(15), Value: "Failed"})
	check("b1 ran", time.Duration(*p.Builds[0].Duration), 18*time.Minute)
	check("b2 succeeded at", p.Builds[1].Phases[1], Change{At: minute(50), Value: "Succeeded"})
	check("current build changes", len(p.CurrentBuild), 2)
	check("n1 reached", *p.Rollout.Nodes[0].Reached, minute(55))
	if p.Rollout.Nodes[1].Reached != nil || p.Rollout.Duration != nil {
		t.Errorf("n2 is still off target at the end: reached %v, rollout %v", p.Rollout.Nodes[1].Reached, p.Rollout.Duration)
	}
	a := p.Alerts[0]
	check("alert", a.Name, "OCLMachineOSBuildFailed")
	check("alert end", *a.Span.End, minute(40))
	check("alert's signal", a.Signal.Class, "package_not_found")
	if _, ok := a.Labels["namespace"]; ok {
		t.Error("the alert keeps its namespace label, which identifies nothing")
	}
}

func TestBuildNoIncident(t *testing.T) {
	s := incident()
	delete(s, qAlerts)
	delete(s, qBuildFailure)
	delete(s, qPodFailures)
	r, err := Build(s, nil, window, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Incident || r.Summary.Pages != 0 || r.Summary.TimeToDetect != nil {
		t.Errorf("a window without alerts or failures reads %+v", r.Summary)
	}
}

func TestBuildWithoutTheExporter(t *testing.T) {
	s := incident()
	delete(s, qExporter)
	if _, err := Build(s, nil, window, Filter{}); !errors.Is(err, errNoExporter) {
		t.Errorf("err %v, want %v", err, errNoExporter)
	}
}

func TestBuildSaysWhereTheDataStarts(t *testing.T) {
	s := incident()
	s[qExporter] = model.Matrix{present(model.Metric{}, 10, 61, 1)}
	r, err := Build(s, nil, window, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Render(&b, r, "text"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "The exporter's series start at 2025-10-17T12:10:00Z") {
		t.Errorf("the report does not say the data starts late:\n%s", b.String())
	}
}

func TestSpans(t *testing.T) {
	ss := present(nil, 0, 3, 1)
	ss.Values = append(ss.Values, present(nil, 10, 61, 1).Values...)
	got := spans(ss.Values, window)
	if len(got) != 2 || !got[0].Start.Equal(minute(0)) || !got[0].End.Equal(minute(3)) || !got[1].Start.Equal(minute(10)) || got[1].End != nil {
		t.Errorf("spans %+v", got)
	}
}

func TestRenderGolden(t *testing.T) {
	r, err := Build(incident(), nil, window, Filter{Pool: "worker"})
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range Formats {
		var b bytes.Buffer
		if err := Render(&b, r, format); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", "incident."+format+".golden")
		if *update {
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test ./review/ -update writes it)", err)
		}
		if b.String() != string(want) {
			t.Errorf("%s differs from %s (go test ./review/ -update rewrites it):\n%s", format, path, b.String())
		}
	}
	if err := Render(&bytes.Buffer{}, r, "html"); err == nil {
		t.Error("an unknown format is accepted")
	}
}

// recorder is a Querier that records the queries and answers nothing.
type recorder struct{ queries []string }

func (r *recorder) QueryRange(_ context.Context, q string, _ v1.Range) (model.Matrix, v1.Warnings, error) {
	r.queries = append(r.queries, q)
	return nil, nil, nil
}

func TestFetchFilters(t *testing.T) {
	var r recorder
	if _, _, err := Fetch(context.Background(), &r, window, Filter{Pool: "infra", Cluster: "east"}); err != nil {
		t.Fatal(err)
	}
	for _, q := range r.queries {
		switch {
		case !strings.Contains(q, `cluster="east"`):
			t.Errorf("%s: no cluster matcher", q)
		case strings.Contains(q, "ocl_exporter_resource_available"):
			if strings.Contains(q, "pool") {
				t.Errorf("%s: the exporter's series have no pool", q)
			}
		case strings.Contains(q, "ALERTS"):
			if !strings.Contains(q, `pool=~"infra|"`) {
				t.Errorf("%s: alerts without a pool are dropped", q)
			}
		case !strings.Contains(q, `pool="infra"`):
			t.Errorf("%s: no pool matcher", q)
		}
	}
	r = recorder{}
	if _, _, err := Fetch(context.Background(), &r, window, Filter{}); err != nil {
		t.Fatal(err)
	}
	for _, q := range r.queries {
		if strings.Contains(q, "{}") || strings.Contains(q, ", }") || strings.Contains(q, "{, ") {
			t.Errorf("%s: empty matchers left in", q)
		}
	}
}

// TestQueriesAreWhatFetchRuns: Queries, which says what the lifecycle
// histories must hold, is what Fetch runs unfiltered (on a window with
// no data, its fallbacks too).
func TestQueriesAreWhatFetchRuns(t *testing.T) {
	var r recorder
	if _, _, err := Fetch(context.Background(), &r, window, Filter{}); err != nil {
		t.Fatal(err)
	}
	ran := slices.Compact(slices.Sorted(slices.Values(r.queries)))
	if want := Queries(); !slices.Equal(ran, want) {
		t.Errorf("Fetch runs %q, Queries says %q", ran, want)
	}
}

// TestFetchExplains: what a querier refuses, through the real client.
func TestFetchExplains(t *testing.T) {
	for code, want := range map[int]string{
		http.StatusUnauthorized: "--bearer-token-file",
		http.StatusForbidden:    "cluster-monitoring-view",
		http.StatusNotFound:     "no query API",
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }))
		c, err := api.NewClient(api.Config{Address: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = Fetch(context.Background(), API{V1: v1.NewAPI(c)}, window, Filter{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%d: %v, want it to say %q", code, err, want)
		}
		srv.Close()
	}
	c, err := api.NewClient(api.Config{Address: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Fetch(context.Background(), API{V1: v1.NewAPI(c)}, window, Filter{}); err == nil || !strings.Contains(err.Error(), "not reachable") {
		t.Errorf("unreachable: %v", err)
	}
}

func TestNewWindow(t *testing.T) {
	for _, tc := range []struct {
		span time.Duration
		step time.Duration
	}{
		{time.Hour, 15 * time.Second},
		{6 * time.Hour, 30 * time.Second},
		{7 * 24 * time.Hour, 15 * time.Minute},
	} {
		w, err := NewWindow(t0, t0.Add(tc.span))
		if err != nil || w.Step != tc.step {
			t.Errorf("%s: step %s, %v; want %s", tc.span, w.Step, err, tc.step)
		}
	}
	if _, err := NewWindow(t0, t0); err == nil {
		t.Error("an empty window is accepted")
	}
	if _, err := NewWindow(t0, t0.Add(3*365*24*time.Hour)); err == nil {
		t.Error("a three-year window is accepted")
	}
}

// answers is a Querier that answers the queries containing a key with its
// matrix, and records what it was asked.
type answers struct {
	by    map[string]model.Matrix
	asked []string
}

func (a *answers) QueryRange(_ context.Context, q string, _ v1.Range) (model.Matrix, v1.Warnings, error) {
	a.asked = append(a.asked, q)
	for k, m := range a.by {
		if strings.Contains(q, k) {
			return m, nil, nil
		}
	}
	return nil, nil, nil
}

// TestFetchOffTargetFallsBack: node_off_target answers the rollout's nodes;
// history an exporter wrote before it existed is read from the mismatch
// series, which are asked for only then.
func TestFetchOffTargetFallsBack(t *testing.T) {
	node := model.Matrix{present(model.Metric{"pool": "worker", "node": "n1"}, 50, 55, 1)}
	for name, c := range map[string]struct {
		by           map[string]model.Matrix
		fallbackUsed bool
	}{
		"current exporter": {by: map[string]model.Matrix{"node_off_target": node}},
		"older exporter":   {by: map[string]model.Matrix{"node_layered_image_mismatch": node}, fallbackUsed: true},
	} {
		a := &answers{by: c.by}
		s, _, err := Fetch(context.Background(), a, window, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(s[qOffTarget]) != 1 {
			t.Errorf("%s: off target %v, want n1", name, s[qOffTarget])
		}
		asked := slices.ContainsFunc(a.asked, func(q string) bool { return strings.Contains(q, "node_layered_image_mismatch") })
		if asked != c.fallbackUsed {
			t.Errorf("%s: mismatch series asked for: %v, want %v", name, asked, c.fallbackUsed)
		}
	}
}
