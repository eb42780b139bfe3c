package listing

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ocl-exporter/ocl_exporter/listing/listingtest"
	"github.com/ocl-exporter/ocl_exporter/regularfile"
)

// tarOf writes headers with archive/tar, each regular file holding body.
func tarOf(format tar.Format, body string, headers ...*tar.Header) []byte {
	var b bytes.Buffer
	w := tar.NewWriter(&b)
	for _, h := range headers {
		h.Format = format
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(body))
		}
		if err := w.WriteHeader(h); err != nil {
			panic(err)
		}
		if h.Typeflag == tar.TypeReg {
			_, _ = w.Write([]byte(body))
		}
	}
	_ = w.Close()
	return b.Bytes()
}

func gzipped(b []byte) []byte {
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return out.Bytes()
}

const buildLog = "must-gather.local.1/image/namespaces/openshift-machine-config-operator/pods/build-x/image-build/image-build/logs/current.log"

// seeds are archives of every header type a hostile one holds.
func seeds() [][]byte {
	mosc := "apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineOSConfig\nmetadata: {name: infra}\n"
	long := "must-gather.local.1/" + strings.Repeat("long/", 40) + "x.yaml"
	out := [][]byte{
		tarOf(tar.FormatPAX, mosc,
			&tar.Header{Name: "mg/cluster-scoped-resources/machineconfiguration.openshift.io/machineosconfigs/infra.yaml", Typeflag: tar.TypeReg},
			&tar.Header{Name: "mg/", Typeflag: tar.TypeDir},
			&tar.Header{Name: long, Typeflag: tar.TypeReg},
			&tar.Header{Name: "mg/passwd.yaml", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"},
			&tar.Header{Name: "mg/up.yaml", Typeflag: tar.TypeSymlink, Linkname: "../../secret"},
			&tar.Header{Name: "mg/hard.yaml", Typeflag: tar.TypeLink, Linkname: "mg/cluster-scoped-resources/machineconfiguration.openshift.io/machineosconfigs/infra.yaml"},
			&tar.Header{Name: "mg/zero.yaml", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 5},
			&tar.Header{Name: "mg/fifo.yaml", Typeflag: tar.TypeFifo},
			&tar.Header{Name: "mg/é-名前.yaml", Typeflag: tar.TypeReg},
		),
		gzipped(tarOf(tar.FormatGNU, "x\n", &tar.Header{Name: long, Typeflag: tar.TypeReg}, &tar.Header{Name: "l", Typeflag: tar.TypeSymlink, Linkname: strings.Repeat("t/", 80)})),
		tarOf(tar.FormatUSTAR, "a: 1\n", &tar.Header{Name: "./mg/a.yaml", Typeflag: tar.TypeReg}),
		listingtest.Archive(
			listingtest.Entry{Name: "mg/\xff\xfe.yaml", Typeflag: '0', Data: []byte("a: 1\n")},
			listingtest.Entry{Name: "mg//double.yaml", Typeflag: '0', Data: []byte("a: 1\n")},
			listingtest.Entry{Name: "mg/link", Typeflag: '2', Linkname: "../../secret"},
			listingtest.Entry{Name: "mg/link/through.yaml", Typeflag: '0', Data: []byte("a: 1\n")},
		),
		listingtest.Archive(listingtest.Entry{Name: "../../etc/cron.d/x.yaml", Typeflag: '0', Data: []byte("* * * * * root id\n")}),
		listingtest.Archive(listingtest.Entry{Name: "/etc/x.yaml", Typeflag: '0', Data: []byte("x")}),
		[]byte("PK\x03\x04 a zip file"),
	}
	for _, entries := range listingtest.Sparse(buildLog) {
		out = append(out, listingtest.Archive(entries...))
	}
	return out
}

// marker is what the file beside each extracted tree holds: no read of
// the tree may return it. It is drawn anew in each process, so the
// fuzzer cannot write it into an archive.
var marker = func() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "OUTSIDE-" + hex.EncodeToString(b)
}()

// FuzzArchive feeds any bytes to the archive reader: it never panics,
// every name it hands on is a valid path within PATH_MAX, and it hands on
// no more bytes than the archive holds (a sparse entry's holes would be
// 2^62 of them).
func FuzzArchive(f *testing.F) {
	for _, s := range seeds() {
		f.Add(s)
	}
	logger := slog.New(slog.DiscardHandler)
	f.Fuzz(func(t *testing.T, data []byte) {
		limit := int64(len(data))
		if len(data) > 1 && data[0] == 0x1f && data[1] == 0x8b {
			limit = 1032 * int64(len(data)) // deflate's best ratio
		}
		var handed int64
		err := ReadArchive(bytes.NewReader(data), func(name string, size int64, body io.Reader) error {
			checkName(t, name)
			n, err := io.CopyN(io.Discard, body, limit-handed+1)
			if handed += n; handed > limit {
				t.Fatalf("%s: handed on more than the %d bytes the archive holds (declared %d)", name, limit, size)
			}
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return err
		}, logger)
		if err != nil && err.Error() == "" {
			t.Error("an error without a message")
		}
	})
}

// FuzzDirectory extracts any archive through an os.Root (which refuses to
// write outside it: directories, files, links anywhere) into a tree
// beside a file that holds marker, walks the tree and reads every file
// through a regularfile.Root: no name it hands on is invalid, and no read
// returns the file outside, whatever the links say.
func FuzzDirectory(f *testing.F) {
	for _, s := range seeds() {
		f.Add(s)
	}
	logger := slog.New(slog.DiscardHandler)
	f.Fuzz(func(t *testing.T, data []byte) {
		base := t.TempDir()
		if err := os.WriteFile(filepath.Join(base, "secret"), []byte(marker), 0o600); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(base, "tree")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		extract(data, dir)
		root, err := regularfile.OpenRoot(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer root.Close()
		err = Walk(context.Background(), root, ".", func(string) bool { return false }, func(name string) {
			checkName(t, name)
			b, err := fs.ReadFile(root, name)
			if err == nil && bytes.Contains(b, []byte(marker)) {
				t.Fatalf("%s: read the file outside the tree", name)
			}
		}, logger)
		if err != nil {
			t.Fatalf("walking the tree: %v", err)
		}
	})
}

func checkName(t *testing.T, name string) {
	t.Helper()
	if !fs.ValidPath(name) || len(name) > MaxPathBytes || !utf8.ValidString(name) || strings.HasPrefix(name, "/") {
		t.Fatalf("handed on the name %q", name[:min(len(name), 100)])
	}
}

// extract writes what it can of the archive data into dir, through an
// os.Root: directories, regular files (at most 64 KiB each), links.
func extract(data []byte, dir string) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return
	}
	defer r.Close()
	tr := tar.NewReader(bytes.NewReader(data))
	for range 100 {
		h, err := tr.Next()
		if err != nil {
			return
		}
		name := strings.TrimSuffix(h.Name, "/")
		if name == "" || name == "." {
			continue
		}
		_ = r.MkdirAll(filepath.Dir(name), 0o755)
		switch h.Typeflag {
		case tar.TypeDir:
			_ = r.Mkdir(name, 0o755)
		case tar.TypeReg:
			b, _ := io.ReadAll(io.LimitReader(tr, 64<<10))
			_ = r.WriteFile(name, b, 0o644)
		case tar.TypeSymlink:
			_ = r.Symlink(h.Linkname, name)
		case tar.TypeLink:
			_ = r.Link(h.Linkname, name)
		}
	}
}
