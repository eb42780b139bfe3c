package collector

import "github.com/ocl-exporter/ocl_exporter/analysis"

// exporterStage reports the exporter's own view of the API: which watched
// resources it can read, so "no objects" and "cannot see" differ.
type exporterStage struct {
	src       Source
	available *Spec
}

func newExporterStage(src Source) *exporterStage {
	return &exporterStage{
		src: src,
		available: newSpec("ocl_exporter_resource_available",
			"1 if the watched resource is served and readable, 0 if its last list or watch failed.",
			"resource"),
	}
}

func (s *exporterStage) specs() []*Spec { return []*Spec{s.available} }

func (s *exporterStage) collect(_ *analysis.Findings, ch chan<- *sample) {
	for _, st := range s.src.Status() {
		ch <- s.available.gauge(boolean(st.Available), st.Resource)
	}
}
