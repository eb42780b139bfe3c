package snapshot

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
	"strings"
	"testing"
	"time"

	"github.com/ocl-exporter/ocl_exporter/internal/race"

	"github.com/ocl-exporter/ocl_exporter/listing/listingtest"
)

// writeRawArchive writes the entries as a .tar.gz and returns its path.
func writeRawArchive(t *testing.T, entries ...listingtest.Entry) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(listingtest.Archive(entries...))
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
	for name, entries := range listingtest.Sparse(buildLog) {
		t.Run(name, func(t *testing.T) {
			p := writeRawArchive(t, append(entries, listingtest.Entry{Name: "must-gather.local.1/image/cluster-scoped-resources/machineconfiguration.openshift.io/machineosconfigs/infra.yaml", Typeflag: '0', Data: []byte(mosc)})...)
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
	if race.Enabled {
		t.Skip("measures one goroutine's memory: nothing for the race detector, several times slower under it")
	}
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
	mosc := listingtest.Entry{Name: "must-gather.local.1/image/cluster-scoped-resources/machineconfiguration.openshift.io/machineosconfigs/infra.yaml", Typeflag: '0', Data: []byte(mosc)}
	odd := []listingtest.Entry{
		{Name: "must-gather.local.1/image/namespaces/openshift-etcd/\xff\xfe.yaml", Typeflag: '0', Data: []byte("a: 1\n")},
		{Name: "must-gather.local.1/image/host_service_logs//kubelet.log", Typeflag: '0', Data: []byte("x\n")},
	}
	logs, err := openArchive(t, writeRawArchive(t, append(odd, mosc)...))
	if err != nil {
		t.Fatalf("the archive was refused: %v", err)
	}
	if strings.Count(logs, "skipped snapshot paths") != 1 || !strings.Contains(logs, "paths=2") {
		t.Errorf("want one warning counting the 2 odd names:\n%s", logs)
	}
	_, err = openArchive(t, writeRawArchive(t, mosc, listingtest.Entry{Name: "must-gather.local.1/../../x.yaml", Typeflag: '0', Data: []byte("a: 1\n")}))
	if err == nil || !strings.Contains(err.Error(), "a name outside the archive") {
		t.Errorf("a name that climbs out: %v", err)
	}
}
