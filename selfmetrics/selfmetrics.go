// Package selfmetrics writes the exporter's metrics about itself that
// change with every scrape: the Go runtime's (go_*), the process's
// (process_*) and the scrapes' own (promhttp_metric_handler_*), under the
// names, help and types client_golang's Go and process collectors and
// promhttp's handler give them. They are appended as exposition text
// without a registry and without allocating: a registry's Gather of the
// same 40 series cost a scrape about eight times what writing its bytes
// does, most of it in /proc reads and garbage (docs/performance.md).
package selfmetrics

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Writer appends the runtime's and the process's metrics. Its buffers are
// reused: one scrape writes at a time.
type Writer struct {
	mu      sync.Mutex
	samples []metrics.Sample
	values  [len(runtimeMetrics)]uint64
	gc      debug.GCStats
	proc    process
}

// NewWriter prepares the buffers of a Writer.
func NewWriter() *Writer {
	w := &Writer{samples: make([]metrics.Sample, len(runtimeMetrics))}
	for i, name := range runtimeMetrics {
		w.samples[i].Name = name
	}
	// ReadGCStats reuses Pause when it holds two copies of the runtime's
	// pause history and three quantile slots, as it asks.
	w.gc.Pause = make([]time.Duration, 0, 2*len(runtime.MemStats{}.PauseNs)+3)
	w.gc.PauseQuantiles = make([]time.Duration, 5)
	return w
}

// Append appends the metrics to b, families sorted by name.
func (w *Writer) Append(b []byte) []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	b = w.appendGo(b)
	return w.proc.append(b)
}

// runtimeMetrics are the runtime/metrics client_golang's Go collector reads
// by default: its go_memstats_* are sums of them (memStatsFromRM), and
// three are exported as they are.
var runtimeMetrics = [...]string{
	"/gc/heap/tiny/allocs:objects", "/gc/heap/allocs:objects", "/gc/heap/frees:objects", "/gc/heap/allocs:bytes",
	"/gc/heap/objects:objects", "/gc/heap/goal:bytes", "/memory/classes/total:bytes", "/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes", "/memory/classes/heap/released:bytes", "/memory/classes/heap/free:bytes",
	"/memory/classes/heap/stacks:bytes", "/memory/classes/os-stacks:bytes", "/memory/classes/metadata/mspan/inuse:bytes",
	"/memory/classes/metadata/mspan/free:bytes", "/memory/classes/metadata/mcache/inuse:bytes",
	"/memory/classes/metadata/mcache/free:bytes", "/memory/classes/profiling/buckets:bytes",
	"/memory/classes/metadata/other:bytes", "/memory/classes/other:bytes",
	"/gc/gogc:percent", "/gc/gomemlimit:bytes", "/sched/gomaxprocs:threads",
}

// sample indexes, in runtimeMetrics' order.
const (
	tinyAllocs = iota
	allocsObjects
	freesObjects
	allocsBytes
	heapObjects
	heapGoal
	totalBytes
	heapObjectsBytes
	heapUnused
	heapReleased
	heapFree
	heapStacks
	osStacks
	mspanInuse
	mspanFree
	mcacheInuse
	mcacheFree
	profBuckets
	metadataOther
	otherBytes
	gogc
	memLimit
	gomaxprocs
)

// memstat is a go_memstats_* family: name, help, type and value from the
// samples.
type memstat struct {
	name, help, typ string
	value           func(s []uint64) uint64
}

