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

// Exporters measured, in the order tables and plots list them. Floor is
// a plain HTTP server writing the bytes of the exporter's scrape from
// memory, scraped in turn with it: what any exporter of those bytes costs
// at least.
const (
	Ours  = "ocl_exporter"
	KSM   = "kube-state-metrics"
	Floor = "floor"
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
	// LoadAverage is the machine's over the minute that ended with the
	// scrapes.
	LoadAverage float64 `json:"load_average,omitempty"`
}

// ReadResults reads a results file.
func ReadResults[R Result | ChurnResult](path string) ([]R, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rs []R
	return rs, json.Unmarshal(b, &rs)
}

// WriteResults writes a results file.
func WriteResults[R Result | ChurnResult](path string, rs []R) error {
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

// Table is rs as the Markdown tables docs/performance.md shows: the
// exporters (and the floor) per size, the ratios kube-state-metrics /
// ours, ours / the floor, and the cost per node added.
func Table(rs []Result) string {
	var b strings.Builder
	b.WriteString("| Nodes | Exporter | Ready (s) | RSS (MiB) | Anon RSS (MiB) | Peak RSS (MiB) | Scrape p50 (ms) | Scrape p99 (ms) | CPU/scrape (ms) | gzip (KiB) | Text (KiB) | Series | Startup requests | Requests during scrapes |\n")
	b.WriteString("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, n := range sizes(rs) {
		for _, e := range []string{Ours, Floor, KSM} {
			r := find(rs, e, n)
			switch {
			case r == nil:
			case e == Floor:
				fmt.Fprintf(&b, "| %d | %s | | | | | %.3f | %.3f | %.3f | %.0f | | | | |\n",
					n, e, r.ScrapeP50Ms, r.ScrapeP99Ms, r.CPUPerScrapeMs, float64(r.GzipBytes)/1024)
			default:
				fmt.Fprintf(&b, "| %d | %s | %.1f | %.1f | %.1f | %.1f | %.3f | %.3f | %.3f | %.0f | %.0f | %d | %d | %d |\n",
					n, e, r.ReadySeconds, r.RSSMiB, r.AnonMiB, r.PeakRSSMiB, r.ScrapeP50Ms, r.ScrapeP99Ms, r.CPUPerScrapeMs,
					float64(r.GzipBytes)/1024, float64(r.TextBytes)/1024, r.Series, r.StartupRequests, r.ScrapeRequests)
			}
		}
	}
	b.WriteString("\n| Nodes | RSS ratio | Anon RSS ratio | Scrape p50 ratio | Scrape p99 ratio | CPU/scrape ratio | gzip size ratio |\n")
	b.WriteString("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, n := range sizes(rs) {
		o, k := find(rs, Ours, n), find(rs, KSM, n)
		if o == nil || k == nil {
			continue
		}
		fmt.Fprintf(&b, "| %d | %.1f× | %.1f× | %.0f× | %.0f× | %.0f× | %.1f× |\n", n,
			k.RSSMiB/o.RSSMiB, k.AnonMiB/o.AnonMiB, k.ScrapeP50Ms/o.ScrapeP50Ms, k.ScrapeP99Ms/o.ScrapeP99Ms, k.CPUPerScrapeMs/o.CPUPerScrapeMs, float64(k.GzipBytes)/float64(o.GzipBytes))
	}
	againstFloor(&b, rs)
	growth(&b, rs)
	if o := find(rs, Ours, sizes(rs)[0]); o != nil && o.BinaryBytes > 0 {
		fmt.Fprintf(&b, "\nStripped %s binary: %.1f MB.\n", Ours, float64(o.BinaryBytes)/1e6)
	}
	return b.String()
}

// againstFloor is what the exporter's scrape costs over the floor's,
// scraped in turn in the same rounds, with the machine's load then.
func againstFloor(b *strings.Builder, rs []Result) {
	var rows []string
	for _, n := range sizes(rs) {
		o, f := find(rs, Ours, n), find(rs, Floor, n)
		if o == nil || f == nil {
			continue
		}
		rows = append(rows, fmt.Sprintf("| %d | %.1f× | %.1f× | %.1f× | %.1f |\n", n,
			o.ScrapeP50Ms/f.ScrapeP50Ms, o.ScrapeP99Ms/f.ScrapeP99Ms, o.CPUPerScrapeMs/f.CPUPerScrapeMs, o.LoadAverage))
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("\n| Nodes | Scrape p50, " + Ours + " / " + Floor + " | Scrape p99 | CPU/scrape | Load average |\n")
	b.WriteString("| ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range rows {
		b.WriteString(r)
	}
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

// ChurnResult is one exporter over an hour of a changing cluster
// (TestChurn).
type ChurnResult struct {
	Exporter string `json:"exporter"`
	Nodes    int    `json:"nodes"`
	// Speedup is how many times faster than real time the hour ran;
	// Changes the writes it made, RunSeconds its duration on the wall
	// clock, LagSeconds how far the writes fell behind their schedule at
	// most.
	Speedup    float64 `json:"speedup"`
	Changes    int     `json:"changes"`
	RunSeconds float64 `json:"run_seconds"`
	LagSeconds float64 `json:"lag_seconds"`
	// IdleCPUPerSecond is the CPU time a second with nothing changing and
	// nothing scraping (ocl_exporter's at its real render interval);
	// RunCPUSeconds the CPU time of the run; CPUSecondsPerHour the run's
	// plus the idle rate for the rest of a real hour.
	IdleCPUPerSecond float64 `json:"idle_cpu_per_second"`
	// IdleCPUPerSecondPlayed is ocl_exporter's idle rate at the played
	// render interval, its ticker Speedup times as frequent: not counted.
	IdleCPUPerSecondPlayed float64 `json:"idle_cpu_per_second_played,omitempty"`
	RunCPUSeconds          float64 `json:"run_cpu_seconds"`
	CPUSecondsPerHour      float64 `json:"cpu_seconds_per_hour"`
	Scrapes                int     `json:"scrapes"`
	// RSS sampled every minute of the hour.
	RSSMedianMiB float64 `json:"rss_median_mib"`
	RSSMaxMiB    float64 `json:"rss_max_mib"`
	// RenderIntervalSeconds is the exporter's --collector.render-interval
	// in the run, in real time; RendersPerHour ocl_exporter_renders_total's
	// increase (ours).
	RendersPerHour        float64 `json:"renders_per_hour,omitempty"`
	RenderIntervalSeconds float64 `json:"render_interval_seconds,omitempty"`
	LoadAverage           float64 `json:"load_average"`
}

// ChurnTable is rs as the Markdown table docs/performance.md shows.
func ChurnTable(rs []ChurnResult) string {
	var b strings.Builder
	b.WriteString("| Nodes | Exporter | CPU s/hour | idle part | Renders/hour | RSS median (MiB) | RSS max (MiB) | Scrapes | Writes/hour | Hour played in | Writes late by at most | Load average |\n")
	b.WriteString("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range rs {
		renders := ""
		if r.Exporter == Ours {
			renders = fmt.Sprintf("%.0f", r.RendersPerHour)
		}
		fmt.Fprintf(&b, "| %d | %s | %.1f | %.1f | %s | %.1f | %.1f | %d | %d | %.0f s (%.0f×) | %.1f s | %.1f |\n",
			r.Nodes, r.Exporter, r.CPUSecondsPerHour, r.IdleCPUPerSecond*(3600-r.RunSeconds), renders, r.RSSMedianMiB, r.RSSMaxMiB, r.Scrapes, r.Changes,
			r.RunSeconds, 3600/r.RunSeconds, r.LagSeconds, r.LoadAverage)
	}
	b.WriteString("\n| Nodes | Render interval | CPU/hour, " + KSM + " / " + Ours + " | RSS median ratio |\n| ---: | ---: | ---: | ---: |\n")
	for _, o := range rs {
		if o.Exporter != Ours {
			continue
		}
		for _, k := range rs {
			if k.Exporter == KSM && k.Nodes == o.Nodes && k.RenderIntervalSeconds == o.RenderIntervalSeconds {
				fmt.Fprintf(&b, "| %d | %gs | %.1f× | %.1f× |\n", o.Nodes, o.RenderIntervalSeconds, k.CPUSecondsPerHour/o.CPUSecondsPerHour, k.RSSMedianMiB/o.RSSMedianMiB)
			}
		}
	}
	return b.String()
}
