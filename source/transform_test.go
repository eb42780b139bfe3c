package source

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
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

func TestEventKeepsWhatTheAnalysisReadsClipped(t *testing.T) {
	now := metav1.Now()
	cause := "secret push-secret from worker is not found. Did you use the right secret name?"
	e := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name: "machine-config.1", Namespace: "openshift-machine-config-operator", ResourceVersion: "7", UID: "u",
			CreationTimestamp: now, Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"big": strings.Repeat("x", 1<<20)},
		},
		InvolvedObject: corev1.ObjectReference{Kind: "ClusterOperator", Name: "machine-config", APIVersion: "config.openshift.io/v1", UID: "u2", FieldPath: "spec"},
		Type:           corev1.EventTypeWarning,
		Reason:         "OperatorDegraded: MachineOSBuilderFailed",
		// A 1 MiB message, a rune cut at the clip, and the cause at its end.
		Message:        "Failed to resync because: " + strings.Repeat("é", 1<<19) + cause,
		Source:         corev1.EventSource{Component: "machineconfigoperator", Host: "h"},
		FirstTimestamp: now, LastTimestamp: now, Count: 3,
		Series:              &corev1.EventSeries{Count: 2, LastObservedTime: metav1.NowMicro()},
		ReportingController: "x", ReportingInstance: "y", Action: "z", Related: &corev1.ObjectReference{Name: "r"},
	}
	want := *e.DeepCopy()
	if _, err := transformFor(resource(t, "events"))(e); err != nil {
		t.Fatal(err)
	}
	if len(e.Message) > MaxEventMessage || !strings.HasSuffix(e.Message, cause) || !utf8.ValidString(e.Message) {
		t.Errorf("message of %d bytes kept, want at most %d, valid UTF-8, ending with the cause", len(e.Message), MaxEventMessage)
	}

	want.Message = e.Message
	want.ObjectMeta = metav1.ObjectMeta{Name: want.Name, Namespace: want.Namespace, ResourceVersion: want.ResourceVersion, CreationTimestamp: want.CreationTimestamp}
	want.InvolvedObject = corev1.ObjectReference{Kind: "ClusterOperator", Name: "machine-config", APIVersion: "config.openshift.io/v1"}
	want.Source, want.Count, want.Series.Count = corev1.EventSource{}, 0, 0
	want.ReportingController, want.ReportingInstance, want.Action, want.Related = "", "", "", nil
	if !reflect.DeepEqual(*e, want) {
		t.Errorf("kept\n%+v\nwant\n%+v", *e, want)
	}
}

// TestClippedTextIsAStringOfItsOwn: a clipped message or reason is a copy;
// a part of the decoded one would keep all of it in memory (a 1 MiB
// message for the 4 KiB kept).
func TestClippedTextIsAStringOfItsOwn(t *testing.T) {
	whole := strings.Repeat("x", 1<<20)
	start := uintptr(unsafe.Pointer(unsafe.StringData(whole)))
	for name, clipped := range map[string]string{"tail": tailBytes(whole, MaxEventMessage), "head": headBytes(whole, maxEventReason)} {
		if p := uintptr(unsafe.Pointer(unsafe.StringData(clipped))); p >= start && p < start+uintptr(len(whole)) {
			t.Errorf("%s: the clipped text points into the whole text, which it keeps in memory", name)
		}
	}
}
