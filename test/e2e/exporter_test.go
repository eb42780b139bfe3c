//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/ocl-exporter/ocl_exporter/test/cluster"
)

// buildExporter builds cmd/ocl_exporter as make build does, into dir.
func buildExporter(dir string) (string, error) { return cluster.BuildExporter(repoRoot, dir) }

// exporter is an ocl_exporter process watching the cluster as the
// exporter's ServiceAccount.
type exporter struct {
	*cluster.Proc
	url string
}

// startExporter starts an exporter on addr, a free port when empty, with
// extra flags.
func startExporter(dir, bin, name, kubeconfig, addr string, flags ...string) (*exporter, error) {
	if addr == "" {
		var err error
		if addr, err = cluster.FreeAddress(); err != nil {
			return nil, err
		}
	}
	p, err := cluster.StartProc(dir, name, bin, append([]string{"--kubeconfig", kubeconfig, "--web.listen-address", addr}, flags...)...)
	if err != nil {
		return nil, err
	}
	e := &exporter{Proc: p, url: "http://" + addr}
	return e, cluster.WaitHTTP(p, http.DefaultClient, e.url+"/readyz", "", time.Minute)
}

// series is a scrape as "name{label="value",...}" to value, labels sorted.
type series map[string]float64

// oclSeries keeps the OCL families of a scrape, keyed by series.
func oclSeries(families map[string]*dto.MetricFamily) series {
	out := series{}
	for name, mf := range families {
		if !cluster.OwnFamily(name) {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			v := m.GetGauge().GetValue()
			if m.GetCounter() != nil {
				v = m.GetCounter().GetValue()
			}
			out[seriesKey(name, labels)] = v
		}
	}
	return out
}

func seriesKey(name string, labels map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		parts = append(parts, fmt.Sprintf("%s=%q", k, labels[k]))
	}
	return name + "{" + strings.Join(parts, ",") + "}"
}

// family is the metric name of a series key.
func family(key string) string { return key[:strings.IndexByte(key, '{')] }

// scrape reads /metrics.
func (e *exporter) scrape(ctx context.Context) (series, error) {
	families, err := cluster.Scrape(ctx, e.url)
	if err != nil {
		return nil, err
	}
	return oclSeries(families), nil
}

// withoutCounters drops the exporter's request counters from s, to keep
// failure messages short.
func withoutCounters(s series) series {
	out := series{}
	for k, v := range s {
		if !strings.HasSuffix(family(k), "_total") {
			out[k] = v
		}
	}
	return out
}

// String prints the series sorted, one a line, as in a scrape.
func (s series) String() string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(s)) {
		fmt.Fprintf(&b, "%s %g\n", k, s[k])
	}
	return b.String()
}

// expectation is what a scrape must show; it returns what differs.
type expectation func(got series) []string

// eventually scrapes until want holds or the timeout, and then fails with
// the differences and the whole OCL scrape.
func (e *exporter) eventually(ctx context.Context, timeout time.Duration, want expectation) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var got series
	var diff []string
	for {
		s, err := e.scrape(ctx)
		if err != nil {
			diff = []string{"scrape: " + err.Error()}
		} else if got, diff = s, want(s); len(diff) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("after %s the scrape differs:\n  %s\n--- last scrape (OCL families but the request counters):\n%s--- exporter log:\n%s",
				timeout, strings.Join(diff, "\n  "), withoutCounters(got), e.Tail(20))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// hasValues wants each series at its value.
func hasValues(want series) expectation {
	return func(got series) []string {
		var diff []string
		for _, k := range slices.Sorted(maps.Keys(want)) {
			v, ok := got[k]
			switch {
			case !ok:
				diff = append(diff, fmt.Sprintf("missing %s (want %g)", k, want[k]))
			case v != want[k]:
				diff = append(diff, fmt.Sprintf("%s is %g, want %g", k, v, want[k]))
			}
		}
		return diff
	}
}

// lacks wants no series of the families named, matching every label given.
func lacks(name string, labels map[string]string) expectation {
	return func(got series) []string {
		var diff []string
		for k := range got {
			if family(k) == name && matches(k, labels) {
				diff = append(diff, "unexpected "+k)
			}
		}
		slices.Sort(diff)
		return diff
	}
}

// matches is true when the series key carries every label given.
func matches(key string, labels map[string]string) bool {
	for l, v := range labels {
		pair := fmt.Sprintf("%s=%q", l, v)
		if !strings.Contains(key, "{"+pair) && !strings.Contains(key, ","+pair) {
			return false
		}
	}
	return true
}

func all(es ...expectation) expectation {
	return func(got series) []string {
		var diff []string
		for _, e := range es {
			diff = append(diff, e(got)...)
		}
		return diff
	}
}
