package snapshot

import (
	"bytes"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// loadWithin runs OpenSnapshot's loading on dir and fails the test when it
// does not return within the deadline: the hostile files below used to
// hang it or grow its memory without end.
func loadWithin(t *testing.T, fsys fs.FS, root string, l loader) ([]runtime.Object, string, error) {
	t.Helper()
	var logs bytes.Buffer
	l.logger = slog.New(slog.NewTextHandler(&logs, nil))
	type result struct {
		objs []runtime.Object
		err  error
	}
	done := make(chan result, 1)
	go func() {
		objs, _, err := l.load(t.Context(), fsys, root)
		done <- result{objs, err}
	}()
	select {
	case r := <-done:
		return r.objs, logs.String(), r.err
	case <-time.After(20 * time.Second):
		t.Fatal("loading the snapshot did not return within 20s")
		return nil, "", nil
	}
}

func TestLoadSkipsWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(mosc), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "p.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "z.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/null", filepath.Join(dir, "null.json")); err != nil {
		t.Fatal(err)
	}
	// Unix socket paths are limited to about 100 bytes: a short relative one.
	t.Chdir(dir)
	sock, err := net.Listen("unix", "s.yml")
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()

	objs, logs, err := loadWithin(t, os.DirFS(dir), ".", loader{maxBytes: MaxFileBytes})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 {
		t.Errorf("loaded %d objects, want the MachineOSConfig of a.yaml", len(objs))
	}
	for _, want := range []string{"file=p.yaml type=FIFO", "file=z.yaml type=\"character device\"", "file=null.json type=\"character device\"", "file=s.yml type=socket"} {
		if !strings.Contains(logs, want) {
			t.Errorf("no warning with %q in\n%s", want, logs)
		}
	}

	// The snapshot named directly is checked the same way.
	_, err = OpenSnapshot(t.Context(), filepath.Join(dir, "p.yaml"), slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "p.yaml is a FIFO, not a file or a directory") {
		t.Errorf("a FIFO as --snapshot: %v", err)
	}
}

func TestLoadBoundsFileSize(t *testing.T) {
	dir := t.TempDir()
	// A sparse file: its size says 1 GiB, it costs no disk.
	big, err := os.Create(filepath.Join(dir, "big.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	big.Close()
	_, _, err = loadWithin(t, os.DirFS(dir), ".", loader{maxBytes: MaxFileBytes})
	if err == nil || !strings.Contains(err.Error(), "big.yaml: 1073741824 bytes, more than the 268435456") {
		t.Errorf("got %v, want an error naming big.yaml and the bound", err)
	}

	// A file whose size lies (it grows, or lives in /proc) is still read
	// no further than the bound.
	_, _, err = loadWithin(t, lyingFS{fstest.MapFS{"grows.yaml": {Data: []byte(mosc + "---\n" + mosc)}}}, ".", loader{maxBytes: int64(len(mosc))})
	if err == nil || !strings.Contains(err.Error(), "grows.yaml: more than the") {
		t.Errorf("got %v, want an error naming grows.yaml and the bound", err)
	}
}

// lyingFS reports every file as empty.
type lyingFS struct{ fstest.MapFS }

func (l lyingFS) Stat(name string) (fs.FileInfo, error) {
	info, err := l.MapFS.Stat(name)
	if err != nil || info.IsDir() {
		return info, err
	}
	return zeroSize{info}, nil
}

func (l lyingFS) ReadDir(name string) ([]fs.DirEntry, error) { return l.MapFS.ReadDir(name) }

type zeroSize struct{ fs.FileInfo }

func (zeroSize) Size() int64 { return 0 }

func TestLoadClusterScopedWithNamespace(t *testing.T) {
	withNS := strings.Replace(mosc, "  name: infra\n", "  name: infra\n  namespace: openshift-machine-config-operator\n", 1)
	fsys := fstest.MapFS{
		"a.yaml": {Data: []byte(mosc)},
		"b.yaml": {Data: []byte(withNS + "---\napiVersion: v1\nkind: Node\nmetadata: {name: n1, namespace: default}\n")},
	}
	objs, logs, err := loadWithin(t, fsys, ".", loader{maxBytes: MaxFileBytes})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range objs {
		keys = append(keys, key(o))
	}
	if want := "MachineOSConfig.machineconfiguration.openshift.io//infra Node//n1"; strings.Join(keys, " ") != want {
		t.Errorf("loaded %v, want %s: a cluster-scoped object is stored once, without a namespace", keys, want)
	}
	if strings.Count(logs, "carry metadata.namespace") != 1 || !strings.Contains(logs, "file=b.yaml objects=2") {
		t.Errorf("want one warning naming b.yaml and 2 objects:\n%s", logs)
	}
}

func TestLoadListOfUnknownKindsSkipsItems(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	for range 1000 {
		b.WriteString("- apiVersion: v1\n  kind: Service\n  metadata: {name: s, namespace: x}\n  spec: {ports: [{port: 1}]}\n")
	}
	b.WriteString("- apiVersion: v1\n  kind: Node\n  metadata: {name: n1}\n")
	objs, _, err := loadWithin(t, fstest.MapFS{"l.yaml": {Data: []byte(b.String())}}, ".", loader{maxBytes: MaxFileBytes, logger: nil})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || objs[0].(*metav1.PartialObjectMetadata).Name != "n1" {
		t.Errorf("got %v", objs)
	}
}

// FuzzLoad feeds one file of any bytes to the loader: it returns objects
// or an error, never panics, and never reads past the bound.
func FuzzLoad(f *testing.F) {
	for _, seed := range []string{mosc, secretList, mosc + "---\n" + secretList,
		`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Node","metadata":{"name":"n"}}]}`,
		"apiVersion: v1\nkind: List\nitems: notalist\n", "apiVersion: v1\nkind: Node\nmetadata: {name: 12345}\n",
		"a: &a [*a,*a]\n", "- 1\n- 2\n", "\"str\"", "apiVersion: v1\nkind: Node\nmetadata: [1]\n",
		// streamed Lists (stream.go): items of each shape, a kind kept as metadata only
		"apiVersion: v1\nitems:\n- apiVersion: v1\n  data: {a: b}\n  kind: Secret\n  metadata:\n    name: s\n    namespace: x\n-\n  kind: Node\n  apiVersion: v1\n  metadata: {name: n}\nkind: SecretList\n",
		"apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\nspec:\n  config: {a: [1, 2]}\nmetadata:\n  name: mc\n",
		`{"apiVersion":"machineconfiguration.openshift.io/v1","kind":"MachineConfig","spec":{"x":[1,{"y":2}]},"metadata":{"name":"mc"}}`,
		`{"apiVersion":"v1","items":{"a":[1]},"kind":"NodeList"}`, "items:\n  - kind: Node\nkind: List\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, _, err := loader{maxBytes: 1 << 20, logger: slog.New(slog.DiscardHandler)}.load(t.Context(), fstest.MapFS{"f.yaml": {Data: data}}, ".")
		if err != nil {
			if objs != nil {
				t.Errorf("objects and an error: %v", err)
			}
			if !strings.HasPrefix(err.Error(), "f.yaml") {
				t.Errorf("error does not name the file: %v", err)
			}
			return
		}
		for _, o := range objs {
			m, ok := o.(metav1.Object)
			if !ok || m.GetName() == "" {
				t.Errorf("loaded an object without a name: %#v", o)
			}
		}
	})
}
