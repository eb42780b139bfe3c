package source

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Problem says why a resource cannot be read.
type Problem string

const (
	ProblemNone Problem = ""
	// ProblemNotServed: the API server does not serve the resource, e.g. a
	// cluster without On-Cluster Layering's CRDs or an older release.
	ProblemNotServed Problem = "not_served"
	// ProblemForbidden: the exporter's identity may not list or watch it.
	ProblemForbidden Problem = "forbidden"
	// ProblemUnreachable: anything else, usually the API server being away.
	ProblemUnreachable Problem = "error"
)

// ResourceStatus is what the exporter knows about one watched resource.
type ResourceStatus struct {
	Resource string
	// Seen is false until the first list or watch has returned.
	Seen bool
	// Available is true if the last list or watch succeeded.
	Available bool
	// Synced is true once the informer holds a complete list.
	Synced  bool
	Problem Problem
	// Reason is one human sentence naming the resource and the fix.
	Reason string
}

// Settled is true when waiting longer will not make the resource readable
// without someone acting: it is not served or not permitted.
func (s ResourceStatus) Settled() bool {
	return s.Problem == ProblemNotServed || s.Problem == ProblemForbidden
}

func explain(err error, name, namespace string, namespaced bool) (Problem, string) {
	where := "cluster-wide"
	if namespaced {
		where = "in namespace " + namespace
	}
	switch {
	case apierrors.IsNotFound(err):
		return ProblemNotServed, fmt.Sprintf("the API server does not serve %s: the cluster lacks this CRD "+
			"(On-Cluster Layering needs the machineconfiguration.openshift.io/v1 MachineOSConfig and MachineOSBuild APIs)", name)
	case apierrors.IsForbidden(err):
		return ProblemForbidden, fmt.Sprintf("forbidden: the exporter may not list and watch %s %s; "+
			"grant the verbs list and watch on it (see deploy/ for the ClusterRole)", name, where)
	default:
		return ProblemUnreachable, fmt.Sprintf("listing %s %s failed: %v", name, where, err)
	}
}
