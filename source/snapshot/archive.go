package snapshot

// Archived must-gathers: `tar czf must-gather.tar.gz must-gather.local.*`,
// as support cases attach them. The archive is read once, as a stream:
// each entry is kept or skipped by its path before its bytes are read,
// and only regular files are kept, in memory, bounded like files.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/ocl-exporter/ocl_exporter/listing"
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
// the exporter reads (listing.ReadArchive says what else is skipped or
// refused); an entry, or the kept whole, over its bound is an error.
func (l loader) archive(p string) (*tree, error) {
	f, err := regularfile.Open(p, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data := map[string][]byte{}
	var total int64
	ls := lister{}
	var kept error // an entry's or the bound's: no hint to extract
	err = listing.ReadArchive(contextReader{l.ctx, f}, func(name string, size int64, body io.Reader) error {
		f := l.role(name)
		if !ls.add(f) {
			return nil // not read: only counted
		}
		b, err := l.entry(body, f, size)
		if err != nil {
			kept = fmt.Errorf("archive entry %s: %w", name, err)
			return kept
		}
		if total += int64(len(b) + len(name)); total > MaxArchiveBytes {
			kept = fmt.Errorf("the archive's files the exporter reads hold more than %d bytes: extract it (tar xf %s) and pass the directory", int64(MaxArchiveBytes), p)
			return kept
		}
		data[name] = b
		return nil
	}, l.logger.With("archive", p))
	switch {
	case err != nil && l.ctx.Err() != nil:
		return nil, l.ctx.Err()
	case err != nil && ((kept != nil && errors.Is(err, kept)) || errors.Is(err, listing.ErrClimbsOut)):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("%w; or extract it (tar xf %s) and pass the directory", err, p)
	}
	t := ls.tree()
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

// entry reads the current entry: a log's tail, what a gather's log says
// of the gather, anything else whole if within the file bound. Its reads
// stop with ctx too: bytes that are not the archive's never reach the
// archive's reader.
func (l loader) entry(body io.Reader, f treeFile, size int64) ([]byte, error) {
	r := contextReader{l.ctx, body}
	k, known := kinds[f.gk]
	switch {
	case f.role == roleLog:
		return tail(r, size, max(logTailBytes, builderLogBytes))
	case f.role == roleGatherLog:
		return gatherLogNote(r) // all the loader reads of it
	case size > l.maxBytes:
		return nil, fmt.Errorf("%d bytes, more than the %d a snapshot file may hold", size, l.maxBytes)
	case f.role == roleObjects && f.inLayout && known && k.new == nil:
		return metadataLines(r, l.maxBytes) // kept until read: only what is read
	}
	return io.ReadAll(io.LimitReader(r, l.maxBytes+1))
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
