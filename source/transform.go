package source

import (
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// mcoPrefix is the prefix of every MCO label and annotation on nodes.
const mcoPrefix = "machineconfiguration.openshift.io/"

// transformFor trims objects before they enter the cache: memory must stay
// flat as nodes grow, and nothing is kept that no analysis reads.
func transformFor(r Resource) cache.TransformFunc {
	return func(obj any) (any, error) {
		if m, ok := obj.(metav1.Object); ok {
			m.SetManagedFields(nil)
		}
		switch o := obj.(type) {
		case *metav1.PartialObjectMetadata:
			trimMetadata(r.GVR.Resource, o)
		case *corev1.Pod:
			trimPod(o)
		case *batchv1.Job:
			o.Spec.Template = corev1.PodTemplateSpec{}
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
		// Nodes carry large annotations (CSI, OVN, ...); only the MCO's
		// matter here.
		o.Annotations = keepPrefixed(o.Annotations, mcoPrefix)
	}
	o.OwnerReferences = nil
}

func keepPrefixed(m map[string]string, prefix string) map[string]string {
	var out map[string]string
	for k, v := range m {
		if strings.HasPrefix(k, prefix) {
			if out == nil {
				out = make(map[string]string)
			}
			out[k] = v
		}
	}
	return out
}

// trimPod keeps the status (where the cause of a failed build lives, image
// names included), the labels that tie the pod to its Job, and its node.
func trimPod(p *corev1.Pod) {
	p.Annotations = nil
	p.Spec = corev1.PodSpec{NodeName: p.Spec.NodeName}
}
