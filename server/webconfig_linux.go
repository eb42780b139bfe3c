package server

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// privateCopy is an anonymous in-memory file (memfd), read by its
// /proc/self/fd path: the Deployment's root filesystem is read-only. A
// copy of the web config never changes (a reload makes a new one); a
// copy of a TLS file is replaced whole when the file changes.
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

// replace puts a new file holding b at c's descriptor number: the swap
// is atomic (dup3), and a reader that opened the old file reads it to
// its end.
func (c privateCopy) replace(b []byte) error {
	next, err := newPrivateCopy(b)
	if err != nil {
		return err
	}
	defer next.close()
	return unix.Dup3(next.fd, c.fd, unix.O_CLOEXEC)
}

func (c privateCopy) path() string { return "/proc/self/fd/" + strconv.Itoa(c.fd) }

func (c privateCopy) close() { _ = unix.Close(c.fd) }
