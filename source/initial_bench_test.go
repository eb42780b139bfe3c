package source

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	rtmetrics "runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// benchMCN is a MachineConfigNode as a 4.21 cluster serves it: seven
// conditions with their messages and the managedFields of three writers.
func benchMCN(i int) []byte {
	m := mcnJSON(fmt.Sprintf("worker-%05d", i))
	var conds []any
	for _, c := range []string{"Updated", "UpdatePrepared", "UpdateExecuted", "UpdatePostActionComplete", "UpdateComplete", "Resumed", "NodeDegraded"} {
		conds = append(conds, map[string]any{"type": c, "status": "False", "reason": c, "lastTransitionTime": "2025-10-01T00:00:00Z",
			"message": "Action during update to rendered-worker-" + strings.Repeat("0123456789abcdef", 2) + ": " + c})
	}
	m["status"].(map[string]any)["conditions"] = conds
	var fields []any
	for _, w := range []string{"machine-config-controller", "machine-config-daemon", "machine-config-operator"} {
		fields = append(fields, map[string]any{"manager": w, "operation": "Update", "apiVersion": "machineconfiguration.openshift.io/v1",
			"time": "2025-10-01T00:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:status": map[string]any{"f:conditions": strings.Repeat("x", 600)}}})
	}
	m["metadata"].(map[string]any)["managedFields"] = fields
	b, _ := json.Marshal(m)
	return b
}

// benchServer serves n MachineConfigNodes, pre-encoded, the three ways an
// API server answers a first list: streamed (WatchList), in pages of the
// limit asked for, or whole (resourceVersion 0 from the watch cache, which
// ignores the limit: what the exporter read before it streamed or paged).
type benchServer struct {
	items [][]byte
	mode  string
}

func (b *benchServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	w.Header().Set("Content-Type", "application/json")
	if q.Get("sendInitialEvents") == "true" {
		if b.mode != "streamed" {
			w.WriteHeader(http.StatusUnprocessableEntity)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Invalid","code":422}`)
			return
		}
		for _, it := range b.items {
			fmt.Fprintf(w, `{"type":"ADDED","object":%s}`+"\n", it)
		}
		fmt.Fprintf(w, `{"type":"BOOKMARK","object":{"apiVersion":"machineconfiguration.openshift.io/v1","kind":"MachineConfigNode","metadata":{"resourceVersion":"9","annotations":{%q:"true"}}}}`+"\n", metav1.InitialEventsAnnotationKey)
		return
	}
	from, to := 0, len(b.items)
	if b.mode == "paged" {
		from, _ = strconv.Atoi(q.Get("continue")) // "" on the first page: 0
		to = min(from+pageSize, len(b.items))
	}
	next := ""
	if to < len(b.items) {
		next = strconv.Itoa(to)
	}
	fmt.Fprintf(w, `{"apiVersion":"machineconfiguration.openshift.io/v1","kind":"MachineConfigNodeList","metadata":{"resourceVersion":"9","continue":%q},"items":[%s]}`,
		next, bytes.Join(b.items[from:to], []byte(",")))
}

// peakHeap samples the heap's objects until stop and returns the most seen.
func peakHeap(stop <-chan struct{}) <-chan uint64 {
	out := make(chan uint64, 1)
	go func() {
		s := []rtmetrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var peak uint64
		t := time.NewTicker(100 * time.Microsecond)
		defer t.Stop()
		for {
			rtmetrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-stop:
				out <- peak
				return
			case <-t.C:
			}
		}
	}()
	return out
}

// BenchmarkFirstList reads the first list of 10,000 MachineConfigNodes
// (the largest list at 10,000 nodes) streamed, paged and whole, and
// reports the heap's peak above what it held before the list (sampled
// every 100 µs), the heap the list leaves live, and their ratio.
func BenchmarkFirstList(b *testing.B) {
	const n = 10000
	items := make([][]byte, n)
	for i := range items {
		items[i] = benchMCN(i)
	}
	for _, mode := range []string{"streamed", "paged", "whole"} {
		b.Run(mode, func(b *testing.B) {
			srv := &benchServer{items: items, mode: mode}
			var peak, live atomic.Uint64
			for b.Loop() {
				s := New(liveClients(b, srv), snapshot.DefaultNamespace, slog.New(slog.DiscardHandler), nil)
				i := slices.IndexFunc(s.watched, func(w *watched) bool { return w.Name == "machineconfignodes.machineconfiguration.openshift.io" })
				runtime.GC()
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				stop := make(chan struct{})
				sampled := peakHeap(stop)
				list, err := s.listWatch(s.watched[i]).(*cache.ListWatch).ListWithContext(context.Background(), metav1.ListOptions{ResourceVersion: "0"})
				close(stop)
				if err != nil {
					b.Fatal(err)
				}
				p := <-sampled
				runtime.GC()
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				runtime.KeepAlive(list)
				peak.Store(max(peak.Load(), p-before.HeapAlloc))
				live.Store(after.HeapAlloc - before.HeapAlloc)
			}
			b.ReportMetric(float64(peak.Load())/(1<<20), "peak-MiB")
			b.ReportMetric(float64(live.Load())/(1<<20), "live-MiB")
			b.ReportMetric(float64(peak.Load())/float64(live.Load()), "peak/live")
		})
	}
}
