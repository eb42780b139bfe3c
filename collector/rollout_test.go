package collector

import (
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ocl-exporter/ocl_exporter/analysis"
)

func TestRolloutStage(t *testing.T) {
	testStage(t, "rollout", func() stage { return newRolloutStage() },
		"seed002-manifest-unknown",
		"healthy-rollout-done",
		"stage3-rollout-in-progress",
		"stage3-revert-to-non-layered",
		"stage3-pool-paused",
		"stage2-interrupted",
	)
}

// TestRolloutSeriesPerNodeConstant walks a node through a whole update,
// adding MachineConfigNode conditions one by one: the number of series per
// node must not grow with them.
func TestRolloutSeriesPerNodeConstant(t *testing.T) {
	const node = "ip-10-0-40-12.us-east-2.compute.internal"
	steps := []struct {
		typ    mcfgv1.StateProgress
		status metav1.ConditionStatus
	}{
		{mcfgv1.MachineConfigNodeUpdated, metav1.ConditionFalse},
		{mcfgv1.MachineConfigNodeUpdatePrepared, metav1.ConditionUnknown},
		{mcfgv1.MachineConfigNodeUpdateExecuted, metav1.ConditionUnknown},
		{mcfgv1.MachineConfigNodeUpdateCordoned, metav1.ConditionTrue},
		{mcfgv1.MachineConfigNodeUpdateDrained, metav1.ConditionUnknown},
		{mcfgv1.MachineConfigNodeUpdateFiles, metav1.ConditionTrue},
		{mcfgv1.MachineConfigNodeUpdateOS, metav1.ConditionUnknown},
		{mcfgv1.MachineConfigNodeImagePulledFromRegistry, metav1.ConditionUnknown},
		{mcfgv1.MachineConfigNodeUpdateFilesAndOS, metav1.ConditionUnknown},
		{mcfgv1.MachineConfigNodeUpdatePostActionComplete, metav1.ConditionUnknown},
		{mcfgv1.MachineConfigNodeUpdateRebooted, metav1.ConditionUnknown},
		{mcfgv1.MachineConfigNodeUpdateComplete, metav1.ConditionTrue},
		{mcfgv1.MachineConfigNodeUpdateUncordoned, metav1.ConditionTrue},
		{mcfgv1.MachineConfigNodeResumed, metav1.ConditionTrue},
		{mcfgv1.MachineConfigNodePinnedImageSetsProgressing, metav1.ConditionFalse},
		{mcfgv1.MachineConfigNodePinnedImageSetsDegraded, metav1.ConditionFalse},
	}
	pool := &mcfgv1.MachineConfigPool{
		ObjectMeta: metav1.ObjectMeta{Name: "infra"},
		Spec: mcfgv1.MachineConfigPoolSpec{NodeSelector: &metav1.LabelSelector{
			MatchLabels: map[string]string{"node-role.kubernetes.io/infra": ""},
		}},
	}
	mosc := &mcfgv1.MachineOSConfig{ObjectMeta: metav1.ObjectMeta{Name: "infra"}}
	mosc.Spec.MachineConfigPool.Name = "infra"
	mcn := &mcfgv1.MachineConfigNode{ObjectMeta: metav1.ObjectMeta{Name: node}}
	c := &analysis.Cluster{
		MachineConfigPools: []*mcfgv1.MachineConfigPool{pool},
		MachineOSConfigs:   []*mcfgv1.MachineOSConfig{mosc},
		MachineConfigNodes: []*mcfgv1.MachineConfigNode{mcn},
		Nodes: []*metav1.PartialObjectMetadata{{ObjectMeta: metav1.ObjectMeta{
			Name:        node,
			Labels:      map[string]string{"node-role.kubernetes.io/infra": ""},
			Annotations: map[string]string{analysis.NodeAnnotationState: analysis.MCDStateWorking},
		}}},
	}
	want := -1
	for i, step := range steps {
		mcn.Status.Conditions = append(mcn.Status.Conditions, metav1.Condition{Type: string(step.typ), Status: step.status, Reason: string(step.typ)})
		got := nodeSeries(t, c, node)
		if want < 0 {
			want = got
		}
		if got != want {
			t.Errorf("after %d conditions (%s=%s): %d series for the node, want %d", i+1, step.typ, step.status, got, want)
		}
	}
}

// nodeSeries counts the rollout stage's series labelled with node.
func nodeSeries(t *testing.T, c *analysis.Cluster, node string) int {
	t.Helper()
	ch := make(chan *sample, 1024)
	newRolloutStage().collect(analysis.Analyze(c, 0), ch)
	close(ch)
	n := 0
	for m := range ch {
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			t.Fatal(err)
		}
		for _, l := range pb.GetLabel() {
			if l.GetName() == "node" && l.GetValue() == node {
				n++
			}
		}
	}
	return n
}
