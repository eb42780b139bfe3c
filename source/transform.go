package source

import (
	"slices"
	"strings"
	"unique"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/ocl-exporter/ocl_exporter/analysis"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
)

// mcoPrefix is the prefix of every MCO label and annotation on nodes.
const mcoPrefix = "machineconfiguration.openshift.io/"

// transformFor trims objects before they enter the cache: memory must stay
// flat as nodes grow, and nothing is kept that no analysis reads.
func transformFor(r snapshot.Resource) cache.TransformFunc {
	return func(obj any) (any, error) {
		if m, ok := obj.(metav1.Object); ok {
			m.SetManagedFields(nil)
		}
		switch o := obj.(type) {
		case *metav1.PartialObjectMetadata:
			trimMetadata(r.GVR.Resource, o)
		case *mcfgv1.MachineConfigNode:
			trimMachineConfigNode(o)
		case *corev1.Pod:
			trimPod(o)
		case *batchv1.Job:
			o.Spec.Template = corev1.PodTemplateSpec{}
		case *corev1.Event:
			trimEvent(o)
		}
		return obj, nil
	}
}

func trimMetadata(resource string, o *metav1.PartialObjectMetadata) {
	switch resource {
	case "secrets":
		// kubectl apply copies the whole object, data included, into the
		// last-applied-configuration annotation: never keep a Secret's
		// annotations.
		o.Annotations = nil
	case "nodes":
		// Per node, only what places it in a pool (its labels) and the
		// MCO's annotations matter; nodes carry large annotations (CSI,
		// OVN, ...). Most keys and values repeat from node to node and
		// are kept once.
		o.ObjectMeta = metav1.ObjectMeta{
			Name: o.Name, ResourceVersion: o.ResourceVersion,
			Labels:      interned(o.Labels, ""),
			Annotations: interned(o.Annotations, mcoPrefix),
		}
	}
	o.OwnerReferences = nil
}

// interned copies the entries of m whose key starts with prefix, each key
// and value kept once for the whole process.
func interned(m map[string]string, prefix string) map[string]string {
	var out map[string]string
	for k, v := range m {
		if strings.HasPrefix(k, prefix) {
			if out == nil {
				out = make(map[string]string, len(m))
			}
			out[intern(k)] = intern(v)
		}
	}
	return out
}

func intern(s string) string { return unique.Make(s).Value() }

// trimMachineConfigNode keeps the node's name and, of its conditions, the
// type, status and transition time (the update phase and since when, which
// diagnose reports) and only for
// analysis.MCNFailureConditions the reason and message (the cause of a
// failure): a MachineConfigNode has a dozen conditions, each with a
// message, and there is one per node.
func trimMachineConfigNode(m *mcfgv1.MachineConfigNode) {
	conds := m.Status.Conditions
	for i := range conds {
		c := conds[i]
		conds[i] = metav1.Condition{Type: intern(c.Type), Status: metav1.ConditionStatus(intern(string(c.Status))), LastTransitionTime: c.LastTransitionTime}
		if slices.Contains(analysis.MCNFailureConditions, c.Type) {
			conds[i].Reason, conds[i].Message = c.Reason, c.Message
		}
	}
	*m = mcfgv1.MachineConfigNode{
		TypeMeta:   m.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: m.Name, ResourceVersion: m.ResourceVersion},
		Status:     mcfgv1.MachineConfigNodeStatus{Conditions: conds},
	}
}

// MaxEventMessage bounds the message kept of an event: core/v1 events
// carry messages of any length (a 1 MiB message each took 310 MB for 300
// events). Its end is kept: error chains end with the innermost cause,
// which the classifier reads from the end too. The kubelet keeps as much
// of a container's termination message.
const MaxEventMessage = 4 << 10

// trimEvent keeps what the analysis reads of a Warning event: the object
// it is about, its reason, its message (clipped) and when it happened.
func trimEvent(e *corev1.Event) {
	var series *corev1.EventSeries
	if e.Series != nil {
		series = &corev1.EventSeries{LastObservedTime: e.Series.LastObservedTime}
	}
	*e = corev1.Event{
		TypeMeta: e.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name: e.Name, Namespace: e.Namespace, ResourceVersion: e.ResourceVersion,
			CreationTimestamp: e.CreationTimestamp,
		},
		InvolvedObject: corev1.ObjectReference{
			APIVersion: intern(e.InvolvedObject.APIVersion), Kind: intern(e.InvolvedObject.Kind),
			Name: e.InvolvedObject.Name, Namespace: e.InvolvedObject.Namespace,
		},
		Type:           intern(e.Type),
		Reason:         intern(headBytes(e.Reason, maxEventReason)),
		Message:        tailBytes(e.Message, MaxEventMessage),
		FirstTimestamp: e.FirstTimestamp, LastTimestamp: e.LastTimestamp, EventTime: e.EventTime,
		Series: series,
	}
}

// maxEventReason: the API server takes reasons of any length; the MCO's
// are a few words ("OperatorDegraded: MachineOSBuilderFailed").
const maxEventReason = 256

// headBytes and tailBytes keep at most n bytes of the start or the end
// of s, dropping a rune cut in two, in a string of their own: a part of
// s would keep all of s in memory.
func headBytes(s string, n int) string { return clip(s, 0, min(n, len(s))) }
func tailBytes(s string, n int) string { return clip(s, max(0, len(s)-n), len(s)) }

func clip(s string, from, to int) string {
	if from == 0 && to == len(s) {
		return s
	}
	return strings.Clone(strings.ToValidUTF8(s[from:to], ""))
}

// trimPod keeps the status (where the cause of a failed build lives, image
// names included), the labels that tie the pod to its Job, the annotation
// that ties a 4.17 bare build pod to its MachineOSBuild and the log file
// a snapshot read its termination message from, its node, and its
// restart policy (a bare pod that is never restarted failed once a
// container exited non-zero, while it still shows Running).
func trimPod(p *corev1.Pod) {
	var kept map[string]string
	for _, k := range []string{analysis.LabelMachineOSBuild, snapshot.AnnotationLogFile, snapshot.AnnotationBuilderErrors} {
		if v, ok := p.Annotations[k]; ok {
			if kept == nil {
				kept = map[string]string{}
			}
			kept[k] = v
		}
	}
	p.Annotations = kept
	p.Spec = corev1.PodSpec{NodeName: p.Spec.NodeName, RestartPolicy: p.Spec.RestartPolicy}
}
