// Package collector turns the analysis of one cluster view into Prometheus
// metrics. Collect reads the source's caches, never the API server, so a
// scrape costs no API call.
package collector

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ocl-exporter/ocl_exporter/analysis"
	"github.com/ocl-exporter/ocl_exporter/collector/labelvalue"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
)

// Source is what the collectors read: the cluster view and how fresh it is.
type Source interface {
	Cluster(now time.Time) *analysis.Cluster
	Status() []snapshot.ResourceStatus
}

// Options tune what is exported.
type Options struct {
	// BuildHistory is how many MachineOSBuilds per MachineOSConfig are
	// exported besides the current one: the MCO never prunes successful
	// builds, and series must stay bounded.
	BuildHistory int
	// Now is the time a view is evaluated at (a snapshot's capture time);
	// nil means time.Now.
	Now func() time.Time
}

// DefaultOptions are the flag defaults.
var DefaultOptions = Options{BuildHistory: 3}

// stage exports the metrics of one part of the OCL flow.
type stage interface {
	specs() []*Spec
	collect(f *analysis.Findings, ch chan<- *sample)
}

// Collector exports every stage from one view of the cluster per scrape.
type Collector struct {
	src     Source
	now     func() time.Time
	history int
	stages  []stage
}

// New returns the OCL collector.
func New(src Source, opts Options) *Collector {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Collector{
		src:     src,
		now:     now,
		history: opts.BuildHistory,
		stages: []stage{
			newExporterStage(src),
			// stage 1: MachineOSConfig, secrets, builder, operator
			newConfigStage(),
			// stage 2: MachineOSBuild, Job, pods, leftovers
			newBuildStage(),
			// stage 3: nodes, MachineConfigNodes, pools
			newRolloutStage(),
		},
	}
}

// Specs lists every metric family the collector can emit, for the docs.
func (c *Collector) Specs() []*Spec {
	var out []*Spec
	for _, s := range c.stages {
		out = append(out, s.specs()...)
	}
	return out
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, s := range c.Specs() {
		ch <- s.desc
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	forward(ch, c.collect)
}

// collect sends every sample of the current view to ch.
func (c *Collector) collect(ch chan<- *sample) {
	f := analysis.Analyze(c.src.Cluster(c.now()), c.history)
	for _, s := range c.stages {
		s.collect(f, ch)
	}
}

// forward runs collect and passes what it sends on to ch, for a registry.
func forward(ch chan<- prometheus.Metric, collect func(chan<- *sample)) {
	samples := make(chan *sample, sampleBuffer)
	go func() {
		defer close(samples)
		collect(samples)
	}()
	for s := range samples {
		ch <- s
	}
}

// sampleBuffer lets the collectors run ahead of the reader a little.
const sampleBuffer = 256

// Spec is one documented gauge family.
type Spec struct {
	Name   string
	Help   string
	Labels []string
	desc   *prometheus.Desc
	// byName lists the positions of Labels in name order, the order of a
	// sample's labels in the exposition.
	byName []int
}

func newSpec(name, help string, labels ...string) *Spec {
	byName := make([]int, len(labels))
	for i := range byName {
		byName[i] = i
	}
	slices.SortFunc(byName, func(a, b int) int { return strings.Compare(labels[a], labels[b]) })
	return &Spec{Name: name, Help: help, Labels: labels, byName: byName, desc: prometheus.NewDesc(name, help, labels, nil)}
}

// gauge is one sample of the family; label values in Labels order, each
// bounded (labelvalue.Bound): every sample the collectors emit passes here.
func (s *Spec) gauge(v float64, labelValues ...string) *sample {
	if len(labelValues) != len(s.Labels) {
		panic(fmt.Sprintf("%s: %d label values for labels %q", s.Name, len(labelValues), s.Labels))
	}
	// A copy: callers share one slice between samples (a build's id).
	bounded := make([]string, len(labelValues))
	for i, lv := range labelValues {
		bounded[i] = labelvalue.Bound(lv)
	}
	return &sample{spec: s, value: v, labelValues: bounded}
}

// boolean is 1 for true, 0 for false.
func boolean(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
