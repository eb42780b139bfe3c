// Package snapshot is the offline side of package source, and the table of
// what the exporter reads (Resources: the kinds the informers watch, with
// their selectors, CRDs and the must-gather releases that gather them).
// It reads every form a snapshot comes in: the capture file `capture`
// writes (and its writer), must-gathers as `oc adm inspect` and the
// must-gather image lay them out, in a directory or an archive, and what
// a snapshot holds of each resource (coverage: captured, not captured,
// partly captured). Memory serves a snapshot's objects to the informers
// as the API server would. It needs no client-go, so its fuzz test builds
// without it (TestNeedsNoClientGo).
package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

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

// OpenSnapshot loads a snapshot file, directory tree or must-gather (a
// directory or a .tar, .tar.gz archive of one) into memory, for the MCO
// in its default namespace.
func OpenSnapshot(ctx context.Context, p string, logger *slog.Logger) (*Memory, error) {
	return OpenSnapshotIn(ctx, p, DefaultNamespace, logger)
}

// OpenSnapshotIn is OpenSnapshot for the MCO in namespace: what a
// must-gather holds of other namespaces is not read, and a namespaced
// resource is captured only when the snapshot holds it for namespace. It
// stops, with ctx's error, when ctx ends: a must-gather takes seconds to
// read, and Ctrl-C or a pod's SIGTERM must not wait for it.
func OpenSnapshotIn(ctx context.Context, p, namespace string, logger *slog.Logger) (*Memory, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("reading snapshot: %w", err)
	}
	l := loader{ctx: ctx, maxBytes: MaxFileBytes, namespace: namespace, logger: logger}
	var t *tree
	switch {
	case !info.IsDir() && !info.Mode().IsRegular():
		return nil, fmt.Errorf("snapshot %s is a %s, not a file or a directory", p, regularfile.Type(info.Mode()))
	case isArchive(p):
		t, err = l.archive(p)
	default:
		var done func()
		t, done, err = l.walkPath(p, info.IsDir())
		defer done()
	}
	var objs []runtime.Object
	var cov *coverage
	if err == nil {
		objs, cov, err = l.loadTree(t)
	}
	if err != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("snapshot %s: stopped reading: %w", p, context.Cause(ctx))
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", p, err)
	}
	m, err := NewMemory(objs)
	if err != nil {
		return nil, err
	}
	m.notCaptured, m.capturedAt = cov.notCaptured(namespace), cov.at
	return m, nil
}

