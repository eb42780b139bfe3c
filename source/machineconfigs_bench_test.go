package source_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ocl-exporter/ocl_exporter/source"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
)

// BenchmarkOpenSnapshotMachineConfigs reads 64 rendered MachineConfigs of
// about 700 KB (45 MB, what real clusters keep) in the forms a snapshot
// holds them: one file each, as oc adm inspect writes them, and one
// List, as `oc get -o yaml` and `-o json` print it. It reports the
// heap's peak above what it held before (sampled every 100 µs) per
// open; docs/performance.md has the figures, and cmd/ocl_exporter's
// BenchmarkDiagnoseMachineConfigs the whole process's.
func BenchmarkOpenSnapshotMachineConfigs(b *testing.B) {
	const n, size = 64, 700 << 10
	dir := b.TempDir()
	if err := sourcetest.WriteMachineConfigFiles(filepath.Join(dir, "files", "cluster-scoped-resources", "machineconfiguration.openshift.io", "machineconfigs"), n, size); err != nil {
		b.Fatal(err)
	}
	for _, asJSON := range []bool{false, true} {
		name := map[bool]string{false: "list-yaml", true: "list-json"}[asJSON]
		f, err := os.Create(filepath.Join(dir, name+".yaml"))
		if err != nil {
			b.Fatal(err)
		}
		if err := sourcetest.WriteMachineConfigList(f, n, size, asJSON); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
	for _, form := range []string{"files", "list-yaml.yaml", "list-json.yaml"} {
		b.Run(form, func(b *testing.B) {
			var peak uint64
			for b.Loop() {
				runtime.GC()
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				stop := make(chan struct{})
				sampled := source.PeakHeap(stop)
				m, err := snapshot.OpenSnapshot(context.Background(), filepath.Join(dir, form), slog.New(slog.DiscardHandler))
				close(stop)
				if err != nil {
					b.Fatal(err)
				}
				if got := machineConfigs(b, m); got != n {
					b.Fatalf("%d MachineConfigs read, want %d", got, n)
				}
				peak = max(peak, <-sampled-before.HeapAlloc)
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
		})
	}
}

func machineConfigs(b testing.TB, m *snapshot.Memory) int {
	b.Helper()
	for _, r := range snapshot.Resources() {
		if r.Kind != "MachineConfig" {
			continue
		}
		l, err := m.List(context.Background(), r, "", metav1.ListOptions{})
		if err != nil {
			b.Fatal(err)
		}
		return meta.LenList(l)
	}
	return 0
}
