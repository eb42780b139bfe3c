//go:build scale

package scale

import (
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ocl-exporter/ocl_exporter/collector"
	"github.com/ocl-exporter/ocl_exporter/kubeapi"
	"github.com/ocl-exporter/ocl_exporter/source"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
)

// TestHeapProfile runs the exporter's source and renderer in this process
// against a real API server holding SCALE_HEAP_NODES nodes (2,000 by
// default) and writes a heap profile of what stays live to
// SCALE_HEAPPROFILE: the exporter binary serves no pprof.
func TestHeapProfile(t *testing.T) {
	out := os.Getenv("SCALE_HEAPPROFILE")
	if out == "" {
		t.Skip("$SCALE_HEAPPROFILE is not set")
	}
	nodes, err := strconv.Atoi(env("SCALE_HEAP_NODES", "2000"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c, k := startCluster(t, dir, os.Getenv("SCALE_ETCD"), os.Getenv("SCALE_KUBE_APISERVER"))
	objs, err := objects(nodes)
	if err != nil {
		t.Fatal(err)
	}
	if err := createAll(t.Context(), k, objs); err != nil {
		t.Fatal(err)
	}

	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	api, err := kubeapi.New(c.Admin, "ocl_exporter/heap")
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.DiscardHandler)
	clients, err := source.NewClients(api, logger)
	if err != nil {
		t.Fatal(err)
	}
	src := source.New(clients, snapshot.DefaultNamespace, logger, prometheus.NewRegistry())
	go src.Run(t.Context())
	if err := src.WaitReady(t.Context()); err != nil {
		t.Fatal("source not ready:", err)
	}
	r, err := collector.NewRenderer(collector.New(src, collector.DefaultOptions), src, logger)
	if err != nil {
		t.Fatal(err)
	}
	go r.Run(t.Context(), time.Second)
	time.Sleep(3 * time.Second)

	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	t.Logf("%d nodes: live heap %.1f MiB (%.1f MiB before the source started), heap in use %.1f MiB, Go runtime total %.1f MiB",
		nodes, mib(after.HeapAlloc), mib(before.HeapAlloc), mib(after.HeapInuse), mib(after.Sys))
	f, err := os.Create(filepath.Clean(out))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		t.Fatal(err)
	}
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }
