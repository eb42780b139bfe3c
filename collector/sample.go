package collector

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// sample is one gauge sample as the collectors emit it: its family, value
// and label values, about a sixth of the memory of a const metric and the
// protobuf a registry turns it into. The Renderer reads it directly;
// anything else (a registry, testutil) reads it through Write.
type sample struct {
	spec        *Spec
	value       float64
	labelValues []string // in spec.Labels order
}

// Desc implements prometheus.Metric.
func (s *sample) Desc() *prometheus.Desc { return s.spec.desc }

// Write implements prometheus.Metric, as a const gauge writes itself.
func (s *sample) Write(out *dto.Metric) error {
	m, err := prometheus.NewConstMetric(s.spec.desc, prometheus.GaugeValue, s.value, s.labelValues...)
	if err != nil {
		return err
	}
	return m.Write(out)
}

// compare orders two samples of one family as the exposition lists them:
// by label values, labels taken in name order.
func (s *sample) compare(o *sample) int {
	for _, i := range s.spec.byName {
		if c := strings.Compare(s.labelValues[i], o.labelValues[i]); c != 0 {
			return c
		}
	}
	return 0
}
