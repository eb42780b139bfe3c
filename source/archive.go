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
	"errors"
	"fmt"
	"io"
	"io/fs"
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
// the exporter reads. Links, devices and directories are never kept; a
// name that is absolute or climbs out with ".." is an error, as is an
// entry or the kept whole over its bound.
func (l loader) archive(p string) (*tree, error) {
	f, err := regularfile.Open(p, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := decompressed(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("%w; or extract it (tar xf %s) and pass the directory", err, p)
	}
	var candidates []treeFile
	data := map[string][]byte{}
	var total int64
	links := 0
	seenLayout := false
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the archive: %w; or extract it (tar xf %s) and pass the directory", err, p)
		}
		switch h.Typeflag {
		case tar.TypeReg:
		case tar.TypeDir:
			continue // nothing is written: a directory's name is harmless
		default:
			links++
			continue
		}
		name := strings.TrimPrefix(h.Name, "./")
		if !fs.ValidPath(name) {
			return nil, fmt.Errorf("archive entry %q: a name outside the archive (absolute or with ..): not a must-gather", h.Name)
		}
		f := l.role(name)
		candidates = append(candidates, f)
		seenLayout = seenLayout || f.inLayout
		if f.role == roleSkip || (seenLayout && f.role == roleObjects && !f.inLayout) {
			continue // choose skips it: not read
		}
		b, err := l.entry(tr, f, h.Size)
		if err != nil {
			return nil, fmt.Errorf("archive entry %s: %w", name, err)
		}
		if total += int64(len(b)); total > MaxArchiveBytes {
			return nil, fmt.Errorf("the archive's files the exporter reads hold more than %d bytes: extract it (tar xf %s) and pass the directory", int64(MaxArchiveBytes), p)
		}
		data[name] = b
	}
	if links > 0 {
		l.logger.Warn("skipped archive entries that are not regular files (links, devices)", "archive", p, "entries", links)
	}
	t := l.choose(candidates)
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

// entry reads the current entry: a log's tail, anything else whole if
// within the file bound.
func (l loader) entry(tr *tar.Reader, f treeFile, size int64) ([]byte, error) {
	if f.role == roleLog {
		return tail(tr, size, max(logTailBytes, builderLogBytes))
	}
	if size > l.maxBytes {
		return nil, fmt.Errorf("%d bytes, more than the %d a snapshot file may hold", size, l.maxBytes)
	}
	return io.ReadAll(io.LimitReader(tr, l.maxBytes+1))
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
