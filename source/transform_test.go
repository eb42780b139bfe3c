package source

import (
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestMachineConfigNodeKeepsWhatTheAnalysisReads(t *testing.T) {
	cond := func(typ mcfgv1.StateProgress, status metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: string(typ), Status: status, Reason: reason, Message: msg, LastTransitionTime: metav1.Now()}
	}
	m := &mcfgv1.MachineConfigNode{
		ObjectMeta: metav1.ObjectMeta{Name: "n1", ResourceVersion: "5", UID: "u", Labels: map[string]string{"a": "b"}},
		Spec:       mcfgv1.MachineConfigNodeSpec{Node: mcfgv1.MCOObjectReference{Name: "n1"}, Pool: mcfgv1.MCOObjectReference{Name: "worker"}},
		Status: mcfgv1.MachineConfigNodeStatus{Conditions: []metav1.Condition{
			cond(mcfgv1.MachineConfigNodeUpdatePrepared, metav1.ConditionTrue, "UpdatePrepared", "Update is Compatible."),
			cond(mcfgv1.MachineConfigNodeUpdateCordoned, metav1.ConditionUnknown, "UpdateExecutedCordoned", "Error: Failed to Cordon node. Error is [webhook]"),
			cond(mcfgv1.MachineConfigNodeUpdateDrained, metav1.ConditionUnknown, "UpdateExecutedDrained", "Error: Node Drain has not succeeded. Error is: [PDB]"),
			cond(mcfgv1.MachineConfigNodeUpdateOS, metav1.ConditionUnknown, "UpdatingOS", "Action during update to rendered-worker-1: applying the image"),
			cond(mcfgv1.MachineConfigNodeNodeDegraded, metav1.ConditionTrue, "Degraded", "failed to pull"),
		}},
	}
	if _, err := transformFor(resource(t, "machineconfignodes.machineconfiguration.openshift.io"))(m); err != nil {
		t.Fatal(err)
	}
	want := []metav1.Condition{
		{Type: "UpdatePrepared", Status: metav1.ConditionTrue},
		{Type: "Cordoned", Status: metav1.ConditionUnknown, Reason: "UpdateExecutedCordoned", Message: "Error: Failed to Cordon node. Error is [webhook]"},
		{Type: "Drained", Status: metav1.ConditionUnknown, Reason: "UpdateExecutedDrained", Message: "Error: Node Drain has not succeeded. Error is: [PDB]"},
		{Type: "AppliedOSImage", Status: metav1.ConditionUnknown, Reason: "UpdatingOS", Message: "Action during update to rendered-worker-1: applying the image"},
		{Type: "NodeDegraded", Status: metav1.ConditionTrue, Reason: "Degraded", Message: "failed to pull"},
	}
	if m.Name != "n1" || m.ResourceVersion != "5" || m.UID != "" || m.Labels != nil || m.Spec.Pool.Name != "" {
		t.Errorf("kept %+v %+v", m.ObjectMeta, m.Spec)
	}
	for i, c := range m.Status.Conditions {
		if c.LastTransitionTime.IsZero() {
			t.Errorf("condition %d lost its transition time", i)
		}
		c.LastTransitionTime = metav1.Time{}
		if c != want[i] {
			t.Errorf("condition %d: %+v, want %+v", i, c, want[i])
		}
	}
}
