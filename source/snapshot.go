package source

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ocl-exporter/ocl_exporter/regularfile"
)

// kind describes how a snapshot document of one group and kind is loaded.
type kind struct {
	version    string
	namespaced bool
	// new returns the typed object to decode into; nil means the kind is
	// kept as metadata only, as the live source does.
	new func() runtime.Object
}

// kinds are the objects a snapshot may hold, read from Resources(), the
// one list of what the exporter reads; anything else is skipped.
var kinds = func() map[schema.GroupKind]kind {
	m := make(map[schema.GroupKind]kind, len(Resources()))
	for _, r := range Resources() {
		k := kind{version: r.GVR.Version, namespaced: r.Namespaced}
		if !r.MetadataOnly {
			k.new = r.newObject
		}
		m[schema.GroupKind{Group: r.GVR.Group, Kind: r.Kind}] = k
	}
	return m
}()

// OpenSnapshot loads a snapshot file or directory tree into memory.
func OpenSnapshot(p string, logger *slog.Logger) (*Memory, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("reading snapshot: %w", err)
	}
	// regularfile.DirFS: a file swapped for a FIFO after the walk saw
	// it fails to open instead of blocking the load.
	var fsys fs.FS = regularfile.DirFS(p)
	root := "."
	if !info.IsDir() && !info.Mode().IsRegular() {
		return nil, fmt.Errorf("snapshot %s is a %s, not a file or a directory", p, regularfile.Type(info.Mode()))
	}
	if !info.IsDir() {
		fsys, root = regularfile.DirFS(filepath.Dir(p)), filepath.Base(p)
	}
	objs, cov, err := loader{maxBytes: MaxFileBytes, logger: logger}.load(fsys, root)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", p, err)
	}
	m, err := NewMemory(objs)
	if err != nil {
		return nil, err
	}
	m.notCaptured, m.capturedAt = cov.notCaptured(), cov.at
	return m, nil
}

// MaxFileBytes bounds one snapshot file: a larger file is an error naming
// it, and no file is read past the bound, whatever its size claims to be
// (a file that grows, a link to /proc). The largest `oc get -o yaml` of
// the kinds the exporter reads stays far below it even at 10,000 nodes.
const MaxFileBytes = 256 << 20

// Load reads every .yaml, .yml and .json file at or under root: single
// objects, kind: List, multi-document files and `oc get -o yaml` output. A
// document it cannot read is an error naming the file and the document;
// kinds the exporter does not use are skipped, and so are paths that are
// not regular files (FIFOs, devices, sockets, links to them), with a
// warning naming them. Secrets, ConfigMaps, Nodes and MachineConfigs are
// kept as metadata only, data never leaves this function. When the same
// object appears twice, the last one read wins.
func Load(fsys fs.FS, root string, logger *slog.Logger) ([]runtime.Object, error) {
	objs, _, err := loader{maxBytes: MaxFileBytes, logger: logger}.load(fsys, root)
	return objs, err
}

type loader struct {
	maxBytes int64
	logger   *slog.Logger
}

func (l loader) load(fsys fs.FS, root string) ([]runtime.Object, *coverage, error) {
	files, err := l.files(fsys, root)
	if err != nil {
		return nil, nil, err
	}
	byKey := map[string]runtime.Object{}
	var order []string
	var older olderObjects
	cov := newCoverage()
	for _, f := range files {
		cov.file(f)
		objs, err := l.loadFile(fsys, f, &older, cov)
		if err != nil {
			return nil, nil, err
		}
		for _, o := range objs {
			k := key(o)
			if _, dup := byKey[k]; dup {
				l.logger.Debug("snapshot object appears more than once; keeping the last", "object", k, "file", f)
			} else {
				order = append(order, k)
			}
			byKey[k] = o
		}
	}
	older.report(l.logger)
	out := make([]runtime.Object, 0, len(order))
	for _, k := range order {
		out = append(out, byKey[k])
	}
	return out, cov, nil
}

// files lists the regular files to read, in lexical order. It follows
// links to learn what a path is, but never opens anything but a regular
// file: opening a FIFO blocks for ever, and /dev/zero never ends.
func (l loader) files(fsys fs.FS, root string) ([]string, error) {
	var files []string
	err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch strings.ToLower(path.Ext(p)) {
		case ".yaml", ".yml", ".json":
		default:
			return nil
		}
		if d.IsDir() {
			return nil
		}
		info, err := fs.Stat(fsys, p) // follows links
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		switch {
		case info.IsDir():
			return nil
		case !info.Mode().IsRegular():
			l.logger.Warn("skipping a snapshot path that is not a regular file", "file", p, "type", regularfile.Type(info.Mode()))
		case info.Size() > l.maxBytes:
			return fmt.Errorf("%s: %d bytes, more than the %d a snapshot file may hold: split it, or leave out the kinds the exporter does not read", p, info.Size(), l.maxBytes)
		default:
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	if len(files) == 0 {
		return nil, fmt.Errorf("no .yaml, .yml or .json files under %q", root)
	}
	return files, nil
}

func key(o runtime.Object) string {
	m, _ := o.(metav1.Object)
	return o.GetObjectKind().GroupVersionKind().GroupKind().String() + "/" + m.GetNamespace() + "/" + m.GetName()
}

func (l loader) loadFile(fsys fs.FS, name string, older *olderObjects, cov *coverage) ([]runtime.Object, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	limited := &io.LimitedReader{R: f, N: l.maxBytes + 1}
	tooLarge := func() error {
		return fmt.Errorf("%s: more than the %d bytes a snapshot file may hold: split it, or leave out the kinds the exporter does not read", name, l.maxBytes)
	}
	st := newFileState(name, older, cov, l.logger)
	next := st.documents(limited)
	var out []runtime.Object
	for doc := 1; ; doc++ {
		objs, err := next()
		if limited.N <= 0 {
			return nil, tooLarge()
		}
		if errors.Is(err, io.EOF) {
			st.closeCut()
			st.log(l.logger)
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, doc, err)
		}
		st.counted(len(objs))
		out = append(out, objs...)
	}
}
