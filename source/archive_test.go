package source_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
)

// tarOf archives dir's files, then the extra entries, gzipped or not.
func tarOf(t *testing.T, dir string, gz bool, extra ...*tar.Header) string {
	t.Helper()
	var buf bytes.Buffer
	var w *tar.Writer
	var zw *gzip.Writer
	if gz {
		zw = gzip.NewWriter(&buf)
		w = tar.NewWriter(zw)
	} else {
		w = tar.NewWriter(&buf)
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			return w.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel) + "/", Typeflag: tar.TypeDir, Mode: 0o755})
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := w.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel), Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(b))}); err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range extra {
		if err := w.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := w.Write(bytes.Repeat([]byte("x"), int(h.Size))); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	name := filepath.Join(t.TempDir(), "must-gather.tar")
	if gz {
		name += ".gz"
	}
	if err := os.WriteFile(name, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}

func resourcesOf(t *testing.T, m *snapshot.Memory) string {
	t.Helper()
	var out []string
	for _, r := range snapshot.Resources() {
		if err := m.NotCaptured(r); err != nil {
			out = append(out, r.Name+": not captured")
		}
	}
	return strings.Join(out, "\n")
}

// TestArchivedMustGather: a .tar.gz or .tar of a must-gather reads as
// the directory does: same objects, same coverage, same capture time;
// links and devices in it are skipped, never followed.
func TestArchivedMustGather(t *testing.T) {
	const dir = "../testdata/must-gathers/4.18-seed004-build-failed-no-message"
	want, err := snapshot.OpenSnapshot(t.Context(), dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	links := []*tar.Header{
		{Name: "must-gather.local.1/evil/cluster-scoped-resources/core/nodes/passwd.yaml", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"},
		{Name: "must-gather.local.1/evil/cluster-scoped-resources/core/nodes/hard.yaml", Typeflag: tar.TypeLink, Linkname: "/etc/shadow"},
		{Name: "must-gather.local.1/evil/cluster-scoped-resources/core/nodes/zero.yaml", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 5},
	}
	for _, gz := range []bool{true, false} {
		var logs bytes.Buffer
		got, err := snapshot.OpenSnapshot(t.Context(), tarOf(t, dir, gz, links...), slog.New(slog.NewTextHandler(&logs, nil)))
		if err != nil {
			t.Fatal(err)
		}
		if a, b := resourcesOf(t, want), resourcesOf(t, got); a != b {
			t.Errorf("gzip %v: coverage\n%s\nwant the directory's\n%s", gz, b, a)
		}
		if !got.CapturedAt().Equal(want.CapturedAt()) {
			t.Errorf("gzip %v: captured at %s, want %s", gz, got.CapturedAt(), want.CapturedAt())
		}
		a, b := sourcetest.FromBackend(t, want).Cluster(sourcetest.Now), sourcetest.FromBackend(t, got).Cluster(sourcetest.Now)
		if len(a.Pods) != len(b.Pods) || len(a.Nodes) != len(b.Nodes) || len(a.MachineOSBuilds) != len(b.MachineOSBuilds) || len(b.Pods) == 0 {
			t.Errorf("gzip %v: pods %d, nodes %d, builds %d; the directory's %d, %d, %d", gz, len(b.Pods), len(b.Nodes), len(b.MachineOSBuilds), len(a.Pods), len(a.Nodes), len(a.MachineOSBuilds))
		}
		if !strings.Contains(logs.String(), "entries=3") {
			t.Errorf("gzip %v: want one warning counting the 3 links and devices:\n%s", gz, logs.String())
		}
	}
}

// TestArchiveRefusesWhatIsNotAMustGather: entries that climb out of the
// archive, an entry over the file bound, and a file that is no tar name
// what is wrong and how to go on.
func TestArchiveRefusesWhatIsNotAMustGather(t *testing.T) {
	empty := t.TempDir()
	for _, tc := range []struct {
		name string
		path func(t *testing.T) string
		want string
	}{
		{"climbs out", func(t *testing.T) string {
			return tarOf(t, empty, true, &tar.Header{Name: "../../etc/cron.d/x.yaml", Typeflag: tar.TypeReg, Size: 1})
		}, `archive entry "../../etc/cron.d/x.yaml": a name outside the archive`},
		{"absolute", func(t *testing.T) string {
			return tarOf(t, empty, false, &tar.Header{Name: "/etc/x.yaml", Typeflag: tar.TypeReg, Size: 1})
		}, `archive entry "/etc/x.yaml": a name outside the archive`},
		{"not a tar", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "mg.tar.gz")
			if err := os.WriteFile(p, []byte("PK\x03\x04 a zip file"), 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}, "or extract it (tar xf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := snapshot.OpenSnapshot(t.Context(), tc.path(t), slog.New(slog.DiscardHandler))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}
