package regularfile

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within fails the test if f has not returned after a while: the point
// of the package is that nothing blocks.
func within(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s blocked", what)
		return nil
	}
}

func TestOpenRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, 2048), 0o600); err != nil {
		t.Fatal(err)
	}
	ok := filepath.Join(dir, "ok.yaml")
	if err := os.WriteFile(ok, []byte("a: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{fifo, "a FIFO, not a regular file"},
		{"/dev/zero", "a character device, not a regular file"},
		{dir, "a directory, not a regular file"},
		{big, "2048 bytes, more than the 1024"},
	} {
		err := within(t, tc.path, func() error { return Check(tc.path, 1024) })
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("Check(%s) = %v, want an error naming it and %q", tc.path, err, tc.want)
		}
		err = within(t, tc.path, func() error { _, err := ReadFile(tc.path, 1024); return err })
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("ReadFile(%s) = %v, want an error naming it and %q", tc.path, err, tc.want)
		}
	}
	if err := Check(ok, 1024); err != nil {
		t.Errorf("Check(regular file) = %v", err)
	}
	if b, err := ReadFile(ok, 1024); err != nil || string(b) != "a: 1\n" {
		t.Errorf("ReadFile(regular file) = %q, %v", b, err)
	}
}

// TestRootOpenOfAFIFODoesNotBlock: the file a walk saw as regular may be
// a FIFO by the time it is opened; the open must fail, not hang.
func TestRootOpenOfAFIFODoesNotBlock(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "swapped.yaml"), 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ok.yaml"), []byte("a: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fsys := openRoot(t, dir)
	err := within(t, "opening a FIFO", func() error {
		f, err := fsys.Open("swapped.yaml")
		if err == nil {
			_, err = io.ReadAll(f)
			_ = f.Close()
		}
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "FIFO") {
		t.Errorf("Open(FIFO) = %v, want an error naming the FIFO", err)
	}
	b, err := fs.ReadFile(fsys, "ok.yaml")
	if err != nil || string(b) != "a: 1\n" {
		t.Errorf("ReadFile(ok.yaml) = %q, %v", b, err)
	}
	info, err := fs.Stat(fsys, "swapped.yaml")
	if err != nil || info.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("Stat(FIFO) = %v, %v: a walk must still see what it is", info, err)
	}
	if _, err := fsys.Open("../escape"); err == nil {
		t.Error("Open(../escape) succeeded")
	}
}

func openRoot(t *testing.T, dir string) *Root {
	t.Helper()
	r, err := OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// TestRootStaysInside: a link that leaves the tree, whether absolute or
// climbing with .., neither opens nor stats, while one inside it does;
// Lstat still names what the link is.
func TestRootStaysInside(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("token"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "in.log"), []byte("inside"), 0o600); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"abs.log": outside, "up.log": "../" + filepath.Base(filepath.Dir(outside)) + "/secret", "in-link.log": "in.log"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	r := openRoot(t, dir)
	for _, name := range []string{"abs.log", "up.log"} {
		if b, err := fs.ReadFile(r, name); err == nil {
			t.Errorf("%s read %q from outside the tree", name, b)
		}
		if _, err := r.Stat(name); err == nil {
			t.Errorf("Stat(%s) followed a link out of the tree", name)
		}
		if info, err := r.Lstat(name); err != nil || info.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("Lstat(%s) = %v, %v: want the link itself", name, info, err)
		}
	}
	if b, err := fs.ReadFile(r, "in-link.log"); err != nil || string(b) != "inside" {
		t.Errorf("a link inside the tree: %q, %v", b, err)
	}
}
