package source

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rawEntry is a tar entry written byte by byte: archive/tar's writer
// refuses the sparse headers an attacker writes.
type rawEntry struct {
	name     string
	typeflag byte
	data     []byte
}

// ustarBlock is a USTAR header block.
func ustarBlock(e rawEntry) []byte {
	b := make([]byte, 512)
	copy(b[0:100], e.name)
	copy(b[100:108], "0000644\x00")
	copy(b[108:116], "0000000\x00")
	copy(b[116:124], "0000000\x00")
	copy(b[124:136], fmt.Sprintf("%011o\x00", len(e.data)))
	copy(b[136:148], "00000000000\x00")
	b[156] = e.typeflag
	copy(b[257:265], "ustar\x0000")
	copy(b[148:156], "        ")
	sum := 0
	for _, c := range b {
		sum += int(c)
	}
	copy(b[148:156], fmt.Sprintf("%06o\x00 ", sum))
	return b
}

// paxRecords encodes PAX records ("<len> <key>=<value>\n").
func paxRecords(kv ...string) []byte {
	var b bytes.Buffer
	for i := 0; i < len(kv); i += 2 {
		rec := " " + kv[i] + "=" + kv[i+1] + "\n"
		n := len(rec) + len(strconv.Itoa(len(rec)))
		n = len(rec) + len(strconv.Itoa(n)) // the length counts its own digits
		fmt.Fprintf(&b, "%d%s", n, rec)
	}
	return b.Bytes()
}

// writeRawArchive writes the entries as a .tar.gz and returns its path.
func writeRawArchive(t *testing.T, entries ...rawEntry) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	for _, e := range entries {
		_, _ = zw.Write(ustarBlock(e))
		_, _ = zw.Write(e.data)
		_, _ = zw.Write(make([]byte, (512-len(e.data)%512)%512))
	}
	_, _ = zw.Write(make([]byte, 1024))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "must-gather.tar.gz")
	if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const buildLog = "must-gather.local.1/image/namespaces/openshift-machine-config-operator/pods/build-x/image-build/image-build/logs/current.log"

// openArchive opens the archive at p as --snapshot does, with a deadline:
// the archives below used to make the load spin for ever, and a load
// that still did would fail the test when the deadline ends it.
func openArchive(t *testing.T, p string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var logs bytes.Buffer
	_, err := OpenSnapshot(ctx, p, slog.New(slog.NewTextHandler(&logs, nil)))
	return logs.String(), err
}

// TestArchiveSparseEntries: a GNU sparse entry declares bytes the archive
// does not hold (2^62 of them from 300 bytes); at a build log's path the
// tail of it was read for ever. Sparse entries are skipped as links are,
// and the work is that of the bytes the archive holds.
func TestArchiveSparseEntries(t *testing.T) {
	const huge = "4611686018427387904"
	sparseMap := []byte("1\n0\n1\n")
	for name, entries := range map[string][]rawEntry{
		"PAX 1.0": {
			{name: "PaxHeaders/x", typeflag: 'x', data: paxRecords("GNU.sparse.major", "1", "GNU.sparse.minor", "0", "GNU.sparse.name", buildLog, "GNU.sparse.realsize", huge)},
			{name: "x", typeflag: '0', data: append(append(sparseMap, make([]byte, 512-len(sparseMap))...), 'E')},
		},
		"PAX 0.1": {
			{name: "PaxHeaders/x", typeflag: 'x', data: paxRecords("GNU.sparse.major", "0", "GNU.sparse.minor", "1", "GNU.sparse.name", buildLog, "GNU.sparse.size", huge, "GNU.sparse.numblocks", "1", "GNU.sparse.map", "0,1")},
			{name: "x", typeflag: '0', data: []byte("E")},
		},
	} {
		t.Run(name, func(t *testing.T) {
			p := writeRawArchive(t, append(entries, rawEntry{name: "must-gather.local.1/image/cluster-scoped-resources/machineconfiguration.openshift.io/machineosconfigs/infra.yaml", typeflag: '0', data: []byte(mosc)})...)
			if info, err := os.Stat(p); err != nil || info.Size() > 1024 {
				t.Fatalf("the archive takes %v bytes, want a few hundred: %v", info.Size(), err)
			}
			logs, err := openArchive(t, p)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(logs, "sparse files") || !strings.Contains(logs, "entries=1") {
				t.Errorf("want a warning counting the sparse entry:\n%s", logs)
			}
		})
	}
}

// liveHeapAtLogs is a log handler that measures, at each record, the heap
// the process keeps (after a collection): what a load holds while it
// writes its warnings, the first of them once the last entry is read.
type liveHeapAtLogs struct {
	most    *uint64
	records *int
}

