package source

import (
	"strconv"
	"sync/atomic"

	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	lists, watches *prometheus.CounterVec
	// capped counts the objects a capped watch (snapshot.Resource.Max) did not keep.
	capped *prometheus.CounterVec
	// changes moves after every change of a counter: the server gathers
	// them again only then.
	changes atomic.Uint64
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
		capped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ocl_exporter_events_dropped_total",
			Help: "Events a watch did not keep because it holds only its newest " + strconv.Itoa(snapshot.MaxEvents) + ", per watched resource.",
		}, []string{"resource"}),
	}
	for _, r := range snapshot.Resources() {
		if r.Max > 0 {
			m.capped.WithLabelValues(r.Name)
		}
		for _, result := range []string{"success", "error"} {
			m.lists.WithLabelValues(r.Name, result)
			m.watches.WithLabelValues(r.Name, result)
		}
	}
	if reg != nil {
		reg.MustRegister(m.lists, m.watches, m.capped)
	}
	return m
}

func (m *metrics) count(v *prometheus.CounterVec, resource string, err error) {
	result := "success"
	if err != nil {
		result = "error"
	}
	v.WithLabelValues(resource, result).Inc()
	m.changes.Add(1)
}

// drop counts n objects the watch of resource did not keep.
func (m *metrics) drop(resource string, n int) {
	m.capped.WithLabelValues(resource).Add(float64(n))
	m.changes.Add(1)
}

// dropped returns what counts an object the watch of resource did not keep.
func (m *metrics) dropped(resource string) func() {
	c := m.capped.WithLabelValues(resource)
	return func() {
		c.Inc()
		m.changes.Add(1)
	}
}
