package source

import (
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	"k8s.io/apimachinery/pkg/runtime"
)

// Cached returns what every informer holds, in snapshot.Resources() order, for
// `ocl_exporter capture`. Like Cluster, it only reads the caches; the
// objects are shared with them and must not be modified.
func (s *Source) Cached() []snapshot.Cached {
	out := make([]snapshot.Cached, 0, len(s.watched))
	for _, w := range s.watched {
		c := snapshot.Cached{Resource: w.Resource}
		for _, it := range w.informer.GetStore().List() {
			if o, ok := it.(runtime.Object); ok {
				c.Objects = append(c.Objects, o)
			}
		}
		out = append(out, c)
	}
	return out
}
