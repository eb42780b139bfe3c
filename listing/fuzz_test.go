package listing

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ocl-exporter/ocl_exporter/regularfile"
)

// rawEntry is a tar entry written byte by byte: archive/tar's writer
// refuses the headers an attacker writes (sparse maps, bad names).
type rawEntry struct {
	name     string
	typeflag byte
	linkname string
	data     []byte
}

// rawArchive writes entries as a USTAR stream.
func rawArchive(entries ...rawEntry) []byte {
	var b bytes.Buffer
	for _, e := range entries {
		h := make([]byte, 512)
		copy(h[0:100], e.name)
		copy(h[100:108], "0000644\x00")
		copy(h[108:116], "0000000\x00")
		copy(h[116:124], "0000000\x00")
		copy(h[124:136], fmt.Sprintf("%011o\x00", len(e.data)))
		copy(h[136:148], "00000000000\x00")
		h[156] = e.typeflag
		copy(h[157:257], e.linkname)
		copy(h[257:265], "ustar\x0000")
		copy(h[148:156], "        ")
		sum := 0
		for _, c := range h {
			sum += int(c)
		}
		copy(h[148:156], fmt.Sprintf("%06o\x00 ", sum))
		b.Write(h)
		b.Write(e.data)
		b.Write(make([]byte, (512-len(e.data)%512)%512))
	}
	b.Write(make([]byte, 1024))
	return b.Bytes()
}

// pax encodes PAX records ("<len> <key>=<value>\n").
func pax(kv ...string) []byte {
	var b bytes.Buffer
	for i := 0; i < len(kv); i += 2 {
		rec := " " + kv[i] + "=" + kv[i+1] + "\n"
		n := len(rec) + len(strconv.Itoa(len(rec)))
		n = len(rec) + len(strconv.Itoa(n)) // the length counts its own digits
		fmt.Fprintf(&b, "%d%s", n, rec)
	}
	return b.Bytes()
}

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
	const huge = "4611686018427387904"
	sparseMap := []byte("1\n0\n1\n")
	mosc := "apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineOSConfig\nmetadata: {name: infra}\n"
	long := "must-gather.local.1/" + strings.Repeat("long/", 40) + "x.yaml"
	return [][]byte{
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
		rawArchive(
			rawEntry{name: "PaxHeaders/x", typeflag: 'x', data: pax("GNU.sparse.major", "1", "GNU.sparse.minor", "0", "GNU.sparse.name", buildLog, "GNU.sparse.realsize", huge)},
			rawEntry{name: "x", typeflag: '0', data: append(append(sparseMap, make([]byte, 512-len(sparseMap))...), 'E')},
		),
		rawArchive(
			rawEntry{name: "PaxHeaders/x", typeflag: 'x', data: pax("GNU.sparse.major", "0", "GNU.sparse.minor", "1", "GNU.sparse.name", buildLog, "GNU.sparse.size", huge, "GNU.sparse.numblocks", "1", "GNU.sparse.map", "0,1")},
			rawEntry{name: "x", typeflag: '0', data: []byte("E")},
		),
		rawArchive(rawEntry{name: "sparse.log", typeflag: 'S', data: []byte("E")}),
		rawArchive(
			rawEntry{name: "mg/\xff\xfe.yaml", typeflag: '0', data: []byte("a: 1\n")},
			rawEntry{name: "mg//double.yaml", typeflag: '0', data: []byte("a: 1\n")},
			rawEntry{name: "mg/link", typeflag: '2', linkname: "../../secret"},
			rawEntry{name: "mg/link/through.yaml", typeflag: '0', data: []byte("a: 1\n")},
		),
		rawArchive(rawEntry{name: "../../etc/cron.d/x.yaml", typeflag: '0', data: []byte("* * * * * root id\n")}),
		rawArchive(rawEntry{name: "/etc/x.yaml", typeflag: '0', data: []byte("x")}),
		[]byte("PK\x03\x04 a zip file"),
	}
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
