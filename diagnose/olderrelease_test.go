package diagnose

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ocl-exporter/ocl_exporter/source"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
)

// assertNoClaimFromAbsence checks a must-gather's report against the flat
// snapshot's of the same objects: a pool layered there is layered here
// and not healthy (never "not layered"); every kind the release does not
// gather reads not captured; no Secret reads missing that the flat
// snapshot has.
func assertNoClaimFromAbsence(t *testing.T, r, flat *Report, s *source.Source, rel sourcetest.Release) {
	t.Helper()
	for _, fp := range flat.Pools {
		i := slices.IndexFunc(r.Pools, func(p Pool) bool { return p.Name == fp.Name })
		if !fp.Layered || i < 0 {
			continue
		}
		if p := r.Pools[i]; !p.Layered || p.Verdict == Healthy || strings.HasPrefix(p.Summary, "not layered") || strings.HasPrefix(p.Summary, "healthy") {
			t.Errorf("pool %s: layered %v, %s: %s", p.Name, p.Layered, p.Verdict, p.Summary)
		}
	}
	for _, st := range s.Status() {
		if kind := kindOf(st.Resource); !rel.Gathers(kind) && st.Problem != snapshot.ProblemNotCaptured {
			t.Errorf("%s: %+v; the 4.%d must-gather does not gather %s", st.Resource, st, rel, kind)
		}
	}
	if out := jsonOf(t, r); strings.Contains(out, "does not exist in") && !strings.Contains(jsonOf(t, flat), "does not exist in") {
		t.Errorf("a Secret reads missing:\n%s", out)
	}
}

// TestOlderMustGathersClaimNothingFromAbsence runs the committed 4.16,
// 4.17 and 4.18 must-gathers (testdata/must-gathers), and every scenario
// written as a must-gather of those releases, with and without the MCO's
// namespace, through diagnose.
func TestOlderMustGathersClaimNothingFromAbsence(t *testing.T) {
	n := 0
	for _, c := range sourcetest.CommittedMustGathers {
		if o := c.Options; o.Release >= 19 || o.Inspect != "" || o.Edit != nil || c.Form != nil {
			continue // a later release, or a form of its own (forms_test.go)
		}
		n++
		t.Run(c.Tree, func(t *testing.T) {
			s := sourcetest.Snapshot(t, filepath.Join("../testdata/must-gathers", c.Tree))
			r := New(s.Cluster(s.CapturedAt()), s.Status(), Options{RunbookBase: testRunbookBase})
			assertNoClaimFromAbsence(t, r, report(t, filepath.Join("../testdata/scenarios", c.Scenario), Options{}), s, c.Options.Release)
		})
	}
	if n < 3 {
		t.Fatalf("%d committed must-gathers of 4.16 ... 4.18", n)
	}
	for name, dir := range fixtures(t) {
		if name == "example" {
			continue
		}
		for _, rel := range []sourcetest.Release{16, 17, 18} {
			for _, without := range [][]string{nil, {snapshot.DefaultNamespace}} {
				t.Run(fmt.Sprintf("%s/4.%d/without %v", name, rel, without), func(t *testing.T) {
					t.Parallel()
					r, s := mustGatherReport(t, dir, sourcetest.MustGatherOptions{Release: rel, WithoutNamespaces: without})
					assertNoClaimFromAbsence(t, r, report(t, dir, Options{}), s, rel)
				})
			}
		}
	}
}
