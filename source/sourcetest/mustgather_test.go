package sourcetest

import (
	"bytes"
	"compress/gzip"
	"flag"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the trees and archives of testdata/must-gathers (make generate)")

// TestCommittedMustGathersAreGenerated: the trees and archives of
// testdata/must-gathers are what the generator writes for them; -update
// (make generate) rewrites them (README.md there lists them). An archive
// is compared uncompressed.
func TestCommittedMustGathersAreGenerated(t *testing.T) {
	for _, c := range CommittedMustGathers {
		t.Run(c.Tree, func(t *testing.T) {
			committed := filepath.Join("../../testdata/must-gathers", c.Tree)
			out := filepath.Join(t.TempDir(), c.Tree)
			if *update {
				if err := os.RemoveAll(committed); err != nil {
					t.Fatal(err)
				}
				out = committed
			}
			out, err := c.Write("../../testdata/scenarios", out)
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(c.Tree, ".tar.gz") {
				if !bytes.Equal(gunzip(t, out), gunzip(t, committed)) {
					t.Errorf("%s: stale; make generate rewrites it", committed)
				}
				return
			}
			want, got := files(t, out), files(t, committed)
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

func gunzip(t *testing.T, p string) []byte {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
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