// memstats are client_golang's memstats-like metrics (goRuntimeMemStats,
// memStatsFromRM), by name.
var memstats = []memstat{
	{"go_memstats_alloc_bytes", "Number of bytes allocated in heap and currently in use. Equals to /memory/classes/heap/objects:bytes.", "gauge",
		func(s []uint64) uint64 { return s[heapObjectsBytes] }},
	{"go_memstats_alloc_bytes_total", "Total number of bytes allocated in heap until now, even if released already. Equals to /gc/heap/allocs:bytes.", "counter",
		func(s []uint64) uint64 { return s[allocsBytes] }},
	{"go_memstats_buck_hash_sys_bytes", "Number of bytes used by the profiling bucket hash table. Equals to /memory/classes/profiling/buckets:bytes.", "gauge",
		func(s []uint64) uint64 { return s[profBuckets] }},
	{"go_memstats_frees_total", "Total number of heap objects frees. Equals to /gc/heap/frees:objects + /gc/heap/tiny/allocs:objects.", "counter",
		func(s []uint64) uint64 { return s[freesObjects] + s[tinyAllocs] }},
	{"go_memstats_gc_sys_bytes", "Number of bytes used for garbage collection system metadata. Equals to /memory/classes/metadata/other:bytes.", "gauge",
		func(s []uint64) uint64 { return s[metadataOther] }},
	{"go_memstats_heap_alloc_bytes", "Number of heap bytes allocated and currently in use, same as go_memstats_alloc_bytes. Equals to /memory/classes/heap/objects:bytes.", "gauge",
		func(s []uint64) uint64 { return s[heapObjectsBytes] }},
	{"go_memstats_heap_idle_bytes", "Number of heap bytes waiting to be used. Equals to /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", "gauge",
		func(s []uint64) uint64 { return s[heapReleased] + s[heapFree] }},
	{"go_memstats_heap_inuse_bytes", "Number of heap bytes that are in use. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes", "gauge",
		func(s []uint64) uint64 { return s[heapObjectsBytes] + s[heapUnused] }},
	{"go_memstats_heap_objects", "Number of currently allocated objects. Equals to /gc/heap/objects:objects.", "gauge",
		func(s []uint64) uint64 { return s[heapObjects] }},
	{"go_memstats_heap_released_bytes", "Number of heap bytes released to OS. Equals to /memory/classes/heap/released:bytes.", "gauge",
		func(s []uint64) uint64 { return s[heapReleased] }},
	{"go_memstats_heap_sys_bytes", "Number of heap bytes obtained from system. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes + /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", "gauge",
		func(s []uint64) uint64 { return s[heapObjectsBytes] + s[heapUnused] + s[heapReleased] + s[heapFree] }},
	{"go_memstats_mallocs_total", "Total number of heap objects allocated, both live and gc-ed. Semantically a counter version for go_memstats_heap_objects gauge. Equals to /gc/heap/allocs:objects + /gc/heap/tiny/allocs:objects.", "counter",
		func(s []uint64) uint64 { return s[allocsObjects] + s[tinyAllocs] }},
	{"go_memstats_mcache_inuse_bytes", "Number of bytes in use by mcache structures. Equals to /memory/classes/metadata/mcache/inuse:bytes.", "gauge",
		func(s []uint64) uint64 { return s[mcacheInuse] }},
	{"go_memstats_mcache_sys_bytes", "Number of bytes used for mcache structures obtained from system. Equals to /memory/classes/metadata/mcache/inuse:bytes + /memory/classes/metadata/mcache/free:bytes.", "gauge",
		func(s []uint64) uint64 { return s[mcacheInuse] + s[mcacheFree] }},
	{"go_memstats_mspan_inuse_bytes", "Number of bytes in use by mspan structures. Equals to /memory/classes/metadata/mspan/inuse:bytes.", "gauge",
		func(s []uint64) uint64 { return s[mspanInuse] }},
	{"go_memstats_mspan_sys_bytes", "Number of bytes used for mspan structures obtained from system. Equals to /memory/classes/metadata/mspan/inuse:bytes + /memory/classes/metadata/mspan/free:bytes.", "gauge",
		func(s []uint64) uint64 { return s[mspanInuse] + s[mspanFree] }},
	{"go_memstats_next_gc_bytes", "Number of heap bytes when next garbage collection will take place. Equals to /gc/heap/goal:bytes.", "gauge",
		func(s []uint64) uint64 { return s[heapGoal] }},
	{"go_memstats_other_sys_bytes", "Number of bytes used for other system allocations. Equals to /memory/classes/other:bytes.", "gauge",
		func(s []uint64) uint64 { return s[otherBytes] }},
	{"go_memstats_stack_inuse_bytes", "Number of bytes obtained from system for stack allocator in non-CGO environments. Equals to /memory/classes/heap/stacks:bytes.", "gauge",
		func(s []uint64) uint64 { return s[heapStacks] }},
	{"go_memstats_stack_sys_bytes", "Number of bytes obtained from system for stack allocator. Equals to /memory/classes/heap/stacks:bytes + /memory/classes/os-stacks:bytes.", "gauge",
		func(s []uint64) uint64 { return s[heapStacks] + s[osStacks] }},
	{"go_memstats_sys_bytes", "Number of bytes obtained from system. Equals to /memory/classes/total:byte.", "gauge",
		func(s []uint64) uint64 { return s[totalBytes] }},
}

// goInfo is go_info's series.
var goInfo = `go_info{version="` + runtime.Version() + `"}`

