package diagnose

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
)

// TestPublicReportHidesTheAPIError: /status may be public, so its report
// names the resource and its state, never the list error, which carries
// the API server's address, the resolver and the exporter's user.
func TestPublicReportHidesTheAPIError(t *testing.T) {
	const secret = `Get "https://api.internal.example:6443/apis/machineconfiguration.openshift.io/v1/machineosconfigs": dial tcp: lookup api.internal.example on 10.0.0.10:53: no such host; user "system:serviceaccount:ocl-exporter:ocl-exporter"`
	s := sourcetest.Snapshot(t, "../examples/snapshot")
	status := s.Status()
	for i := range status {
		if status[i].Resource == resourceMachineOSConfigs || i == len(status)-1 {
			status[i].Available, status[i].Problem = false, snapshot.ProblemUnreachable
			status[i].Reason = "listing " + status[i].Resource + " cluster-wide failed: " + secret
		}
	}
	for _, public := range []bool{false, true} {
		r := New(s.Cluster(sourcetest.Now), status, Options{RunbookBase: testRunbookBase, Public: public})
		var out bytes.Buffer
		if err := WriteHTML(&out, r); err != nil {
			t.Fatal(err)
		}
		if err := WriteText(&out, r, TextOptions{}); err != nil {
			t.Fatal(err)
		}
		leaked := strings.Contains(out.String(), "api.internal.example") || strings.Contains(out.String(), "10.0.0.10")
		if leaked == public {
			t.Errorf("Public=%v: report shows the API error: %v, want %v", public, leaked, !public)
		}
		if !strings.Contains(out.String(), resourceMachineOSConfigs) {
			t.Errorf("Public=%v: the report does not name the unreadable resource", public)
		}
	}
}
