package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// WriteCapture writes the files into a directory (when out is one, or
// ends in /), else concatenated into one file, in name order. Nothing is
// written in place: the files are made in a new private
// directory (or temporary file) next to out and renamed into place, so a
// failure leaves nothing behind, a link planted at out or in it is
// replaced rather than followed, and no file of an earlier capture
// survives for a later --snapshot to read. An existing file, or a
// non-empty directory, is replaced only with force.
func WriteCapture(out string, files map[string][]byte, force bool) error {
	names := slices.Sorted(maps.Keys(files))
	if out == "" {
		return errors.New("capture --output: empty path; use - for standard output")
	}
	fi, statErr := os.Lstat(out)
	if (statErr == nil && fi.IsDir()) || strings.HasSuffix(out, "/") {
		return writeCaptureDir(filepath.Clean(out), names, files, force)
	}
	if statErr == nil && !force {
		return fmt.Errorf("capture --output=%s: already exists; pass --force to replace it", out)
	}
	if statErr == nil && !fi.Mode().IsRegular() && fi.Mode()&os.ModeSymlink == 0 {
		return fmt.Errorf("capture --output=%s: a %s, not a file", out, fi.Mode().Type())
	}
	var all bytes.Buffer
	for _, n := range names {
		all.Write(files[n])
	}
	f, err := os.CreateTemp(filepath.Dir(out), ".capture-*.tmp") // O_EXCL, 0600
	if err != nil {
		return fmt.Errorf("capture --output: %w", err)
	}
	_, err = f.Write(all.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), out) // replaces a link, never follows it
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("capture --output: %w", err)
	}
	return nil
}

// writeCaptureDir writes the files into a new directory next to dir and
// renames it into place. An existing dir that is not empty is replaced
// only with force, and only when it holds nothing but snapshot files: a
// directory with anything else in it is not a capture's to delete.
func writeCaptureDir(dir string, names []string, files map[string][]byte, force bool) error {
	entries, err := os.ReadDir(dir)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("capture --output: %w", err)
	}
	if len(entries) > 0 {
		if !force {
			return fmt.Errorf("capture --output=%s/: the directory is not empty; pass --force to replace it, or name a new one", dir)
		}
		for _, e := range entries {
			switch strings.ToLower(filepath.Ext(e.Name())) {
			case ".yaml", ".yml", ".json":
				if !e.IsDir() {
					continue
				}
			}
			return fmt.Errorf("capture --output=%s/: holds %s, which is not a snapshot file; --force replaces only a directory of snapshot files", dir, e.Name())
		}
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("capture --output: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".capture-*") // new, 0700: nothing planted in it
	if err != nil {
		return fmt.Errorf("capture --output: %w", err)
	}
	defer os.RemoveAll(tmp) // gone once renamed; the leftovers of a failure otherwise
	var errs []error
	for _, n := range names {
		if err := writeNew(filepath.Join(tmp, n), files[n]); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("capture --output: nothing written: %w", errors.Join(errs...))
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("capture --output: %w", err)
	}
	if !exists {
		if err := os.Rename(tmp, dir); err != nil {
			return fmt.Errorf("capture --output: %w", err)
		}
		return nil
	}
	// A directory cannot be renamed over a non-empty one: move the old one
	// aside, put the new one in place, then remove the old one.
	old := tmp + ".old"
	if err := os.Rename(dir, old); err != nil {
		return fmt.Errorf("capture --output: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return errors.Join(fmt.Errorf("capture --output: %w", err), os.Rename(old, dir))
	}
	return os.RemoveAll(old)
}

// writeNew creates name, which must not exist (O_EXCL, and O_NOFOLLOW so a
// link is never followed), mode 0600.
func writeNew(name string, b []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
