package main

import (
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ocl-exporter/ocl_exporter/collector"
	"github.com/ocl-exporter/ocl_exporter/docs"
)

// documented reads the metric names and their label names from the docs.
func documented(t *testing.T) map[string]docs.Metric {
	t.Helper()
	f, err := os.Open("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out, err := docs.ReadMetrics(f)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// runtimeMetric is exposed by client_golang for every Go program.
func runtimeMetric(name string) bool {
	return strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") || strings.HasPrefix(name, "promhttp_")
}

// TestDocsListEveryEmittedMetric keeps docs/metrics.md the one true list: it
// must name exactly the families a scrape of the example snapshot returns,
// with their types and labels, and the example must exercise every
// declared metric.
func TestDocsListEveryEmittedMetric(t *testing.T) {
	docs := documented(t)
	emitted := map[string][]string{}
	types := map[string]string{}
	for name, mf := range scrape(t, startExporter(t, "--example")) {
		if runtimeMetric(name) {
			continue
		}
		var labels []string
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if !slices.Contains(labels, l.GetName()) {
					labels = append(labels, l.GetName())
				}
			}
		}
		sort.Strings(labels)
		emitted[name] = labels
		types[name] = strings.ToLower(mf.GetType().String())
	}
	for name, labels := range emitted {
		want, ok := docs[name]
		switch {
		case !ok:
			t.Errorf("%s is emitted but not in docs/metrics.md", name)
		case !slices.Equal(want.Labels, labels):
			t.Errorf("%s: docs/metrics.md lists labels %v, the exporter emits %v", name, want.Labels, labels)
		case want.Type != types[name]:
			t.Errorf("%s: docs/metrics.md says %s, the exporter emits a %s", name, want.Type, types[name])
		}
	}
	for name := range docs {
		if _, ok := emitted[name]; !ok {
			t.Errorf("%s is in docs/metrics.md but the example snapshot does not emit it: add a case to examples/snapshot or drop the metric", name)
		}
	}
	for _, s := range collector.New(nil, collector.DefaultOptions).Specs() {
		if _, ok := docs[s.Name]; !ok {
			t.Errorf("%s is declared by the collector but not documented", s.Name)
		}
	}
}
