// Package listing lists the files of a snapshot that others made, a
// directory tree or a tar archive, before anything reads them: what no
// file system holds, what a walk cannot list, and what an archive does
// not really hold (links, devices, sparse files) is skipped and counted,
// never read; a name that climbs out of an archive is an error. It knows
// nothing of what a path means: the caller says which files it wants. It
// depends on the standard library only, so that its fuzz test builds in
// seconds.
package listing

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"path"
	"strings"
	"unicode/utf8"
)

// MaxPathBytes is Linux's PATH_MAX: no file system holds a longer name,
// and no snapshot was written with one.
const MaxPathBytes = 4096

// MaxDepth bounds how deep a walk goes: a must-gather's deepest file
// (must-gather.local.<n>/<image>/namespaces/<ns>/pods/<pod>/<c>/<c>/logs/
// current.log) is 10 directories down, and opening a path inside a
// regularfile.Root costs a step per directory, so 2,100 nested
// directories would take seconds each.
const MaxDepth = 64

// ErrClimbsOut is an archive entry whose name is absolute or has a ".."
// element: an extraction would write it outside its directory.
var ErrClimbsOut = errors.New("a name outside the archive (absolute or with ..): not a must-gather")

// odd counts the paths skipped as unnamable or unreadable, the first of
// them kept to name.
type odd struct {
	n     int
	first string
}

func (o *odd) add(p string) {
	if o.n == 0 {
		// An archive's names may be a megabyte long.
		o.first = strings.ToValidUTF8(p[:min(len(p), 256)], "\uFFFD")
	}
	o.n++
}

func (o odd) warn(logger *slog.Logger) {
	if o.n > 0 {
		logger.Warn("skipped snapshot paths that cannot be named or read (not UTF-8, too long, too deep, unlistable), where nothing the exporter reads lies",
			"paths", o.n, "first", o.first)
	}
}

// Walk calls visit with the name of each file under root in fsys (not a
// directory's), in lexical order. A path that is not UTF-8 (no Kubernetes
// name is) or longer than MaxPathBytes, a directory deeper than MaxDepth
// and one that cannot be listed are skipped with one warning, unless needed says of the
// directory that a file the caller reads may lie under it: then it is an
// error. Walk stops with ctx's error.
func Walk(ctx context.Context, fsys fs.FS, root string, needed func(dir string) bool, visit func(name string), logger *slog.Logger) error {
	var skipped odd
	err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		switch {
		case err != nil && (p == root || needed(p)):
			return err
		case err != nil, !utf8.ValidString(p), len(p) > MaxPathBytes, d.IsDir() && strings.Count(p, "/") >= MaxDepth:
			skipped.add(p)
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		case !d.IsDir():
			visit(p)
		}
		return nil
	})
	skipped.warn(logger)
	return err
}

// IsLink says whether name is a symbolic link: one a regularfile.Root
// refused to follow out of its tree, or one that points nowhere.
func IsLink(fsys fs.FS, name string) bool {
	info, err := fs.Lstat(fsys, name)
	return err == nil && info.Mode()&fs.ModeSymlink != 0
}

// ReadArchive reads the tar archive, gzipped or not, that r streams, and
// calls visit with each regular file's name (without a leading "./"), the
// size its header declares and its bytes, readable until visit returns.
// Directories are passed over; links, devices and sparse files are
// skipped with one warning, as are names no file system holds (not
// UTF-8, empty elements, over MaxPathBytes) with another. A name that
// climbs out is an error wrapping ErrClimbsOut; visit's errors are
// returned as they are, and a stream that is no tar archive is an error
// saying so.
func ReadArchive(r io.Reader, visit func(name string, size int64, body io.Reader) error, logger *slog.Logger) error {
	stream, err := decompressed(bufio.NewReader(r))
	if err != nil {
		return err
	}
	notFiles := 0
	var skipped odd
	tr := tar.NewReader(stream)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("reading the archive: %w", err)
		}
		name := strings.TrimPrefix(h.Name, "./")
		switch {
		case h.Typeflag == tar.TypeDir:
			continue // nothing is written: a directory's name is harmless
		case h.Typeflag != tar.TypeReg || sparse(h):
			notFiles++
			continue
		case climbsOut(name):
			return fmt.Errorf("archive entry %q: %w", name[:min(len(name), 256)], ErrClimbsOut)
		case !fs.ValidPath(name) || len(name) > MaxPathBytes:
			skipped.add(name)
			continue
		}
		if err := visit(name, h.Size, tr); err != nil {
			return err
		}
	}
	if notFiles > 0 {
		logger.Warn("skipped archive entries that are not regular files (links, devices, sparse files)", "entries", notFiles)
	}
	skipped.warn(logger)
	return nil
}

// climbsOut: an absolute name, or one with a ".." element.
func climbsOut(name string) bool {
	return path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") || strings.HasSuffix(name, "/..") || strings.Contains(name, "/../")
}

// sparse: a GNU sparse file, in the old form or PAX's. Its holes read as
// zeros the archive does not hold: 288 bytes of archive can declare 2^62
// of them at a build log's path. Neither oc nor tar without --sparse
// writes one.
func sparse(h *tar.Header) bool {
	if h.Typeflag == tar.TypeGNUSparse {
		return true
	}
	for k := range h.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return true
		}
	}
	return false
}

// decompressed is r, gunzipped when it starts with gzip's magic bytes.
func decompressed(r *bufio.Reader) (io.Reader, error) {
	magic, err := r.Peek(2)
	if err != nil {
		return nil, fmt.Errorf("not a tar archive: %w", err)
	}
	if magic[0] == 0x1f && magic[1] == 0x8b {
		return gzip.NewReader(r)
	}
	return r, nil
}
