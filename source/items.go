package source

import "k8s.io/apimachinery/pkg/runtime"

// Cached is one watched resource and the objects its cache holds, trimmed
// as the exporter keeps them.
type Cached struct {
	Resource Resource
	Objects  []runtime.Object
}

// Cached returns what every informer holds, in Resources() order, for
// `ocl_exporter capture`. Like Cluster, it only reads the caches; the
// objects are shared with them and must not be modified.
func (s *Source) Cached() []Cached {
	out := make([]Cached, 0, len(s.watched))
	for _, w := range s.watched {
		c := Cached{Resource: w.Resource}
		for _, it := range w.informer.GetStore().List() {
			if o, ok := it.(runtime.Object); ok {
				c.Objects = append(c.Objects, o)
			}
		}
		out = append(out, c)
	}
	return out
}