func (h liveHeapAtLogs) Enabled(context.Context, slog.Level) bool { return true }
func (h liveHeapAtLogs) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h liveHeapAtLogs) WithGroup(string) slog.Handler            { return h }
func (h liveHeapAtLogs) Handle(context.Context, slog.Record) error {
	*h.records++
	*h.most = max(*h.most, liveHeap())
	return nil
}

func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestArchiveSkippedEntriesCostNoMemory: what an archive holds that the
// exporter does not read is counted, never kept: 200 entries with names
// of a megabyte (in PAX headers), or 300,000 tiny ones, leave the heap as
// it was while the load logs at the end of the archive.
func TestArchiveSkippedEntriesCostNoMemory(t *testing.T) {
	const bound = 16 << 20
	for name, headers := range map[string]func(yield func(*tar.Header) bool){
		"200 names of 1 MB": func(yield func(*tar.Header) bool) {
			for i := range 200 {
				if !yield(&tar.Header{Name: fmt.Sprintf("must-gather.local.1/image/namespaces/openshift-etcd/%03d%s.yaml", i, strings.Repeat("n", 1_000_000)), Typeflag: tar.TypeReg, Format: tar.FormatPAX}) {
					return
				}
			}
		},
		"300,000 entries": func(yield func(*tar.Header) bool) {
			for i := range 300_000 {
				if !yield(&tar.Header{Name: fmt.Sprintf("must-gather.local.1/image/namespaces/openshift-etcd/pods/etcd/etcd/etcd/logs/%06d.log", i), Typeflag: tar.TypeReg}) {
					return
				}
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "must-gather.tar.gz")
			writeArchive(t, p, headers)
			var most uint64
			records := 0
			before := liveHeap()
			_, err := OpenSnapshot(t.Context(), p, slog.New(liveHeapAtLogs{&most, &records}))
			if err != nil {
				t.Fatal(err)
			}
			if records == 0 {
				t.Fatal("the load logged nothing to measure at")
			}
			kept := int64(most) - int64(before)
			t.Logf("kept %.1f MiB while logging", float64(kept)/(1<<20))
			if kept > bound {
				t.Errorf("the load kept %d MiB while logging, over %d MiB: it grows with the entries it skips", kept>>20, bound>>20)
			}
		})
	}
}

// writeArchive writes a .tar.gz of a MachineOSConfig, a link (whose
// warning is logged after the last entry is read) and the headers, each
// an empty file.
func writeArchive(t *testing.T, p string, headers func(yield func(*tar.Header) bool)) {
	t.Helper()
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
	w := tar.NewWriter(zw)
	write := func(h *tar.Header, body string) {
		h.Size = int64(len(body))
		if err := w.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	write(&tar.Header{Name: "must-gather.local.1/image/cluster-scoped-resources/machineconfiguration.openshift.io/machineosconfigs/infra.yaml", Typeflag: tar.TypeReg}, mosc)
	write(&tar.Header{Name: "must-gather.local.1/image/link.yaml", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}, "")
	for h := range headers {
		write(h, "")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestArchiveOddNamesAreSkipped: an entry whose name is not UTF-8, in a
// part the exporter never reads, is skipped with one warning; it used to
// abort the diagnosis as "a name outside the archive". A name that climbs
// out still refuses the archive.
func TestArchiveOddNamesAreSkipped(t *testing.T) {
	mosc := rawEntry{name: "must-gather.local.1/image/cluster-scoped-resources/machineconfiguration.openshift.io/machineosconfigs/infra.yaml", typeflag: '0', data: []byte(mosc)}
	odd := []rawEntry{
		{name: "must-gather.local.1/image/namespaces/openshift-etcd/\xff\xfe.yaml", typeflag: '0', data: []byte("a: 1\n")},
		{name: "must-gather.local.1/image/host_service_logs//kubelet.log", typeflag: '0', data: []byte("x\n")},
	}
	logs, err := openArchive(t, writeRawArchive(t, append(odd, mosc)...))
	if err != nil {
		t.Fatalf("the archive was refused: %v", err)
	}
	if strings.Count(logs, "skipped snapshot paths") != 1 || !strings.Contains(logs, "paths=2") {
		t.Errorf("want one warning counting the 2 odd names:\n%s", logs)
	}
	_, err = openArchive(t, writeRawArchive(t, mosc, rawEntry{name: "must-gather.local.1/../../x.yaml", typeflag: '0', data: []byte("a: 1\n")}))
	if err == nil || !strings.Contains(err.Error(), "a name outside the archive") {
		t.Errorf("a name that climbs out: %v", err)
	}
}
