package diagnose

import (
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ocl-exporter/ocl_exporter/analysis"
	"github.com/ocl-exporter/ocl_exporter/classify"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
)

// exampleWithDegradedMaster is the example snapshot with the master pool's
// node Degraded on a drain, without MachineOSConfigs unless keepMOSC.
func exampleWithDegradedMaster(t *testing.T, keepMOSC bool) *Report {
	t.Helper()
	objs, err := snapshot.Load(os.DirFS("../examples/snapshot"), ".", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	objs = slices.DeleteFunc(objs, func(o runtime.Object) bool {
		return !keepMOSC && o.GetObjectKind().GroupVersionKind().Kind == "MachineOSConfig"
	})
	for _, o := range objs {
		if m, ok := o.(*metav1.PartialObjectMetadata); ok && m.Name == "ip-10-0-22-152.us-east-2.compute.internal" {
			m.Annotations[analysis.NodeAnnotationState] = analysis.MCDStateDegraded
			m.Annotations[analysis.NodeAnnotationReason] = "failed to drain node: ip-10-0-22-152.us-east-2.compute.internal after 1 hour. Please see machine-config-controller logs for more information"
		}
	}
	s := sourcetest.FromObjects(t, objs)
	return New(s.Cluster(sourcetest.Now), s.Status(), Options{RunbookBase: testRunbookBase})
}

// TestNodeFailuresOutsideLayeredPools: a node of a pool that does not use
// image mode and fails to update is listed with its class and runbook,
// and makes the verdict a problem (exit 1) even when no pool is layered.
func TestNodeFailuresOutsideLayeredPools(t *testing.T) {
	for _, keepMOSC := range []bool{true, false} {
		r := exampleWithDegradedMaster(t, keepMOSC)
		if r.Verdict != Problem || r.Verdict.ExitCode() != 1 {
			t.Errorf("MachineOSConfigs kept %v: verdict %s (%s), want a problem", keepMOSC, r.Verdict, r.Summary)
		}
		i := slices.IndexFunc(r.Pools, func(p Pool) bool { return p.Name == "master" })
		if i < 0 {
			t.Fatalf("no pool master in %+v", r.Pools)
		}
		p := r.Pools[i]
		if p.Layered || p.Verdict != Problem || len(p.Stages) != 1 || !hasClass(p.Stages[0], classify.DrainFailed) {
			t.Fatalf("MachineOSConfigs kept %v: pool master %+v, want its rollout failed with %s", keepMOSC, p, classify.DrainFailed)
		}
		for _, c := range p.Stages[0].Checks {
			for _, f := range c.Findings {
				if c.Status == Failed && (f.Runbook == nil || !strings.HasSuffix(f.Runbook.URL, ".md")) {
					t.Errorf("finding without a runbook: %+v", f)
				}
			}
		}
	}
}
