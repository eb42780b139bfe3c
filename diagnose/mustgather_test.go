package diagnose

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ocl-exporter/ocl_exporter/source"
	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
)

// mustGatherReport diagnoses the scenario at dir written as the
// must-gather of o, read as --snapshot reads it, at its capture time.
func mustGatherReport(t *testing.T, dir string, o sourcetest.MustGatherOptions) (*Report, *source.Source) {
	t.Helper()
	o.At = sourcetest.Now
	root, err := sourcetest.WriteMustGather(dir, t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	s := sourcetest.Snapshot(t, root)
	if at := s.CapturedAt(); !at.Equal(sourcetest.Now) {
		t.Fatalf("capture time %s, want the timestamp file's %s", at, sourcetest.Now)
	}
	return New(s.Cluster(s.CapturedAt()), s.Status(), Options{RunbookBase: testRunbookBase}), s
}

func jsonOf(t *testing.T, r *Report) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, r, FormatJSON, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestMustGatherAsFlat: every scenario written as a 4.19 (and later)
// must-gather, with the noise a real one carries, gives the report of the
// flat snapshot of the same objects: same verdict, checks, objects and
// classes, word for word.
func TestMustGatherAsFlat(t *testing.T) {
	for name, dir := range fixtures(t) {
		if name == "example" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each waits on its files more than it computes
			flat := jsonOf(t, report(t, dir, Options{}))
			got, _ := mustGatherReport(t, dir, sourcetest.MustGatherOptions{Release: 19})
			if d := cmp.Diff(flat, jsonOf(t, got)); d != "" {
				t.Errorf("the 4.19 must-gather's report differs from the flat snapshot's (-flat +must-gather):\n%s", d)
			}
		})
	}
}

// TestMustGatherOfOlderReleases: on 4.16 ... 4.18 every kind the
// must-gather image does not gather is not captured, never read as none:
// no pool reads healthy for want of its MachineOSConfig, and the kinds
// it does gather read as the flat snapshot's.
func TestMustGatherOfOlderReleases(t *testing.T) {
	for name, dir := range fixtures(t) {
		if name == "example" {
			continue
		}
		for _, rel := range []sourcetest.Release{17, 18} {
			t.Run(fmt.Sprintf("%s/4.%d", name, rel), func(t *testing.T) {
				t.Parallel()
				r, s := mustGatherReport(t, dir, sourcetest.MustGatherOptions{Release: rel})
				for _, st := range s.Status() {
					kind := kindOf(st.Resource)
					if gathered := rel.Gathers(kind); gathered == (st.Problem == source.ProblemNotCaptured) {
						t.Errorf("%s: %+v; the 4.%d must-gather gathers %s: %v", st.Resource, st, rel, kind, gathered)
					}
				}
				flat := report(t, dir, Options{})
				if flat.Verdict != Healthy && r.Verdict == Healthy {
					t.Errorf("verdict healthy, the flat snapshot's %s", flat.Verdict)
				}
				if out := jsonOf(t, r); strings.Contains(out, "does not exist") && !strings.Contains(jsonOf(t, flat), "does not exist") {
					t.Errorf("reads an object as missing that the flat snapshot has:\n%s", out)
				}
			})
		}
	}
}

func kindOf(resource string) string {
	for _, r := range source.Resources() {
		if r.Name == resource {
			return r.Kind
		}
	}
	return ""
}

// TestMustGatherWithoutTheMCONamespace: a must-gather that holds no
// namespace of the MCO leaves its Secrets, pods and events unknown: it
// never says a Secret does not exist.
func TestMustGatherWithoutTheMCONamespace(t *testing.T) {
	r, s := mustGatherReport(t, "../testdata/scenarios/healthy-rollout-done", sourcetest.MustGatherOptions{
		Release: 19, WithoutNamespaces: []string{source.DefaultNamespace},
	})
	for _, st := range s.Status() {
		if (st.Resource == "secrets" || st.Resource == "pods" || st.Resource == "jobs.batch") && st.Problem != source.ProblemNotCaptured {
			t.Errorf("%s: %+v, want not captured", st.Resource, st)
		}
	}
	if out := jsonOf(t, r); strings.Contains(out, "does not exist") || !strings.Contains(out, `"status": "not_captured"`) {
		t.Errorf("a Secret read as missing, or nothing read as not captured:\n%s", out)
	}
}

var logFileLine = regexp.MustCompile(`(?m)^\s*"logFile": "[^"]*",\n`)

// TestMustGatherLogsGiveTheCause: where the release left the build pods
// no termination message (before FallbackToLogsOnError), the cause is
// read from the image-build container's log the must-gather holds: every
// scenario's report is the flat snapshot's, each cause read from a log
// naming its file.
func TestMustGatherLogsGiveTheCause(t *testing.T) {
	for name, dir := range fixtures(t) {
		if name == "example" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each waits on its files more than it computes
			flat := jsonOf(t, report(t, dir, Options{}))
			got, _ := mustGatherReport(t, dir, sourcetest.MustGatherOptions{Release: 19, NoTerminationMessages: true})
			out := jsonOf(t, got)
			if d := cmp.Diff(flat, logFileLine.ReplaceAllString(out, "")); d != "" {
				t.Errorf("the report without termination messages differs from the flat snapshot's (-flat +must-gather):\n%s", d)
			}
			for _, m := range logFileLine.FindAllString(out, -1) {
				if !strings.Contains(m, "/pods/build-") || !strings.Contains(m, "/image-build/image-build/logs/current.log") {
					t.Errorf("a cause names %s, not an image-build log", strings.TrimSpace(m))
				}
			}
		})
	}
	t.Run("seed004-build-failed names its log", func(t *testing.T) {
		r, _ := mustGatherReport(t, "../testdata/scenarios/seed004-build-failed", sourcetest.MustGatherOptions{Release: 18, NoTerminationMessages: true})
		if out := jsonOf(t, r); !strings.Contains(out, `"class": "containerfile_command_failed"`) || !logFileLine.MatchString(out) {
			t.Errorf("want the Containerfile's failure read from the image-build log, named:\n%s", out)
		}
	})
}
