package source

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
)

// explain names the problem and the fix; namespace is "" for a
// cluster-wide watch.
func explain(err error, name, namespace string) (snapshot.Problem, string) {
	where := "cluster-wide"
	if namespace != "" {
		where = "in namespace " + namespace
	}
	var nc *snapshot.NotCapturedError
	switch {
	case errors.As(err, &nc):
		return snapshot.ProblemNotCaptured, nc.Error()
	case apierrors.IsNotFound(err):
		return snapshot.ProblemNotServed, fmt.Sprintf("the API server does not serve %s: the cluster lacks this CRD "+
			"(On-Cluster Layering needs the machineconfiguration.openshift.io/v1 MachineOSConfig and MachineOSBuild APIs)", name)
	case apierrors.IsForbidden(err):
		return snapshot.ProblemForbidden, fmt.Sprintf("forbidden: the exporter may not list and watch %s %s; "+
			"grant the verbs list and watch on it (see deploy/ for the ClusterRole)", name, where)
	default:
		return snapshot.ProblemUnreachable, fmt.Sprintf("listing %s %s failed: %v", name, where, err)
	}
}
