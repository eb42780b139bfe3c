//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/ocl-exporter/ocl_exporter/review"
	"github.com/ocl-exporter/ocl_exporter/test/cluster"
	"github.com/ocl-exporter/ocl_exporter/test/history"
	"github.com/ocl-exporter/ocl_exporter/test/lifecycle"
)

// reviewCases are the lifecycles review must read back, with the facts of
// each script beyond its alerts (which every case checks against the
// lifecycle's own expectations).
var reviewCases = []struct {
	name  string
	check func(t *testing.T, l *lifecycle.Lifecycle, r *review.Report)
}{
	{"seed004-containerfile-failure", func(t *testing.T, l *lifecycle.Lifecycle, r *review.Report) {
		p := onlyPool(t, r, "layered")
		phaseAt(t, l, p, "layered-a9d6cc1c8ff0e876884feb344f8d637f", "Failed", 20)
		phaseAt(t, l, p, "layered-5e1d0c7b9a8f46e2b3c4d5e6f7a8b9c0", "Building", 45)
		phaseAt(t, l, p, "layered-5e1d0c7b9a8f46e2b3c4d5e6f7a8b9c0", "Succeeded", 70)
		summary(t, r.Summary, 12*time.Minute, 45*time.Minute, 1)
		if r.Summary.FirstSignal.Class != "containerfile_command_failed" || r.Summary.FailedPods != 4 || r.Summary.NodesOffTarget != 2 {
			t.Errorf("first signal %+v, failed pods %d, nodes off target %d; want containerfile_command_failed, 4, 2",
				r.Summary.FirstSignal, r.Summary.FailedPods, r.Summary.NodesOffTarget)
		}
	}},
	{"seed002-manifest-unknown", func(t *testing.T, _ *lifecycle.Lifecycle, r *review.Report) {
		summary(t, r.Summary, 10*time.Minute, 40*time.Minute, 1)
		if r.Summary.FirstSignal.Class != "image_not_found" || r.Summary.NodesFailing != 1 {
			t.Errorf("first signal %+v, nodes failing %d; want image_not_found, 1", r.Summary.FirstSignal, r.Summary.NodesFailing)
		}
	}},
	{"seed000-secrets-missing", func(t *testing.T, _ *lifecycle.Lifecycle, r *review.Report) {
		summary(t, r.Summary, 10*time.Minute, 25*time.Minute, 2)
	}},
	{"healthy-new-rendered-config", func(t *testing.T, l *lifecycle.Lifecycle, r *review.Report) {
		if r.Incident || r.Summary.Pages != 0 {
			t.Errorf("a healthy rollout reads as an incident: %+v", r.Summary)
		}
		p := onlyPool(t, r, "layered")
		if p.Rollout.Duration == nil || r.Summary.NodesOffTarget != 3 {
			t.Errorf("rollout %v over %d nodes, want a duration over 3", p.Rollout.Duration, r.Summary.NodesOffTarget)
		}
	}},
}

// TestReviewReadsLifecyclesBack stores each lifecycle as a Prometheus that
// scraped it and evaluated the rules would have (test/history), serves it
// from a real Prometheus, and reads it back with ocl_exporter review: every
// alert window of the lifecycle's expectations, and the facts of its
// script, within one step.
func TestReviewReadsLifecyclesBack(t *testing.T) {
	for _, tc := range reviewCases {
		t.Run(tc.name, func(t *testing.T) {
			l, err := lifecycle.Load(filepath.Join(repoRoot, "testdata", "lifecycles", tc.name))
			if err != nil {
				t.Fatal(err)
			}
			url := servedHistory(t, tc.name)
			r := reviewLifecycle(t, url, l)
			checkAlertWindows(t, l, r)
			tc.check(t, l, r)
			if tc.name == sampleLifecycle {
				md, _, _ := runReview(t, append(lifecycleWindow(url, l), "-o", "markdown")...)
				checkSample(t, md)
			}
		})
	}
}

// sampleLifecycle is the one docs/review.md shows reviewed.
const sampleLifecycle = "seed004-containerfile-failure"

// checkSample keeps docs/review.md's sample the report review writes.
func checkSample(t *testing.T, md string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "review.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "```markdown\n")
	sample, _, ok2 := strings.Cut(rest, "\n```\n")
	if !ok || !ok2 {
		t.Fatal("docs/review.md has no ```markdown sample")
	}
	if strings.TrimSpace(sample) != strings.TrimSpace(md) {
		t.Errorf("docs/review.md's sample is not what review writes now; replace it with:\n%s", md)
	}
}

