package source

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	lists, watches *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		lists: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ocl_exporter_list_total",
			Help: "List requests made to the API server per watched resource, by result (success or error).",
		}, []string{"resource", "result"}),
		watches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ocl_exporter_watch_total",
			Help: "Watch requests made to the API server per watched resource, by result (success or error).",
		}, []string{"resource", "result"}),
	}
	for _, r := range Resources() {
		for _, result := range []string{"success", "error"} {
			m.lists.WithLabelValues(r.Name, result)
			m.watches.WithLabelValues(r.Name, result)
		}
	}
	if reg != nil {
		reg.MustRegister(m.lists, m.watches)
	}
	return m
}

func (m *metrics) count(v *prometheus.CounterVec, resource string, err error) {
	result := "success"
	if err != nil {
		result = "error"
	}
	v.WithLabelValues(resource, result).Inc()
}
