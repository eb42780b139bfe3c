// Package scale measures the exporter and kube-state-metrics side by side on
// a real kube-apiserver holding a synthetic cluster (test/synth) of each
// size: `make bench-scale` runs it (build tag scale) and writes
// testdata/results.json, which docs/performance.md and its plot show.
package scale

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
)

// Exporters measured, in the order tables and plots list them.
const (
	Ours = "ocl_exporter"
	KSM  = "kube-state-metrics"
)

// Result is one exporter measured at one size.
type Result struct {
	Exporter string `json:"exporter"`
	Nodes    int    `json:"nodes"`
	// Objects is how many objects the API server held for the run.
	Objects int `json:"objects"`
	// ReadySeconds is from the process's start to /readyz answering 200
	// (ours) or the first complete scrape (kube-state-metrics, which has
	// no readiness tied to its caches).
	ReadySeconds float64 `json:"ready_seconds"`
	// RSSMiB is VmRSS after sync and a settle, AnonMiB its anonymous part
	// (Go heap, stacks; the rest is the binary's pages); PeakRSSMiB is
	// VmHWM at the end of the scrapes.
	RSSMiB     float64 `json:"rss_mib"`
	AnonMiB    float64 `json:"anon_rss_mib"`
	PeakRSSMiB float64 `json:"peak_rss_mib"`
	// Scrape latency as Prometheus sees it (gzip, whole body read), and
	// the process's CPU time per scrape.
	ScrapeP50Ms    float64 `json:"scrape_p50_ms"`
	ScrapeP99Ms    float64 `json:"scrape_p99_ms"`
	CPUPerScrapeMs float64 `json:"cpu_per_scrape_ms"`
	GzipBytes      int     `json:"gzip_bytes"`
	TextBytes      int     `json:"text_bytes"`
	Series         int     `json:"series"`
	// API requests the exporter made from its start to ready, and during
	// the scrapes (from the API server's audit log, by user agent).
	StartupRequests int `json:"startup_requests"`
	ScrapeRequests  int `json:"scrape_requests"`
	// BinaryBytes is the size of the stripped binary measured (ours only:
	// kube-state-metrics is built unstripped here).
	BinaryBytes int64 `json:"binary_bytes,omitempty"`
}

// ReadResults reads a results file.
func ReadResults(path string) ([]Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rs []Result
	return rs, json.Unmarshal(b, &rs)
}

// WriteResults writes a results file.
func WriteResults(path string, rs []Result) error {
	b, err := json.MarshalIndent(rs, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// find is the result of exporter at nodes, or nil.
func find(rs []Result, exporter string, nodes int) *Result {
	i := slices.IndexFunc(rs, func(r Result) bool { return r.Exporter == exporter && r.Nodes == nodes })
	if i < 0 {
		return nil
	}
	return &rs[i]
}

// sizes are the node counts in rs, ascending.
func sizes(rs []Result) []int {
	var out []int
	for _, r := range rs {
		if !slices.Contains(out, r.Nodes) {
			out = append(out, r.Nodes)
		}
	}
	slices.Sort(out)
	return out
}

// Table is rs as the Markdown table docs/performance.md shows: both
// exporters per size, then the ratios kube-state-metrics / ours.
func Table(rs []Result) string {
	var b strings.Builder
	b.WriteString("| Nodes | Exporter | Ready (s) | RSS (MiB) | Anon RSS (MiB) | Peak RSS (MiB) | Scrape p50 (ms) | Scrape p99 (ms) | CPU/scrape (ms) | gzip (KiB) | Text (KiB) | Series | Startup requests | Requests during scrapes |\n")
	b.WriteString("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, n := range sizes(rs) {
		for _, e := range []string{Ours, KSM} {
			if r := find(rs, e, n); r != nil {
				fmt.Fprintf(&b, "| %d | %s | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f | %.2f | %.0f | %.0f | %d | %d | %d |\n",
					n, e, r.ReadySeconds, r.RSSMiB, r.AnonMiB, r.PeakRSSMiB, r.ScrapeP50Ms, r.ScrapeP99Ms, r.CPUPerScrapeMs,
					float64(r.GzipBytes)/1024, float64(r.TextBytes)/1024, r.Series, r.StartupRequests, r.ScrapeRequests)
			}
		}
	}
	b.WriteString("\n| Nodes | RSS ratio | Anon RSS ratio | Scrape p99 ratio | CPU/scrape ratio | gzip size ratio |\n")
	b.WriteString("| ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, n := range sizes(rs) {
		o, k := find(rs, Ours, n), find(rs, KSM, n)
		if o == nil || k == nil {
			continue
		}
		fmt.Fprintf(&b, "| %d | %.1f× | %.1f× | %.1f× | %.1f× | %.1f× |\n", n,
			k.RSSMiB/o.RSSMiB, k.AnonMiB/o.AnonMiB, k.ScrapeP99Ms/o.ScrapeP99Ms, k.CPUPerScrapeMs/o.CPUPerScrapeMs, float64(k.GzipBytes)/float64(o.GzipBytes))
	}
	growth(&b, rs)
	if o := find(rs, Ours, sizes(rs)[0]); o != nil && o.BinaryBytes > 0 {
		fmt.Fprintf(&b, "\nStripped %s binary: %.1f MB.\n", Ours, float64(o.BinaryBytes)/1e6)
	}
	return b.String()
}

// growth is what each exporter costs per node added, from each size to the
// next: flat columns mean memory and time grow linearly with the cluster.
func growth(b *strings.Builder, rs []Result) {
	ns := sizes(rs)
	if len(ns) < 2 {
		return
	}
	b.WriteString("\n| Nodes | Exporter | RSS (KiB/node) | Anon RSS (KiB/node) | Peak RSS (KiB/node) | Scrape p99 (µs/node) | CPU/scrape (µs/node) | gzip (B/node) | Series/node |\n")
	b.WriteString("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, e := range []string{Ours, KSM} {
		for i := 1; i < len(ns); i++ {
			from, to := find(rs, e, ns[i-1]), find(rs, e, ns[i])
			if from == nil || to == nil {
				continue
			}
			d := float64(to.Nodes - from.Nodes)
			fmt.Fprintf(b, "| %d → %d | %s | %.1f | %.1f | %.1f | %.2f | %.2f | %.0f | %.1f |\n", from.Nodes, to.Nodes, e,
				(to.RSSMiB-from.RSSMiB)*1024/d, (to.AnonMiB-from.AnonMiB)*1024/d, (to.PeakRSSMiB-from.PeakRSSMiB)*1024/d,
				(to.ScrapeP99Ms-from.ScrapeP99Ms)*1000/d, (to.CPUPerScrapeMs-from.CPUPerScrapeMs)*1000/d,
				float64(to.GzipBytes-from.GzipBytes)/d, float64(to.Series-from.Series)/d)
		}
	}
}
