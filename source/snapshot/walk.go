package snapshot

// Listing a snapshot's files, a directory walked or an archive read: each
// path is kept or skipped by its name before a byte of it is read.

import (
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/ocl-exporter/ocl_exporter/listing"
	"github.com/ocl-exporter/ocl_exporter/regularfile"
)

// walk lists the files under root to read, in lexical order. It follows
// links to learn what a path is, but never opens anything but a regular
// file: opening a FIFO blocks for ever, and /dev/zero never ends. Given a
// regularfile.Root, a link that leaves the snapshot is skipped, never
// read. In a must-gather, paths decide: only the resources the exporter
// reads, in the namespaces it reads them in, are listed; what it cannot
// name or list is skipped where nothing it reads can lie.
func (l loader) walk(fsys fs.FS, root string) (*tree, error) {
	ls := lister{}
	err := listing.Walk(l.ctx, fsys, root, l.readsUnder, func(p string) { ls.add(l.role(p)) }, l.logger)
	if err != nil {
		return nil, err
	}
	t := ls.tree()
	keep := t.files[:0]
	var links []string
	for _, f := range t.files {
		info, err := fs.Stat(fsys, f.name) // follows links
		switch {
		case err != nil && listing.IsLink(fsys, f.name):
			links = append(links, f.name)
		case err != nil:
			return nil, fmt.Errorf("%s: %w", f.name, err)
		case info.IsDir():
		case !info.Mode().IsRegular():
			l.logger.Warn("skipping a snapshot path that is not a regular file", "file", f.name, "type", regularfile.Type(info.Mode()))
		case info.Size() > l.maxBytes && f.role != roleLog && f.role != roleGatherLog:
			return nil, fmt.Errorf("%s: %d bytes, more than the %d a snapshot file may hold: split it, or leave out the kinds the exporter does not read", f.name, info.Size(), l.maxBytes)
		default:
			f.size = info.Size()
			keep = append(keep, f)
		}
	}
	if len(links) > 0 {
		l.logger.Warn("skipped links that leave the snapshot or lead nowhere: never read", "links", len(links), "first", links[0])
	}
	t.files = keep
	if len(t.files) == 0 && !t.mustGather {
		return nil, fmt.Errorf("no .yaml, .yml or .json files under %q", root)
	}
	t.open = func(name string) (io.ReadCloser, error) { return fsys.Open(name) }
	return t, nil
}

// readsUnder says whether the directory p may hold a file the exporter
// reads in a must-gather's layout: left unread, a resource the release
// gathered would read as having no objects. Elsewhere what a directory
// holds is captured only by the files read, so a directory left unread
// reads as not captured.
func (l loader) readsUnder(p string) bool {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if s == clusterScopedDir || s == namespacesDir {
			return layoutDirRead(segs[i:], l.namespace)
		}
	}
	return false
}

// layoutDirRead says whether a directory at segs (from its layout segment
// on) may hold a file classifyMustGather reads; mco is the MCO's
// namespace.
func layoutDirRead(segs []string, mco string) bool {
	if len(segs) < 2 {
		return true
	}
	ns, rest := "", segs[1:]
	if segs[0] == namespacesDir {
		ns, rest = segs[1], segs[2:]
	}
	if ns != "" && len(rest) > 0 && rest[0] == "pods" {
		return ns == mco && len(rest) <= 5 // pods/<pod>/<c>/<c>/logs
	}
	if len(rest) > 2 {
		return false
	}
	for _, r := range Resources() {
		group := r.GVR.Group
		if group == "" {
			group = "core"
		}
		if r.WatchNamespace(mco) == ns && (len(rest) < 1 || rest[0] == group) && (len(rest) < 2 || rest[1] == r.GVR.Resource) {
			return true
		}
	}
	return false
}

// role is what path p holds, by its name alone.
func (l loader) role(p string) treeFile {
	if macMetadata(p) {
		return treeFile{name: p, mustGatherPath: mustGatherPath{role: roleSkip}}
	}
	segs := strings.Split(p, "/")
	if i := layoutIndex(segs); i >= 0 {
		return treeFile{name: p, mustGatherPath: classifyMustGather(segs[i:], l.namespace), inLayout: true}
	}
	if r, ok := formRole(p); ok {
		return treeFile{name: p, mustGatherPath: mustGatherPath{role: r}}
	}
	switch path.Base(p) {
	case timestampFile:
		return treeFile{name: p, mustGatherPath: mustGatherPath{role: roleTimestamp}}
	case versionFile:
		return treeFile{name: p, mustGatherPath: mustGatherPath{role: roleVersion}}
	}
	switch strings.ToLower(path.Ext(p)) {
	case ".yaml", ".yml", ".json":
		return treeFile{name: p}
	}
	return treeFile{name: p, mustGatherPath: mustGatherPath{role: roleSkip}}
}

// lister collects the files a walk or an archive lists. A file its path
// says is never read is only counted: memory grows with the files read,
// not with the whole cluster a must-gather holds, nor with an archive's
// entries skipped.
type lister struct {
	files   []treeFile
	skipped int
	// layout: a path of a must-gather's layout was listed; from then on
	// the objects outside it are skipped.
	layout bool
}

// add lists f unless its path says it is never read, and says which.
func (ls *lister) add(f treeFile) (listed bool) {
	ls.layout = ls.layout || f.inLayout
	if f.role == roleSkip || (ls.layout && f.role == roleObjects && !f.inLayout) {
		ls.skipped++
		return false
	}
	ls.files = append(ls.files, f)
	return true
}

// tree keeps, of the listed files, the files to read, in lexical order:
// in a must-gather (a path in its layout) the layout's objects and logs,
// its timestamp and version files, and none of the rest (discovery
// documents, etcd and Prometheus answers); elsewhere every YAML and JSON
// file.
func (ls *lister) tree() *tree {
	t := &tree{mustGather: ls.layout, skipped: ls.skipped}
	for _, f := range ls.files {
		switch {
		case !t.mustGather && f.role == roleCleanReport:
			f.role = roleObjects // a flat snapshot's file of that name
			t.files = append(t.files, f)
		case !t.mustGather && (f.role == roleTimestamp || f.role == roleVersion || f.role == roleGatherLog || f.role == roleCleanMark):
		case t.mustGather && f.role == roleObjects && !f.inLayout:
			t.skipped++
		default:
			t.files = append(t.files, f)
		}
	}
	sort.Slice(t.files, func(i, j int) bool { return t.files[i].name < t.files[j].name })
	return t
}
