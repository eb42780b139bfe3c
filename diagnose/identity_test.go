package diagnose

import (
	"slices"
	"strings"
	"testing"

	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
)

// TestForbiddenNamesWhoReads: a resource the reader may not list names
// the reader. A person's (cluster-reader cannot list Secrets) is unknown,
// not a failure, checked with oc auth can-i as themselves; a service
// account's fails, checked as that account; the status page (no
// identity) checks the exporter's.
func TestForbiddenNamesWhoReads(t *testing.T) {
	s := sourcetest.Source(t, "../examples/snapshot")
	status := s.Status()
	for i := range status {
		if status[i].Resource == "secrets" {
			status[i].Available, status[i].Problem, status[i].Reason = false, snapshot.ProblemForbidden, "forbidden: the exporter may not list and watch secrets"
		}
	}
	for _, c := range []struct {
		identity, wantStatus, wantCommand, wantMessage string
	}{
		{"user alice", string(NotCaptured), "oc auth can-i list secrets -n openshift-machine-config-operator", "user alice may not list secrets"},
		{"kubeconfig user admin (context ctx)", string(NotCaptured), "oc auth can-i list secrets -n openshift-machine-config-operator", "kubeconfig user admin (context ctx) may not list secrets"},
		{"user system:serviceaccount:ops:ocl", string(Failed), "oc auth can-i list secrets --as=system:serviceaccount:ops:ocl -n openshift-machine-config-operator", "forbidden"},
		{"", string(Failed), "oc auth can-i list secrets --as=system:serviceaccount:ocl-exporter:ocl-exporter -n openshift-machine-config-operator", "forbidden"},
	} {
		r := New(s.Cluster(sourcetest.Now), status, Options{RunbookBase: testRunbookBase, Identity: c.identity})
		access := r.Cluster[slices.IndexFunc(r.Cluster, func(ch Check) bool { return ch.ID == CheckExporterAccess })]
		if string(access.Status) != c.wantStatus || len(access.Findings) != 1 {
			t.Errorf("%q: %s %+v, want %s", c.identity, access.Status, access.Findings, c.wantStatus)
			continue
		}
		f := access.Findings[0]
		if f.Commands[0] != c.wantCommand || !strings.Contains(f.Message, c.wantMessage) {
			t.Errorf("%q: %q %q, want %q and a message with %q", c.identity, f.Message, f.Commands[0], c.wantCommand, c.wantMessage)
		}
	}
}
