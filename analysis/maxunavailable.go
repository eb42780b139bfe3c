package analysis

import (
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// arbiterPool is the pool the node controller always updates one node at
// a time, whatever its spec says.
const arbiterPool = "arbiter"

// maxUnavailable is the most nodes of the pool the node controller
// updates at once, as openshift/machine-config-operator computes it
// (maxUnavailable, pkg/controller/node/node_controller.go, the same from
// release-4.16 to main): spec.maxUnavailable, 1 when unset, an integer or
// a percentage of the pool's nodes rounded down, and at least 1. It is 0
// when the value does not parse: the MCO then returns an error and
// updates no node.
func maxUnavailable(pool *mcfgv1.MachineConfigPool, nodes int) int {
	if pool.Name == arbiterPool {
		return 1
	}
	v := intstr.FromInt32(1)
	if pool.Spec.MaxUnavailable != nil {
		v = *pool.Spec.MaxUnavailable
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(&v, nodes, false)
	if err != nil {
		return 0
	}
	return max(n, 1)
}
