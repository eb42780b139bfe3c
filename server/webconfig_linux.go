package server

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// privateCopy is an anonymous in-memory file (memfd), read by its
// /proc/self/fd path: the Deployment's root filesystem is read-only. A
// copy never changes; a reload makes a new one.
type privateCopy struct{ fd int }

// newPrivateCopy returns a new copy holding b.
func newPrivateCopy(b []byte) (privateCopy, error) {
	fd, err := unix.MemfdCreate("ocl_exporter-web-config", unix.MFD_CLOEXEC)
	if err != nil {
		return privateCopy{}, err
	}
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err != nil {
			_ = unix.Close(fd)
			return privateCopy{}, err
		}
		b = b[n:]
	}
	return privateCopy{fd: fd}, nil
}

func (c privateCopy) path() string { return "/proc/self/fd/" + strconv.Itoa(c.fd) }

func (c privateCopy) close() { _ = unix.Close(c.fd) }
