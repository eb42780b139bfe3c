package source

// Archived must-gathers: `tar czf must-gather.tar.gz must-gather.local.*`,
// as support cases attach them. The archive is read once, as a stream:
// each entry is kept or skipped by its path before its bytes are read,
// and only regular files are kept, in memory, bounded like files.

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"github.com/ocl-exporter/ocl_exporter/regularfile"
)

// MaxArchiveBytes bounds what an archive's kept entries may hold in
// memory together: the exporter's kinds of a large cluster stay far
// below it.
const MaxArchiveBytes = 1 << 30

// logTailBytes is how much of the end of a container log is kept: the
// kubelet's FallbackToLogsOnError keeps 2048 bytes (pkg/kubelet/
// kuberuntime kuberuntime_container.go maxTerminationMessageLogLength).
const logTailBytes = 2048

// isArchive: a snapshot named .tar, .tar.gz or .tgz.
func isArchive(p string) bool {
	for _, ext := range []string{".tar", ".tar.gz", ".tgz"} {
		if strings.HasSuffix(strings.ToLower(p), ext) {
			return true
		}
	}
	return false
}

// archive reads the must-gather archive at p into a tree of the entries
// the exporter reads. Links, devices, sparse files and directories are
// never kept, nor names no file system holds (not UTF-8, over PATH_MAX);
// a name that is absolute or climbs out with ".." is an error, as is an
// entry or the kept whole over its bound.
func (l loader) archive(p string) (*tree, error) {
	f, err := regularfile.Open(p, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := decompressed(bufio.NewReader(contextReader{l.ctx, f}))
	if err != nil {
		return nil, fmt.Errorf("%w; or extract it (tar xf %s) and pass the directory", err, p)
	}
	data := map[string][]byte{}
	var total int64
	notFiles := 0
	ls := lister{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if cerr := l.ctx.Err(); cerr != nil {
				return nil, cerr
			}
			return nil, fmt.Errorf("reading the archive: %w; or extract it (tar xf %s) and pass the directory", err, p)
		}
		name := strings.TrimPrefix(h.Name, "./")
		switch {
		case h.Typeflag == tar.TypeDir:
			continue // nothing is written: a directory's name is harmless
		case h.Typeflag != tar.TypeReg || sparse(h):
			notFiles++
			continue
		case climbsOut(name):
			return nil, fmt.Errorf("archive entry %q: a name outside the archive (absolute or with ..): not a must-gather", headBytes(h.Name, 256))
		case !fs.ValidPath(name) || len(name) > maxPathBytes:
			ls.odd(name)
			continue
		}
		f := l.role(name)
		if !ls.add(f) {
			continue // not read: only counted
		}
		b, err := l.entry(tr, f, h.Size)
		if err != nil {
			return nil, fmt.Errorf("archive entry %s: %w", name, err)
		}
		if total += int64(len(b) + len(name)); total > MaxArchiveBytes {
			return nil, fmt.Errorf("the archive's files the exporter reads hold more than %d bytes: extract it (tar xf %s) and pass the directory", int64(MaxArchiveBytes), p)
		}
		data[name] = b
	}
	if notFiles > 0 {
		l.logger.Warn("skipped archive entries that are not regular files (links, devices, sparse files)", "archive", p, "entries", notFiles)
	}
	t := ls.tree(l)
	if len(t.files) == 0 && !t.mustGather {
		return nil, fmt.Errorf("no .yaml, .yml or .json files in the archive")
	}
	for i := range t.files {
		t.files[i].size = int64(len(data[t.files[i].name]))
	}
	t.open = func(name string) (io.ReadCloser, error) {
		b, ok := data[name]
		if !ok {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		return io.NopCloser(bytes.NewReader(b)), nil
	}
	return t, nil
}

// maxPathBytes is Linux's PATH_MAX: no file system holds a longer name,
// and no must-gather was written with one.
const maxPathBytes = 4096

// climbsOut: an absolute name, or one with a ".." element, which an
// extraction would write outside its directory.
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

// contextReader fails its reads once ctx ends.
type contextReader struct {
	ctx context.Context
	r   io.Reader
}

func (c contextReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// entry reads the current entry: a log's tail, anything else whole if
// within the file bound.
func (l loader) entry(tr *tar.Reader, f treeFile, size int64) ([]byte, error) {
	// Reads of the entry stop with ctx too: bytes that are not the
	// archive's (a sparse file's holes) never reach the archive's reader.
	r := contextReader{l.ctx, tr}
	if f.role == roleLog {
		return tail(r, size, max(logTailBytes, builderLogBytes))
	}
	if size > l.maxBytes {
		return nil, fmt.Errorf("%d bytes, more than the %d a snapshot file may hold", size, l.maxBytes)
	}
	return io.ReadAll(io.LimitReader(r, l.maxBytes+1))
}

// tail returns the last n bytes of r, which holds size bytes: a
// seekable file is not read before them.
func tail(r io.Reader, size int64, n int64) ([]byte, error) {
	skip := max(size-n, 0)
	if s, ok := r.(io.Seeker); ok && skip > 0 {
		if _, err := s.Seek(skip, io.SeekStart); err != nil {
			return nil, err
		}
	} else if _, err := io.CopyN(io.Discard, r, skip); err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(r, n))
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
