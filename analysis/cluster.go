// Package analysis turns one read-only view of the OCL objects into findings:
// pure functions, objects in and facts out, so every rule is testable without
// a cluster. The collectors turn findings into metrics.
package analysis

import (
	"time"

	configv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Cluster is one consistent-enough view of everything the exporter watches.
// The slices point into informer caches: readers must never modify them.
//
// The sources narrow what they watch (namespaces, label and field selectors)
// to keep memory flat, but an offline snapshot may hold more than a live
// watch would, so analysis must select what it needs by name, namespace and
// label itself and never rely on the sources' filters for correctness.
type Cluster struct {
	// Namespace is the Machine Config Operator's namespace, where secrets,
	// build Jobs, Pods and ephemeral objects live.
	Namespace string
	// Now is the evaluation time (the scrape, or a fixed time in tests).
	Now time.Time

	MachineOSConfigs   []*mcfgv1.MachineOSConfig
	MachineOSBuilds    []*mcfgv1.MachineOSBuild
	MachineConfigPools []*mcfgv1.MachineConfigPool
	MachineConfigNodes []*mcfgv1.MachineConfigNode
	ClusterOperators   []*configv1.ClusterOperator

	// Metadata only: the exporter never reads Secret data, and names,
	// labels and annotations are all it needs of the others.
	Nodes          []*metav1.PartialObjectMetadata
	MachineConfigs []*metav1.PartialObjectMetadata
	Secrets        []*metav1.PartialObjectMetadata
	ConfigMaps     []*metav1.PartialObjectMetadata

	Jobs        []*batchv1.Job
	Pods        []*corev1.Pod
	Deployments []*appsv1.Deployment
	// Events are the Warning events of the MCO namespace.
	Events []*corev1.Event

	// BuilderPods are the machine-os-builder Deployment's pods.
	BuilderPods []*corev1.Pod
	// ObjectEvents are the Warning events about the MCO's cluster-scoped
	// objects (MachineOSConfig, MachineOSBuild), in namespace default.
	ObjectEvents []*corev1.Event

	// NotCaptured holds the kinds ("Secret", "Deployment") an offline
	// snapshot does not hold at all, or, live, that the view may not
	// list: their objects are unknown, not absent, and no finding may
	// conclude from their absence. For a kind captured empty it is unset.
	NotCaptured map[string]bool
}

// Captured reports whether the view holds kind's objects, so that an
// absent object of that kind is really absent.
func (c *Cluster) Captured(kind string) bool { return !c.NotCaptured[kind] }
