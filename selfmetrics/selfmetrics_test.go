package selfmetrics

import (
	"bytes"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func parse(t *testing.T, text []byte) map[string]*dto.MetricFamily {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return families
}

// clientGolang is what client_golang's Go and process collectors and
// promhttp's handler instrumentation export.
func clientGolang(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{ReportErrors: true}))
	promhttp.InstrumentMetricHandler(reg, promhttp.HandlerFor(prometheus.NewRegistry(), promhttp.HandlerOpts{}))
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	for _, mf := range families {
		if _, err := expfmt.MetricFamilyToText(&text, mf); err != nil {
			t.Fatal(err)
		}
	}
	return parse(t, text.Bytes())
}

// TestSameFamiliesAsClientGolang: every family client_golang exports is
// here with the same help, type and labels, but the network namespace's
// counters; the values that do not move between two reads are equal.
func TestSameFamiliesAsClientGolang(t *testing.T) {
	var s Scrapes
	ours := parse(t, s.Append(NewWriter().Append(nil)))
	theirs := clientGolang(t)
	for name := range theirs {
		if strings.HasPrefix(name, "process_network_") || (runtime.GOOS != "linux" && strings.HasPrefix(name, "process_")) {
			delete(theirs, name)
		}
	}
	if got, want := slices.Sorted(maps.Keys(ours)), slices.Sorted(maps.Keys(theirs)); !slices.Equal(got, want) {
		t.Fatalf("families\n got %v\nwant %v", got, want)
	}
	for name, want := range theirs {
		got := ours[name]
		if got.GetHelp() != want.GetHelp() || got.GetType() != want.GetType() || len(got.Metric) != len(want.Metric) {
			t.Errorf("%s: help %q type %v %d series, want %q %v %d", name, got.GetHelp(), got.GetType(), len(got.Metric), want.GetHelp(), want.GetType(), len(want.Metric))
			continue
		}
		for i := range want.Metric {
			if g, w := labels(got.Metric[i]), labels(want.Metric[i]); g != w {
				t.Errorf("%s: labels %s, want %s", name, g, w)
			}
		}
	}
	for _, name := range []string{"go_gc_gogc_percent", "go_gc_gomemlimit_bytes", "go_info", "go_sched_gomaxprocs_threads",
		"process_max_fds", "process_virtual_memory_max_bytes", "process_start_time_seconds", "promhttp_metric_handler_requests_total"} {
		if g, w := value(ours[name]), value(theirs[name]); g != w {
			t.Errorf("%s = %v, want %v", name, g, w)
		}
	}
	// Close, not equal: they move between the two reads.
	for name, tolerance := range map[string]float64{
		"process_resident_memory_bytes": 0.5, "process_virtual_memory_bytes": 0.5, "process_open_fds": 0.5,
		"go_memstats_sys_bytes": 0.5, "go_threads": 0.5,
	} {
		if g, w := value(ours[name]), value(theirs[name]); g <= 0 || math.Abs(g-w) > tolerance*w {
			t.Errorf("%s = %v, want about %v", name, g, w)
		}
	}
	// client_golang's counts ticks of 10 ms, read after ours.
	if g, w := value(ours["process_cpu_seconds_total"]), value(theirs["process_cpu_seconds_total"]); math.Abs(g-w) > 0.02 {
		t.Errorf("process_cpu_seconds_total = %v, want %v within two ticks", g, w)
	}
}

func labels(m *dto.Metric) string {
	var b strings.Builder
	for _, l := range m.GetLabel() {
		b.WriteString(l.GetName() + "=" + l.GetValue() + ",")
	}
	return b.String()
}

func value(mf *dto.MetricFamily) float64 {
	m := mf.GetMetric()[0]
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Counter != nil:
		return m.Counter.GetValue()
	}
	return math.NaN()
}

// TestWritesWithoutGarbage: a scrape's own metrics make no garbage but
// the two paths open(2) copies, which the exporter's garbage collector
// would pay for marking a heap of tens of megabytes (a registry's Gather
// of the same made about 100 KB).
func TestWritesWithoutGarbage(t *testing.T) {
	w := NewWriter()
	var s Scrapes
	buf := w.Append(nil)
	want := 0.0
	if runtime.GOOS == "linux" {
		want = 2
	}
	if allocs := testing.AllocsPerRun(100, func() { buf = s.Append(w.Append(buf[:0])) }); allocs > want {
		t.Errorf("%v allocations a scrape, want at most %v", allocs, want)
	}
}

func TestScrapesCount(t *testing.T) {
	var s Scrapes
	s.Begin()
	s.Begin()
	s.End(200)
	s.End(503)
	s.Begin()
	families := parse(t, s.Append(nil))
	if v := value(families["promhttp_metric_handler_requests_in_flight"]); v != 1 {
		t.Errorf("in flight %v, want 1", v)
	}
	for _, m := range families["promhttp_metric_handler_requests_total"].GetMetric() {
		want := map[string]float64{"200": 1, "500": 0, "503": 1}[m.GetLabel()[0].GetValue()]
		if m.GetCounter().GetValue() != want {
			t.Errorf("code %s: %v, want %v", m.GetLabel()[0].GetValue(), m.GetCounter().GetValue(), want)
		}
	}
}

func TestAppendValue(t *testing.T) {
	for v, want := range map[float64]string{1: "1", 0: "0", -1: "-1", math.Inf(1): "+Inf", math.Inf(-1): "-Inf", 0.25: "0.25", 1e21: "1e+21", 12345: "12345"} {
		if got := string(AppendValue(nil, v)); got != want+"\n" {
			t.Errorf("%v: %q", v, got)
		}
	}
	if got := string(AppendValue(nil, math.NaN())); got != "NaN\n" {
		t.Errorf("NaN: %q", got)
	}
}
