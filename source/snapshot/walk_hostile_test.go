package snapshot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
)

const seedMustGather = "../../testdata/must-gathers/4.18-seed004-build-failed-no-message"

// copyMustGather copies the committed must-gather into a new directory
// and returns it with the paths of its build pods' image-build logs.
func copyMustGather(t *testing.T) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(seedMustGather)); err != nil {
		t.Fatal(err)
	}
	var logs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, "/image-build/image-build/logs/current.log") {
			logs = append(logs, p)
		}
		return err
	})
	if err != nil || len(logs) == 0 {
		t.Fatalf("no build log in %s: %v", seedMustGather, err)
	}
	return dir, logs
}

// objectsText is every object the memory holds, as JSON.
func objectsText(t *testing.T, m *Memory) string {
	t.Helper()
	var out []string
	for gk, objs := range m.byKind {
		b, err := json.Marshal(objs)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, gk.String()+" "+string(b))
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// TestMustGatherLinkOutsideIsNotRead: a must-gather directory whose build
// log is a link to a file outside it (a key, a token) is never read nor
// quoted: the link is skipped with a warning, as the archive reader skips
// every link; a link that stays inside the snapshot is read.
func TestMustGatherLinkOutsideIsNotRead(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(outside, []byte("E1017 error: OUTSIDE-SECRET-TOKEN\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir, logs := copyMustGather(t)
	inside := filepath.Join(dir, "inside.log")
	if err := os.WriteFile(inside, []byte("error: building at STEP \"RUN INSIDE-MARKER\": exit status 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for i, p := range logs {
		target := outside
		if i == 0 {
			target, _ = filepath.Rel(filepath.Dir(p), inside)
		}
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	m, err := OpenSnapshot(t.Context(), dir, slog.New(slog.NewTextHandler(&out, nil)))
	if err != nil {
		t.Fatal(err)
	}
	got := objectsText(t, m)
	if strings.Contains(got, "OUTSIDE-SECRET-TOKEN") {
		t.Error("the snapshot quotes a file outside it")
	}
	if !strings.Contains(got, "INSIDE-MARKER") {
		t.Error("a link inside the snapshot was not read")
	}
	if n := strings.Count(out.String(), "leave the snapshot"); n != 1 || !strings.Contains(out.String(), "links="+strconv.Itoa(len(logs)-1)) {
		t.Errorf("want one warning counting %d links that leave the snapshot:\n%s", len(logs)-1, out.String())
	}
}

// TestMustGatherOddPartsAreSkipped: what the exporter never reads cannot
// stop a diagnosis: a directory or file whose name is not UTF-8, and
// directories nested past what a path may hold, are skipped with one
// warning, and the must-gather reads as it does without them.
func TestMustGatherOddPartsAreSkipped(t *testing.T) {
	want, err := OpenSnapshot(t.Context(), seedMustGather, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	dir, logs := copyMustGather(t)
	image := strings.Split(logs[0], "/namespaces/")[0]
	for _, p := range []string{
		filepath.Join(image, "namespaces", "openshift-etcd", "\xff\xfe", "x.yaml"),
		filepath.Join(image, "namespaces", "openshift-machine-config-operator", "pods", "p\xff", "p\xff.yaml"),
		filepath.Join(image, "host_service_logs", "kubelet-\xff.yaml"),
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("a: 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := writeDeep(filepath.Join(image, "host_service_logs"), 2100, "x.yaml", "a: 1\n"); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	got, err := OpenSnapshot(t.Context(), dir, slog.New(slog.NewTextHandler(&out, nil)))
	if err != nil {
		t.Fatalf("the snapshot was refused: %v", err)
	}
	if a, b := objectsText(t, want), objectsText(t, got); a != b {
		t.Error("the must-gather with odd parts reads differently")
	}
	if n := strings.Count(out.String(), "skipped snapshot paths"); n != 1 || !strings.Contains(out.String(), "paths=4") {
		t.Errorf("want one warning counting the 4 odd paths:\n%s", out.String())
	}
}

// writeDeep writes body to name under depth nested directories "d" in
// dir, one directory at a time: their path is longer than PATH_MAX.
func writeDeep(dir string, depth int, name, body string) error {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	for range depth {
		if err := r.Mkdir("d", 0o755); err != nil {
			return err
		}
		next, err := r.OpenRoot("d")
		_ = r.Close()
		if err != nil {
			return err
		}
		r = next
	}
	defer r.Close()
	return r.WriteFile(name, []byte(body), 0o644)
}

// failingFS fails to read the directories named.
type failingFS struct {
	fs.FS
	fail map[string]bool
}

func (f failingFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if f.fail[name] {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrPermission}
	}
	return fs.ReadDir(f.FS, name)
}

// TestUnreadableDirectories: a directory that cannot be read is skipped
// with a warning where nothing under it is read, and refused where a
// resource the exporter reads may be: a must-gather's release says it
// gathered MachineConfigs, so their absence would read as none.
func TestUnreadableDirectories(t *testing.T) {
	dir, logs := copyMustGather(t)
	rel, _ := filepath.Rel(dir, logs[0])
	image := strings.Split(rel, "/namespaces/")[0]
	for _, tc := range []struct{ fail, want string }{
		{path.Join(image, "namespaces/openshift-etcd"), ""},
		{path.Join(image, "host_service_logs"), ""},
		{path.Join(image, "cluster-scoped-resources/machineconfiguration.openshift.io"), "permission denied"},
		{path.Join(image, "namespaces/openshift-machine-config-operator/pods"), "permission denied"},
	} {
		var out bytes.Buffer
		l := loader{maxBytes: MaxFileBytes, namespace: DefaultNamespace, logger: slog.New(slog.NewTextHandler(&out, nil))}
		_, _, err := l.load(t.Context(), failingFS{os.DirFS(dir), map[string]bool{tc.fail: true}}, ".")
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s unreadable: %v", tc.fail, err)
		case tc.want == "" && !strings.Contains(out.String(), "skipped snapshot paths"):
			t.Errorf("%s unreadable: no warning:\n%s", tc.fail, out.String())
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.fail)):
			t.Errorf("%s unreadable: %v, want an error naming it", tc.fail, err)
		}
	}
}

// cancelingFS ends a load's context at the open of its third file.
type cancelingFS struct {
	fs.FS
	cancel context.CancelFunc
	opens  *int
}

func (c cancelingFS) Open(name string) (fs.File, error) {
	f, err := c.FS.Open(name)
	if info, serr := fs.Stat(c.FS, name); serr == nil && !info.IsDir() {
		if *c.opens++; *c.opens == 3 {
			c.cancel()
		}
	}
	return f, err
}

func (c cancelingFS) Stat(name string) (fs.FileInfo, error) { return fs.Stat(c.FS, name) }

// TestLoadStopsWithContext: a load whose context ends (SIGINT, SIGTERM)
// opens no further file and returns the context's error.
func TestLoadStopsWithContext(t *testing.T) {
	files := fstest.MapFS{}
	for i := range 100 {
		files[fmt.Sprintf("n%03d.yaml", i)] = &fstest.MapFile{Data: []byte(fmt.Sprintf("apiVersion: v1\nkind: Node\nmetadata: {name: n%d}\n", i))}
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	opens := 0
	_, _, err := loader{maxBytes: MaxFileBytes, namespace: DefaultNamespace, logger: slog.New(slog.DiscardHandler)}.load(ctx, cancelingFS{files, cancel, &opens}, ".")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want the context's error", err)
	}
	if opens != 3 {
		t.Errorf("opened %d files of 100, want none after the third, whose open ended the context", opens)
	}
}
