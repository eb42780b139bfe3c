//go:build !linux

package server

import (
	"os"
	"path/filepath"
)

// privateCopy is a file in a private temporary directory, where there is
// no memfd (a workstation: its temporary directory is writable). A copy
// never changes; a reload makes a new one.
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

func (c privateCopy) path() string { return filepath.Join(c.dir, "web-config.yml") }

func (c privateCopy) close() { _ = os.RemoveAll(c.dir) }
