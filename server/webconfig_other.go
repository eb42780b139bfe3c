//go:build !linux

package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// privateCopy is a file in a private temporary directory, where there is
// no memfd (a workstation: its temporary directory is writable). A new
// copy is renamed over the old one.
type privateCopy struct{ dir, file string }

func newPrivateCopy() privateCopy { return privateCopy{} }

func (c *privateCopy) path() string { return c.file }

// replace writes b to a new file, validates it by path and renames it
// over the old one at once: path never names a file half written.
func (c *privateCopy) replace(b []byte, validate func(path string) error) error {
	if c.dir == "" {
		dir, err := os.MkdirTemp("", "ocl_exporter-web-config-")
		if err != nil {
			return fmt.Errorf("a private copy: %w", err)
		}
		c.dir = dir
	}
	f, err := os.CreateTemp(c.dir, "next-")
	if err != nil {
		return fmt.Errorf("a private copy: %w", err)
	}
	_, err = f.Write(b)
	if err = errors.Join(err, f.Close()); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("a private copy: %w", err)
	}
	if err := validate(f.Name()); err != nil {
		_ = os.Remove(f.Name())
		return err
	}
	file := filepath.Join(c.dir, "web-config.yml")
	if err := os.Rename(f.Name(), file); err != nil {
		return fmt.Errorf("a private copy: %w", err)
	}
	c.file = file
	return nil
}

func (c *privateCopy) close() { _ = os.RemoveAll(c.dir) }
