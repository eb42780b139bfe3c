package sourcetest

import (
	"bytes"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the trees of testdata/must-gathers (make generate)")

// TestCommittedMustGathersAreGenerated: the trees of testdata/must-gathers
// are what the generator writes for their scenario; -update (make
// generate) rewrites them (README.md there lists them).
func TestCommittedMustGathersAreGenerated(t *testing.T) {
	for _, tc := range []struct {
		tree, scenario string
		o              MustGatherOptions
	}{
		{"4.16-v416-build-pod-failed", "v416-build-pod-failed", MustGatherOptions{Release: 16, NoTerminationMessages: true}},
		{"4.17-healthy-rollout-done", "healthy-rollout-done", MustGatherOptions{Release: 17}},
		{"4.18-seed004-build-failed-no-message", "seed004-build-failed", MustGatherOptions{Release: 18, NoTerminationMessages: true}},
		{"4.19-seed004-build-failed", "seed004-build-failed", MustGatherOptions{Release: 19}},
	} {
		t.Run(tc.tree, func(t *testing.T) {
			tc.o.At = Now
			tree := filepath.Join("../../testdata/must-gathers", tc.tree)
			dir := t.TempDir()
			if *update {
				if err := os.RemoveAll(tree); err != nil {
					t.Fatal(err)
				}
				dir = tree
			}
			if _, err := WriteMustGather(filepath.Join("../../testdata/scenarios", tc.scenario), dir, tc.o); err != nil {
				t.Fatal(err)
			}
			want, got := files(t, dir), files(t, tree)
			for p, b := range want {
				if g, ok := got[p]; !ok || !bytes.Equal(g, b) {
					t.Errorf("%s: stale or missing; make generate rewrites it", p)
				}
			}
			for p := range got {
				if _, ok := want[p]; !ok {
					t.Errorf("%s: not generated any more; remove it", p)
				}
			}
		})
	}
}

func files(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
