package server

import (
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"
)

// privateCopy is an anonymous in-memory file (memfd), read by its
// /proc/self/fd path: the Deployment's root filesystem is read-only.
type privateCopy struct{ fd int }

func newPrivateCopy() privateCopy { return privateCopy{fd: -1} }

func (c *privateCopy) path() string { return fdPath(c.fd) }

func fdPath(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }

// replace writes b to a new copy, validates it by path and puts it in
// place of the old one at once: path never names a file half written.
func (c *privateCopy) replace(b []byte, validate func(path string) error) error {
	next, err := memFile(b)
	if err != nil {
		return fmt.Errorf("a private copy: %w", err)
	}
	if err := validate(fdPath(next)); err != nil {
		_ = unix.Close(next)
		return err
	}
	if c.fd < 0 {
		c.fd = next
		return nil
	}
	err = unix.Dup3(next, c.fd, unix.O_CLOEXEC)
	_ = unix.Close(next)
	return err
}

func (c *privateCopy) close() { _ = unix.Close(c.fd) }

// memFile returns a new anonymous in-memory file holding b.
func memFile(b []byte) (int, error) {
	fd, err := unix.MemfdCreate("ocl_exporter-web-config", unix.MFD_CLOEXEC)
	if err != nil {
		return -1, err
	}
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err != nil {
			_ = unix.Close(fd)
			return -1, err
		}
		b = b[n:]
	}
	return fd, nil
}
