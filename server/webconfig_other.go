//go:build !linux

package server

import (
	"os"
	"path/filepath"
)

// privateCopy is a file in a private temporary directory, where there is
// no memfd (a workstation: its temporary directory is writable). A copy
// of the web config never changes (a reload makes a new one); a copy of a
// TLS file is replaced whole when the file changes.
type privateCopy struct{ dir string }

// newPrivateCopy returns a new copy holding b.
func newPrivateCopy(b []byte) (privateCopy, error) {
	dir, err := os.MkdirTemp("", "ocl_exporter-web-config-")
	if err != nil {
		return privateCopy{}, err
	}
	c := privateCopy{dir: dir}
	if err := os.WriteFile(c.path(), b, 0o600); err != nil {
		c.close()
		return privateCopy{}, err
	}
	return c, nil
}

// replace renames a new file holding b over c's: a reader that opened the
// old file reads it to its end.
func (c privateCopy) replace(b []byte) error {
	tmp := c.path() + ".new"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, c.path())
}

func (c privateCopy) path() string { return filepath.Join(c.dir, "copy") }

func (c privateCopy) close() { _ = os.RemoveAll(c.dir) }
