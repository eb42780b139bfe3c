package diagnose

import (
	"testing"

	"github.com/ocl-exporter/ocl_exporter/analysis"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
)

// TestReaderWithoutAccessCannotDiagnose: an identity that may list
// nothing fails only the access check; that is no problem found in the
// cluster but a diagnosis that could not be made (exit 2), as the runbook's
// first command run with a service account deploy/ does not grant shows.
func TestReaderWithoutAccessCannotDiagnose(t *testing.T) {
	var status []snapshot.ResourceStatus
	for _, r := range snapshot.Resources() {
		status = append(status, snapshot.ResourceStatus{Resource: r.Name, Seen: true, Problem: snapshot.ProblemForbidden,
			Reason: "forbidden: the exporter may not list and watch " + r.Name})
	}
	r := New(&analysis.Cluster{Now: sourcetest.Now, Namespace: "openshift-machine-config-operator"}, status, Options{RunbookBase: testRunbookBase})
	if r.FailedChecks() == 0 {
		t.Fatal("the access check did not fail")
	}
	if r.Verdict != Unknown || r.Verdict.ExitCode() != 2 {
		t.Errorf("verdict %s (exit %d): %s; want unknown (exit 2)", r.Verdict, r.Verdict.ExitCode(), r.Summary)
	}
}