// walkPath walks the directory p, or lists the one file p, through a
// regularfile.Root: a file swapped for a FIFO after the walk saw it fails
// to open instead of blocking the load, and a link never leads out of
// the directory. The file named is read wherever its own links lead.
// done releases the directory.
func (l loader) walkPath(p string, dir bool) (_ *tree, done func(), _ error) {
	root, name := p, "."
	if !dir {
		target, err := filepath.EvalSymlinks(p)
		if err != nil {
			return nil, func() {}, err
		}
		root, name = filepath.Dir(target), filepath.Base(target)
	}
	r, err := regularfile.OpenRoot(root)
	if err != nil {
		return nil, func() {}, err
	}
	t, err := l.walk(r, name)
	return t, func() { _ = r.Close() }, err
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
// warning naming them, and files that hold no Kubernetes object at all.
// Secrets, ConfigMaps, Nodes and MachineConfigs are kept as metadata
// only, data never leaves this function. When the same object appears
// twice, the last one read wins.
func Load(fsys fs.FS, root string, logger *slog.Logger) ([]runtime.Object, error) {
	objs, _, err := loader{maxBytes: MaxFileBytes, namespace: DefaultNamespace, logger: logger}.load(context.Background(), fsys, root)
	return objs, err
}

type loader struct {
	// ctx ends the load: every file, entry, document and read checks it.
	ctx       context.Context
	maxBytes  int64
	namespace string // the MCO's
	logger    *slog.Logger
}

// tree is a snapshot's files to read, in lexical order, each with its
// role: a directory's, walked, or an archive's, read.
type tree struct {
	files []treeFile
	open  func(name string) (io.ReadCloser, error)
	// skipped counts the must-gather files left unread by their path.
	skipped    int
	mustGather bool
}

type treeFile struct {
	name string
	mustGatherPath
	inLayout bool
	size     int64
}

func (l loader) load(ctx context.Context, fsys fs.FS, root string) ([]runtime.Object, *coverage, error) {
	l.ctx = ctx
	t, err := l.walk(fsys, root)
	if err != nil {
		return nil, nil, err
	}
	return l.loadTree(t)
}

func (l loader) loadTree(t *tree) ([]runtime.Object, *coverage, error) {
	if l.namespace == "" {
		l.namespace = DefaultNamespace
	}
	byKey := map[string]runtime.Object{}
	var order []string
	var older olderObjects
	var notObjects []string
	var logs []treeFile
	cov := newCoverage()
	if err := l.readForms(t, cov); err != nil {
		return nil, nil, err
	}
	for _, f := range t.files {
		switch f.role {
		case roleTimestamp, roleVersion:
			if err := l.readMeta(t, f, cov); err != nil {
				return nil, nil, err
			}
			continue
		case roleLog:
			logs = append(logs, f)
			continue
		case roleGatherLog, roleCleanMark, roleCleanReport:
			continue // read first
		}
		objs, notObject, err := l.loadFile(t, f, &older, cov)
		if err != nil && l.cutShort(f, err, cov) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		if notObject {
			notObjects = append(notObjects, f.name)
			continue
		}
		for _, o := range objs {
			k := key(o)
			if _, dup := byKey[k]; dup {
				l.logger.Debug("snapshot object appears more than once; keeping the last", "object", k, "file", f.name)
			} else {
				order = append(order, k)
			}
			byKey[k] = o
		}
	}
	older.report(l.logger)
	if n := len(notObjects); n > 0 {
		l.logger.Warn("skipped snapshot files that hold no Kubernetes object", "files", n, "first", notObjects[:min(n, 3)])
	}
	if t.mustGather {
		l.logger.Info("read a must-gather: files of what the exporter does not read were skipped unread", "skipped", t.skipped)
	}
	out := make([]runtime.Object, 0, len(order))
	for _, k := range order {
		out = append(out, byKey[k])
	}
	if err := l.attachLogs(t, logs, out); err != nil {
		return nil, nil, err
	}
	return out, cov, nil
}

// readMeta reads a must-gather's timestamp or version file.
func (l loader) readMeta(t *tree, f treeFile, cov *coverage) error {
	r, err := t.open(f.name)
	if err != nil {
		return err
	}
	defer r.Close()
	if f.role == roleTimestamp {
		if at := readTimestamp(r); !at.IsZero() && at.After(cov.at) {
			cov.at = at
		}
		return nil
	}
	if rel, ok := readRelease(r); ok {
		l.logger.Info("the must-gather image names its release", "file", f.name, "release", rel.String())
		cov.gatheredBy(rel)
	}
	return nil
}

func key(o runtime.Object) string {
	m, _ := o.(metav1.Object)
	return o.GetObjectKind().GroupVersionKind().GroupKind().String() + "/" + m.GetNamespace() + "/" + m.GetName()
}

// loadFile decodes the objects of f; notObject when its first document
// is no Kubernetes object, and the file is skipped.
func (l loader) loadFile(t *tree, f treeFile, older *olderObjects, cov *coverage) (_ []runtime.Object, notObject bool, _ error) {
	r, err := t.open(f.name)
	if err != nil {
		return nil, false, err
	}
	defer r.Close()
	name := f.name
	tail := &lastByte{r: contextReader{l.ctx, r}}
	limited := &io.LimitedReader{R: tail, N: l.maxBytes + 1}
	tooLarge := func() error {
		return fmt.Errorf("%s: more than the %d bytes a snapshot file may hold: split it, or leave out the kinds the exporter does not read", name, l.maxBytes)
	}
	cl := newClaims()
	if f.inLayout {
		cl.pathNamespace = &f.namespace
		cl.kinds[f.gk] = true
	} else {
		cl.name(name)
	}
	st := newFileState(l.ctx, name, older, cov, cl, l.logger)
	next := st.documents(limited)
	var out []runtime.Object
	started := false
	for doc := 1; ; doc++ {
		objs, err := next()
		if err := l.ctx.Err(); err != nil {
			return nil, false, err
		}
		if limited.N <= 0 {
			return nil, false, tooLarge()
		}
		if errors.Is(err, io.EOF) {
			if err := l.checkComplete(f, tail.last, st.listNoKind, cov); err != nil {
				return nil, false, fmt.Errorf("%s: %w", name, err)
			}
			st.closeCut()
			st.log(l.logger)
			cov.commit(cl)
			return out, false, nil
		}
		if errors.Is(err, errNotAnObject) && !started {
			return nil, true, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("%s: document %d: %w", name, doc, err)
		}
		started = started || len(objs) > 0 || cl.records || len(st.skipped) > 0
		st.counted(len(objs))
		out = append(out, objs...)
	}
}
