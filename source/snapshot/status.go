package snapshot

import (
	"fmt"
)

// Problem says why a resource cannot be read.
type Problem string

const (
	// ProblemNone means the resource is readable.
	ProblemNone Problem = ""
	// ProblemNotServed means the API server does not serve the resource,
	// e.g. a cluster without On-Cluster Layering's CRDs or an older release.
	ProblemNotServed Problem = "not_served"
	// ProblemForbidden means the exporter's identity may not list or watch it.
	ProblemForbidden Problem = "forbidden"
	// ProblemUnreachable is anything else, usually the API server being away.
	ProblemUnreachable Problem = "error"
	// ProblemNotCaptured means, offline, the snapshot holds no object, List or
	// capture record of the resource's kind, or its capture recorded that
	// the resource could not be read. Nothing can be concluded from it: it
	// is unknown, not empty.
	ProblemNotCaptured Problem = "not_captured"
)

// NotCapturedError is what an offline backend returns for a resource its
// snapshot does not hold.
type NotCapturedError struct {
	Resource string
	// Namespace is where a namespaced resource was looked for.
	Namespace string
	// Why is the capture's own record of why the resource could not be
	// read, or empty when the snapshot simply holds none of its kind.
	Why string
}

func (e *NotCapturedError) Error() string {
	if e.Why != "" {
		return fmt.Sprintf("the snapshot did not capture %s: %s", e.Resource, e.Why)
	}
	if e.Namespace != "" {
		return fmt.Sprintf("the snapshot holds no %s of namespace %s, not even an empty list: not captured, unknown rather than none", e.Resource, e.Namespace)
	}
	return fmt.Sprintf("the snapshot holds no %s, not even an empty list: not captured, unknown rather than none", e.Resource)
}

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

// PublicReason is Reason without the API's error text, for pages anyone
// may read (/readyz, /status): that text names the API server's address,
// the resolver and the exporter's user. The log has it all.
func (s ResourceStatus) PublicReason() string {
	if s.Problem == ProblemUnreachable {
		return fmt.Sprintf("listing %s failed; the exporter's log has the error", s.Resource)
	}
	return s.Reason
}

// Settled is true when waiting longer will not make the resource readable
// without someone acting: it is not served or not permitted.
func (s ResourceStatus) Settled() bool {
	return s.Problem == ProblemNotServed || s.Problem == ProblemForbidden || s.Problem == ProblemNotCaptured
}
