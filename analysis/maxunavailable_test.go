package analysis

import (
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestMaxUnavailable(t *testing.T) {
	intVal := func(i int32) *intstr.IntOrString { v := intstr.FromInt32(i); return &v }
	str := func(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }
	for _, tt := range []struct {
		name  string
		pool  string
		spec  *intstr.IntOrString
		nodes int
		want  int
	}{
		{"unset is 1", "worker", nil, 10, 1},
		{"an integer", "worker", intVal(3), 10, 3},
		{"an integer above the pool", "worker", intVal(5), 3, 5},
		{"0 is 1", "worker", intVal(0), 10, 1},
		{"a percentage rounds down", "worker", str("25%"), 10, 2},
		{"a percentage that rounds to 0 is 1", "worker", str("10%"), 3, 1},
		{"100%", "worker", str("100%"), 7, 7},
		{"the arbiter pool is always 1", "arbiter", intVal(3), 3, 1},
		{"a string that is no percentage does not parse", "worker", str("two"), 3, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: tt.pool}, Spec: mcfgv1.MachineConfigPoolSpec{MaxUnavailable: tt.spec}}
			if got := maxUnavailable(p, tt.nodes); got != tt.want {
				t.Errorf("maxUnavailable(%v, %d nodes) = %d, want %d", tt.spec, tt.nodes, got, tt.want)
			}
		})
	}
}