// appendGo writes what client_golang's default Go collector does.
func (w *Writer) appendGo(b []byte) []byte {
	metrics.Read(w.samples)
	values := w.values[:]
	for i, s := range w.samples {
		values[i] = 0 // a metric this Go does not have
		if s.Value.Kind() == metrics.KindUint64 {
			values[i] = s.Value.Uint64()
		}
	}
	debug.ReadGCStats(&w.gc)

	b = AppendHeader(b, "go_gc_duration_seconds", "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.", "summary")
	for i, q := range [...]string{"0", "0.25", "0.5", "0.75", "1"} {
		b = append(b, `go_gc_duration_seconds{quantile="`...)
		b = append(b, q...)
		b = AppendValue(append(b, `"} `...), w.gc.PauseQuantiles[i].Seconds())
	}
	b = AppendSample(b, "go_gc_duration_seconds_sum", w.gc.PauseTotal.Seconds())
	b = AppendSample(b, "go_gc_duration_seconds_count", float64(w.gc.NumGC))
	b = AppendFamily(b, "go_gc_gogc_percent", "Heap size target percentage configured by the user, otherwise 100. This value is set by the GOGC environment variable, and the runtime/debug.SetGCPercent function. Sourced from /gc/gogc:percent.", "gauge", float64(values[gogc]))
	b = AppendFamily(b, "go_gc_gomemlimit_bytes", "Go runtime memory limit configured by the user, otherwise math.MaxInt64. This value is set by the GOMEMLIMIT environment variable, and the runtime/debug.SetMemoryLimit function. Sourced from /gc/gomemlimit:bytes.", "gauge", float64(values[memLimit]))
	b = AppendFamily(b, "go_goroutines", "Number of goroutines that currently exist.", "gauge", float64(runtime.NumGoroutine()))
	b = AppendHeader(b, "go_info", "Information about the Go environment.", "gauge")
	b = AppendSample(b, goInfo, 1)
	for _, m := range memstats {
		b = AppendFamily(b, m.name, m.help, m.typ, float64(m.value(values)))
	}
	b = AppendFamily(b, "go_memstats_last_gc_time_seconds", "Number of seconds since 1970 of last garbage collection.", "gauge", float64(w.gc.LastGC.UnixNano())/1e9)
	b = AppendFamily(b, "go_sched_gomaxprocs_threads", "The current runtime.GOMAXPROCS setting, or the number of operating system threads that can execute user-level Go code simultaneously. Sourced from /sched/gomaxprocs:threads.", "gauge", float64(values[gomaxprocs]))
	threads, _ := runtime.ThreadCreateProfile(nil)
	return AppendFamily(b, "go_threads", "Number of OS threads created.", "gauge", float64(threads))
}

// Scrapes counts the scrapes of the metrics, as promhttp's
// InstrumentMetricHandler does: those in flight, and those served by
// status code (200, 500 and 503 are always present). A scrape is counted
// once it is served, so it is not in its own count.
type Scrapes struct {
	inFlight atomic.Int64
	served   [len(scrapeCodes)]atomic.Uint64
}

var scrapeCodes = [...]int{200, 500, 503}

// Begin counts a scrape in flight.
func (s *Scrapes) Begin() { s.inFlight.Add(1) }

// End counts a scrape served with code (one of 200, 500, 503) that is no
// longer in flight.
func (s *Scrapes) End(code int) {
	s.inFlight.Add(-1)
	for i, c := range scrapeCodes {
		if c == code {
			s.served[i].Add(1)
		}
	}
}

// Append appends the scrape counts to b.
func (s *Scrapes) Append(b []byte) []byte {
	b = AppendFamily(b, "promhttp_metric_handler_requests_in_flight", "Current number of scrapes being served.", "gauge", float64(s.inFlight.Load()))
	b = AppendHeader(b, "promhttp_metric_handler_requests_total", "Total number of scrapes by HTTP status code.", "counter")
	for i, c := range scrapeCodes {
		b = append(b, `promhttp_metric_handler_requests_total{code="`...)
		b = strconv.AppendInt(b, int64(c), 10)
		b = AppendValue(append(b, `"} `...), float64(s.served[i].Load()))
	}
	return b
}

// AppendHeader appends a family's HELP and TYPE lines. help must need no
// escaping (no backslash, no newline).
func AppendHeader(b []byte, name, help, typ string) []byte {
	b = append(b, "# HELP "...)
	b = append(b, name...)
	b = append(append(b, ' '), help...)
	b = append(b, "\n# TYPE "...)
	b = append(b, name...)
	b = append(append(b, ' '), typ...)
	return append(b, '\n')
}

// AppendFamily appends a family of one series without labels.
func AppendFamily(b []byte, name, help, typ string, v float64) []byte {
	return AppendSample(AppendHeader(b, name, help, typ), name, v)
}

// AppendSample appends a sample line: series is the name and any labels.
func AppendSample(b []byte, series string, v float64) []byte {
	return AppendValue(append(append(b, series...), ' '), v)
}

// AppendValue appends v and a newline as the text format writes values
// (expfmt's writeFloat).
func AppendValue(b []byte, v float64) []byte {
	switch {
	case v == 1:
		b = append(b, '1')
	case v == 0:
		b = append(b, '0')
	case v == -1:
		b = append(b, "-1"...)
	case math.IsNaN(v):
		b = append(b, "NaN"...)
	case math.IsInf(v, +1):
		b = append(b, "+Inf"...)
	case math.IsInf(v, -1):
		b = append(b, "-Inf"...)
	default:
		b = strconv.AppendFloat(b, v, 'g', -1, 64)
	}
	return append(b, '\n')
}