// TestReviewReadsEveryLifecycleAlert: every lifecycle's alert windows,
// read back as its expectations say.
func TestReviewReadsEveryLifecycleAlert(t *testing.T) {
	all, err := lifecycle.All(filepath.Join(repoRoot, "testdata", "lifecycles"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range all {
		t.Run(l.Name, func(t *testing.T) {
			r := reviewLifecycle(t, servedHistory(t, l.Name), l)
			checkAlertWindows(t, l, r)
			if l.Healthy && r.Summary.Pages > 0 {
				t.Errorf("a healthy lifecycle reads %d page(s)", r.Summary.Pages)
			}
		})
	}
}

// TestReviewRefusesWhatItCannotRead: a window before any data, and a
// Prometheus that never held the exporter's series, exit 2 with a reason.
func TestReviewRefusesWhatItCannotRead(t *testing.T) {
	url := servedHistory(t, "seed000-secrets-missing")
	_, errOut, code := runReview(t, "--prometheus="+url, "--from=2025-10-16T00:00:00Z", "--to=2025-10-16T06:00:00Z")
	if code != 2 || !strings.Contains(errOut, "no ocl_exporter series in the window") {
		t.Errorf("a window without data: exit %d, %s", code, errOut)
	}
	empty := startHistoryPrometheus(t, t.TempDir())
	_, errOut, code = runReview(t, "--prometheus="+empty, "--from=1h")
	if code != 2 || !strings.Contains(errOut, "no ocl_exporter series") {
		t.Errorf("a Prometheus without the exporter: exit %d, %s", code, errOut)
	}
}

// lifecycleWindow are review's arguments for l's whole history at url.
func lifecycleWindow(url string, l *lifecycle.Lifecycle) []string {
	return []string{"--prometheus=" + url, "--from=" + l.Start.Format(time.RFC3339), "--to=" + l.At(l.End).Format(time.RFC3339)}
}

// reviewLifecycle reviews l's whole history at url, as JSON.
func reviewLifecycle(t *testing.T, url string, l *lifecycle.Lifecycle) *review.Report {
	t.Helper()
	out, errOut, code := runReview(t, append(lifecycleWindow(url, l), "-o", "json")...)
	if code != 0 {
		t.Fatalf("review exits %d: %s", code, errOut)
	}
	var r review.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return &r
}

// servedHistory writes lifecycle name's history and serves it.
func servedHistory(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tsdb")
	if _, err := history.Write(dir, filepath.Join(repoRoot, "alerts", "tests", "lifecycle-"+name+".yaml")); err != nil {
		t.Fatal(err)
	}
	return startHistoryPrometheus(t, dir)
}

// startHistoryPrometheus serves tsdb with the Prometheus the operator
// suite runs (3.5): no scrape, no rule.
func startHistoryPrometheus(t *testing.T, tsdb string) string {
	t.Helper()
	dir := t.TempDir()
	addr, err := cluster.FreeAddress()
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "prometheus.yml"), []byte("global: {}\n"))
	p, err := startServer(dir, "prometheus", tools["E2E_OPERATOR_PROMETHEUS"], addr,
		"--config.file", filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path", tsdb, "--web.listen-address", addr)
	if p != nil {
		t.Cleanup(p.Stop)
	}
	if err != nil {
		t.Fatal(err)
	}
	return "http://" + addr
}

// runReview runs ocl_exporter review.
func runReview(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), env.exporterBin, append([]string{"review"}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return out.String(), errOut.String(), exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errOut.String(), 0
}

// checkAlertWindows compares the report's alerts with the lifecycle's
// expectations: each alert expected firing over consecutive minutes
// [a, b] fires in the report from minute a to b+1 (still firing when b is
// the last minute), within one step.
func checkAlertWindows(t *testing.T, l *lifecycle.Lifecycle, r *review.Report) {
	t.Helper()
	type window struct{ from, to int }
	want := map[string][]window{}
	firing := map[string]map[int]bool{}
	for _, e := range l.Expect {
		for _, m := range e.Minutes() {
			for _, a := range e.Firing {
				if firing[a] == nil {
					firing[a] = map[int]bool{}
				}
				firing[a][m] = true
			}
		}
	}
	for a, minutes := range firing {
		for m := 0; m <= l.End; m++ {
			if minutes[m] && !minutes[m-1] {
				want[a] = append(want[a], window{from: m, to: -1})
			}
			if minutes[m] && !minutes[m+1] {
				want[a][len(want[a])-1].to = m + 1
			}
		}
	}
	var got []review.Alert
	got = append(got, r.Alerts...)
	for _, p := range r.Pools {
		got = append(got, p.Alerts...)
	}
	step := time.Duration(r.Step)
	near := func(a time.Time, b time.Time) bool { d := a.Sub(b); return d <= step && d >= -step }
	matched := 0
	for sel, windows := range want {
		ms, err := parser.ParseMetricSelector(sel)
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		for _, w := range windows {
			found := false
			for _, a := range got {
				if !selects(ms, a) || !near(a.Span.Start, l.At(w.from)) {
					continue
				}
				found = true
				switch {
				case w.to > l.End && a.Span.End != nil:
					t.Errorf("%s: resolved at %s, want firing at the end", sel, a.Span.End)
				case w.to <= l.End && (a.Span.End == nil || !near(*a.Span.End, l.At(w.to))):
					t.Errorf("%s: ends %v, want %s (minute %d)", sel, a.Span.End, l.At(w.to), w.to)
				}
			}
			if !found {
				t.Errorf("%s: no alert firing from %s (minute %d); got %+v", sel, l.At(w.from), w.from, got)
			}
			matched++
		}
	}
	if len(got) != matched {
		t.Errorf("%d alert windows, the lifecycle expects %d: %+v", len(got), matched, got)
	}
}

// selects reports whether the alert matches every matcher of a selector.
func selects(ms []*labels.Matcher, a review.Alert) bool {
	for _, m := range ms {
		v := a.Labels[m.Name]
		if m.Name == "__name__" {
			v = a.Name
		}
		if !m.Matches(v) {
			return false
		}
	}
	return true
}

func onlyPool(t *testing.T, r *review.Report, name string) review.PoolReport {
	t.Helper()
	for _, p := range r.Pools {
		if p.Pool == name {
			return p
		}
	}
	t.Fatalf("no pool %s in %+v", name, r.Pools)
	return review.PoolReport{}
}

// phaseAt wants build b to enter phase at minute m, within a minute.
func phaseAt(t *testing.T, l *lifecycle.Lifecycle, p review.PoolReport, b, phase string, m int) {
	t.Helper()
	for _, br := range p.Builds {
		if br.Name != b {
			continue
		}
		for _, c := range br.Phases {
			if c.Value == phase {
				if d := c.At.Sub(l.At(m)); d > time.Minute || d < -time.Minute {
					t.Errorf("%s %s at %s, want minute %d (%s)", b, phase, c.At, m, l.At(m))
				}
				return
			}
		}
		t.Errorf("%s never %s: %+v", b, phase, br.Phases)
		return
	}
	t.Errorf("no build %s", b)
}

// summary wants the review's time to detect, to resolve and its pages.
func summary(t *testing.T, s review.Summary, detect, resolve time.Duration, pages int) {
	t.Helper()
	got := func(d *review.Duration) string {
		if d == nil {
			return "none"
		}
		return time.Duration(*d).String()
	}
	if got(s.TimeToDetect) != detect.String() || got(s.TimeToResolve) != resolve.String() || s.Pages != pages {
		t.Errorf("time to detect %s, to resolve %s, pages %d; want %s, %s, %d", got(s.TimeToDetect), got(s.TimeToResolve), s.Pages, detect, resolve, pages)
	}
}

// TestReviewRecordsTheExample keeps review --example's built-in history
// what a real Prometheus answers for the sample lifecycle, at a one-minute
// step (make e2e E2E_ARGS='-run TestReviewRecordsTheExample' with
// UPDATE_EXAMPLE=1 in the environment rewrites it).
func TestReviewRecordsTheExample(t *testing.T) {
	l, err := lifecycle.Load(filepath.Join(repoRoot, "testdata", "lifecycles", sampleLifecycle))
	if err != nil {
		t.Fatal(err)
	}
	api, err := review.NewAPI(servedHistory(t, sampleLifecycle), http.DefaultTransport)
	if err != nil {
		t.Fatal(err)
	}
	rec := review.Recording{Lifecycle: sampleLifecycle, From: l.Start.UTC(), To: l.At(l.End).UTC(), Step: review.Duration(time.Minute)}
	var warnings []string
	rec.Series, warnings, err = review.Fetch(t.Context(), review.API{V1: api}, rec.Window(), review.Filter{Selector: review.DefaultSelector})
	if err != nil || len(warnings) > 0 {
		t.Fatalf("%v %v", err, warnings)
	}
	got, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join(repoRoot, "review", "example", "history.json")
	if os.Getenv("UPDATE_EXAMPLE") == "1" {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if want, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) {
		t.Errorf("%s is not what Prometheus answers now (%v); rerun with UPDATE_EXAMPLE=1 make e2e E2E_ARGS='-run TestReviewRecordsTheExample'", path, err)
	}
}
