// Package regularfile opens the files the exporter is told to read (a
// snapshot, a kubeconfig, the web configuration) and refuses anything
// but a regular file of bounded size: reading a FIFO blocks until a
// writer comes, /dev/zero never ends, and a file swapped for either
// between a stat and the open must not get through either. Files are
// opened without blocking and checked through the opened descriptor.
package regularfile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Open opens path for reading if it is a regular file of at most maxBytes
// (no bound when maxBytes is 0), else returns an error naming what it is.
func Open(path string, maxBytes int64) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err == nil {
		err = check(info, maxBytes)
	}
	if err != nil {
		_ = f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return f, nil
}

// ReadFile reads path whole if it is a regular file of at most maxBytes
// (maxBytes must be positive): the size is checked through the
// descriptor, and a file that grows while it is read is refused too.
func ReadFile(path string, maxBytes int64) ([]byte, error) {
	f, err := Open(path, maxBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if int64(len(b)) > maxBytes {
		return nil, fmt.Errorf("%s grew past %d bytes while read", path, maxBytes)
	}
	return b, nil
}

// Check is Open and Close, for a file another library reads by its path.
func Check(path string, maxBytes int64) error {
	f, err := Open(path, maxBytes)
	if err != nil {
		return err
	}
	return f.Close()
}

func check(info fs.FileInfo, maxBytes int64) error {
	switch m := info.Mode(); {
	case m.IsRegular():
		if maxBytes > 0 && info.Size() > maxBytes {
			return fmt.Errorf("%d bytes, more than the %d it may hold", info.Size(), maxBytes)
		}
		return nil
	case m.IsDir():
		return fmt.Errorf("a directory, not a regular file")
	default:
		return fmt.Errorf("a %s, not a regular file", Type(m))
	}
}

// Type names a file type for an error message.
func Type(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "device"
	case m.IsDir():
		return "directory"
	default:
		return m.Type().String()
	}
}

// Root is a directory tree read as an fs.FS that never leaves it: a link
// that points outside (a must-gather's log linked to /etc/shadow) fails to
// open or stat, as os.Root resolves it, without a race between a check and
// the open. Open refuses, without blocking, what is neither a regular file
// nor a directory; Stat follows links inside the tree, and Lstat does not,
// so a walk still sees a FIFO, or a link, and can skip it by name.
type Root struct{ root *os.Root }

// OpenRoot opens the directory dir as a Root; Close releases it.
func OpenRoot(dir string) (*Root, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &Root{r}, nil
}

// Close releases the directory.
func (r *Root) Close() error { return r.root.Close() }

// Open implements fs.FS.
func (r *Root) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	f, err := r.root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err == nil && !info.IsDir() {
		err = check(info, 0)
	}
	if err != nil {
		_ = f.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return f, nil
}

// Stat implements fs.StatFS.
func (r *Root) Stat(name string) (fs.FileInfo, error) { return fs.Stat(r.root.FS(), name) }

// Lstat implements fs.ReadLinkFS.
func (r *Root) Lstat(name string) (fs.FileInfo, error) { return fs.Lstat(r.root.FS(), name) }

// ReadLink implements fs.ReadLinkFS.
func (r *Root) ReadLink(name string) (string, error) { return fs.ReadLink(r.root.FS(), name) }

// ReadDir implements fs.ReadDirFS.
func (r *Root) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(r.root.FS(), name) }
