package snapshot

import (
	"reflect"
	"slices"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ocl-exporter/ocl_exporter/analysis"
)

// Label and object names the MCO uses (openshift/machine-config-operator@7ff337a:
// pkg/controller/build/constants/constants.go, pkg/controller/build/utils/
// selectors.go GetMachineOSBuildLabels, buildrequest.go
// getLabelsForObjectMeta).
const (
	// LabelOnClusterLayering marks every ephemeral object a build creates.
	LabelOnClusterLayering = "machineconfiguration.openshift.io/on-cluster-layering"
	// LabelJobName is set by the Job controller on the pods it creates; the
	// build pods' own template carries no MCO labels.
	LabelJobName = "job-name"
	// ClusterOperatorName is the MCO's ClusterOperator.
	ClusterOperatorName = "machine-config"
	// BuilderDeploymentName is the machine-os-builder Deployment.
	BuilderDeploymentName = "machine-os-builder"
	// DefaultNamespace is where the MCO runs.
	DefaultNamespace = "openshift-machine-config-operator"
	// EventNamespace is where events about cluster-scoped objects go.
	EventNamespace = metav1.NamespaceDefault
	// LabelBuilderPod selects the machine-os-builder's pods
	// (manifests/machineosbuilder/deployment.yaml).
	LabelBuilderPod = "k8s-app=machine-os-builder"
)

// Resource is one thing the exporter lists and watches. The table below is
// the single source of truth for what the exporter reads: the informers,
// kubeapi's scheme, the availability metrics, the kinds a snapshot is read
// for, the rules of deploy/base/rbac.yaml (make generate) and the
// must-gathers the tests write are all derived from it.
type Resource struct {
	// Name is the resource as RBAC spells it: "plural" or "plural.group".
	Name string
	GVR  schema.GroupVersionResource
	// Kind is the kind of its objects.
	Kind string
	// Namespaced resources are watched in the MCO namespace only, or in
	// Namespace when set.
	Namespaced bool
	Namespace  string
	// Part marks a second watch of a resource already watched, for the
	// objects the first cannot select (another namespace, another label);
	// Name is then "<resource>@<part>". A part adds evidence: a part a
	// snapshot did not capture makes no kind unknown.
	Part string
	// MetadataOnly resources are read through the metadata API: the
	// exporter never receives their spec, status or data.
	MetadataOnly bool
	// Selectors narrow the watch server-side to keep memory flat.
	LabelSelector string
	FieldSelector string
	// Max, when set, caps the objects kept: the newest Max (source/held.go).
	Max int
	// CRD is the file of the kind's CustomResourceDefinition in the
	// openshift/api module the exporter is built with ("" for a kind the
	// API server serves itself): the integration suites install these.
	CRD string
	// GatheredFrom is the first release 4.GatheredFrom whose must-gather
	// image gathers the resource cluster-wide, one file per object
	// (openshift/must-gather collection-scripts gather and gather_ppc;
	// 0 for namespaced resources, known by the <Kind>List files inspect
	// writes for each namespace it gathers).
	GatheredFrom int
	// NeverNone resources exist in every cluster (its nodes, its
	// ClusterOperators, the master and worker pools and their
	// MachineConfigs): a must-gather that gathers them and holds none lost
	// them after the gather.
	NeverNone bool

	newObject func() runtime.Object
	newList   func() runtime.Object
	// store puts the informer's items into their field of the view.
	store func(c *analysis.Cluster, items []any)
}

func gvr(group, version, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
}

// Resources returns the watched resources in a stable order.
func Resources() []Resource {
	return []Resource{
		// gather_ppc gathers MachineOSConfigs and MachineOSBuilds from
		// release-4.18, MachineConfigNodes from release-4.19.
		gathered(18, false, withCRD(mcoCRD+"machineosconfigs.crd.yaml", typed("machineosconfigs.machineconfiguration.openshift.io", mcfgv1.GroupVersion.WithResource("machineosconfigs"), false,
			func(c *analysis.Cluster) *[]*mcfgv1.MachineOSConfig { return &c.MachineOSConfigs },
			func() runtime.Object { return &mcfgv1.MachineOSConfigList{} }))),
		gathered(18, false, withCRD(mcoCRD+"machineosbuilds.crd.yaml", typed("machineosbuilds.machineconfiguration.openshift.io", mcfgv1.GroupVersion.WithResource("machineosbuilds"), false,
			func(c *analysis.Cluster) *[]*mcfgv1.MachineOSBuild { return &c.MachineOSBuilds },
			func() runtime.Object { return &mcfgv1.MachineOSBuildList{} }))),
		// Pools and MachineConfigs through the machine-config
		// ClusterOperator's relatedObjects (machine-config-operator
		// pkg/operator/status.go syncRelatedObjects), every release.
		gathered(16, true, withCRD(mcoCRD+"machineconfigpools.crd.yaml", typed("machineconfigpools.machineconfiguration.openshift.io", mcfgv1.GroupVersion.WithResource("machineconfigpools"), false,
			func(c *analysis.Cluster) *[]*mcfgv1.MachineConfigPool { return &c.MachineConfigPools },
			func() runtime.Object { return &mcfgv1.MachineConfigPoolList{} }))),
		// The TechPreviewNoUpgrade CRD: its configImage fields are what the
		// ImageModeStatusReporting fixtures use.
		gathered(19, false, withCRD(mcoCRD+"machineconfignodes-TechPreviewNoUpgrade.crd.yaml", typed("machineconfignodes.machineconfiguration.openshift.io", mcfgv1.GroupVersion.WithResource("machineconfignodes"), false,
			func(c *analysis.Cluster) *[]*mcfgv1.MachineConfigNode { return &c.MachineConfigNodes },
			func() runtime.Object { return &mcfgv1.MachineConfigNodeList{} }))),
		// Nodes and ClusterOperators by gather, every release.
		gathered(16, true, withCRD("config/v1/zz_generated.crd-manifests/0000_00_cluster-version-operator_01_clusteroperators.crd.yaml",
			withFieldSelector("metadata.name="+ClusterOperatorName, typed("clusteroperators.config.openshift.io", configv1.GroupVersion.WithResource("clusteroperators"), false,
				func(c *analysis.Cluster) *[]*configv1.ClusterOperator { return &c.ClusterOperators },
				func() runtime.Object { return &configv1.ClusterOperatorList{} })))),
		gathered(16, true, metadataOnly("nodes", gvr("", "v1", "nodes"), "Node", false, "", func(c *analysis.Cluster) *[]*metav1.PartialObjectMetadata { return &c.Nodes })),
		gathered(16, true, withCRD(mcoCRD+"machineconfigs.crd.yaml", metadataOnly("machineconfigs.machineconfiguration.openshift.io", mcfgv1.GroupVersion.WithResource("machineconfigs"), "MachineConfig", false, "",
			func(c *analysis.Cluster) *[]*metav1.PartialObjectMetadata { return &c.MachineConfigs }))),
		metadataOnly("secrets", gvr("", "v1", "secrets"), "Secret", true, "", func(c *analysis.Cluster) *[]*metav1.PartialObjectMetadata { return &c.Secrets }),
		metadataOnly("configmaps", gvr("", "v1", "configmaps"), "ConfigMap", true, LabelOnClusterLayering,
			func(c *analysis.Cluster) *[]*metav1.PartialObjectMetadata { return &c.ConfigMaps }),
		withLabelSelector(LabelOnClusterLayering, typed("jobs.batch", gvr("batch", "v1", "jobs"), true,
			func(c *analysis.Cluster) *[]*batchv1.Job { return &c.Jobs },
			func() runtime.Object { return &batchv1.JobList{} })),
		withLabelSelector(LabelJobName, buildPods()),
		// 4.16 and 4.17 ran a build in one bare pod that no Job labels
		// (docs/versions.md): 4.16's carries the buildPod label, 4.17's the
		// on-cluster-layering one its other ephemeral objects carry. Both
		// watches are empty from 4.18 on.
		part("build-4.16", "", withLabelSelector(analysis.LabelBuildPod416, buildPods())),
		part("build-4.17", "", withLabelSelector(LabelOnClusterLayering+",!"+LabelJobName, buildPods())),
		withFieldSelector("metadata.name="+BuilderDeploymentName, deployments()),
		// The controller's image is the release's MCO image, which the
		// builder's must match after an upgrade (OCPBUGS-56220).
		part(analysis.MachineConfigControllerName, "", withFieldSelector("metadata.name="+analysis.MachineConfigControllerName, deployments())),
		// Warnings about the build Jobs, in the MCO namespace: why the Job
		// controller could not create a pod, or gave up.
		withFieldSelector(warningsAbout("involvedObject.kind=Job"), events()),
		// The kubelet's own account of the builder (CrashLoopBackOff, its
		// last crash's log tail): the Deployment's status says only "not
		// ready".
		part("machine-os-builder", "", withLabelSelector(LabelBuilderPod, typed("pods", gvr("", "v1", "pods"), true,
			func(c *analysis.Cluster) *[]*corev1.Pod { return &c.BuilderPods },
			func() runtime.Object { return &corev1.PodList{} }))),
		// The kubelet's Warnings about pods in the MCO namespace (a build
		// pod's failed pull, mount or eviction), except the BackOff and
		// Unhealthy of crashlooping or unready pods: build pods are never
		// restarted and have no probes, and a BackOff of a pull only
		// repeats the Failed event that holds the cause.
		part("pods", "", withFieldSelector(warningsAbout("involvedObject.kind=Pod,reason!=BackOff,reason!=Unhealthy"), events())),
		// The operator's Warnings ("OperatorDegraded: <Task>Failed") are
		// about its ClusterOperator, recorded in the MCO namespace
		// (ctrlcommon.NamespacedEventRecorder) and without a kind when the
		// operator read it from a watch: selected by its name.
		part(ClusterOperatorName, "", withFieldSelector(warningsAbout("involvedObject.name="+ClusterOperatorName), events())),
		// The build controller records the events of MachineOSConfigs and
		// MachineOSBuilds, cluster-scoped, in namespace default, where the
		// kubelet also records every node's and the node controller
		// every pool's: only Warnings about those two kinds are read.
		part(EventNamespace, EventNamespace, withFieldSelector(objectWarnings(analysis.KindMachineOSBuild), objectEvents())),
		part(EventNamespace+"-"+strings.ToLower(analysis.KindMachineOSConfig), EventNamespace,
			withFieldSelector(objectWarnings(analysis.KindMachineOSConfig), objectEvents())),
	}
}

// MaxEvents is how many events one watch of events keeps, the newest by
// when they last happened. Anyone who may post an event can post any
// number, and a crashlooping pod posts them for as long as it crashes: an
// event storm that passes the selectors must not grow the exporter. The
// analysis reads the newest events about a build, a MachineOSConfig or the
// operator; at 5 KiB each at most (messages are clipped), a watch's events
// stay under 5 MiB.
const MaxEvents = 1000

// mcoCRD is where the openshift/api module keeps the MCO's CRDs.
const mcoCRD = "machineconfiguration/v1/zz_generated.crd-manifests/0000_80_machine-config_01_"

func withCRD(file string, r Resource) Resource {
	r.CRD = file
	return r
}

// gathered notes the first release whose must-gather gathers r, and
// whether every cluster has some.
func gathered(from int, neverNone bool, r Resource) Resource {
	r.GatheredFrom, r.NeverNone = from, neverNone
	return r
}

// events are the Warning events of the MCO namespace, objectEvents those
// about the MCO's cluster-scoped objects in namespace default; a watch
// keeps the newest MaxEvents.
func events() Resource {
	return eventsIn(func(c *analysis.Cluster) *[]*corev1.Event { return &c.Events })
}
func objectEvents() Resource {
	return eventsIn(func(c *analysis.Cluster) *[]*corev1.Event { return &c.ObjectEvents })
}

func eventsIn(field func(*analysis.Cluster) *[]*corev1.Event) Resource {
	r := typed("events", gvr("", "v1", "events"), true, field, func() runtime.Object { return &corev1.EventList{} })
	r.Max = MaxEvents
	return r
}

// warningsAbout selects the Warning events that also match selector.
func warningsAbout(selector string) string { return "type=" + corev1.EventTypeWarning + "," + selector }

// objectWarnings selects the Warning events about the MCO's objects of kind.
func objectWarnings(kind string) string {
	return warningsAbout("involvedObject.apiVersion=" + mcfgv1.GroupVersion.String() + ",involvedObject.kind=" + kind)
}

// typed watches the kind T (a pointer to E, whose type name is the kind, as
// in every generated API package) and stores it in the view's field.
func typed[E any, T interface {
	*E
	runtime.Object
}](name string, r schema.GroupVersionResource, namespaced bool, field func(*analysis.Cluster) *[]T, newList func() runtime.Object) Resource {
	return Resource{
		Name: name, GVR: r, Kind: reflect.TypeFor[E]().Name(), Namespaced: namespaced,
		newObject: func() runtime.Object { return T(new(E)) },
		newList:   newList,
		store:     storeIn(field),
	}
}

func metadataOnly(name string, r schema.GroupVersionResource, kind string, namespaced bool, labelSelector string, field func(*analysis.Cluster) *[]*metav1.PartialObjectMetadata) Resource {
	return Resource{
		Name: name, GVR: r, Kind: kind, Namespaced: namespaced, MetadataOnly: true, LabelSelector: labelSelector,
		newObject: func() runtime.Object { return &metav1.PartialObjectMetadata{} },
		newList:   func() runtime.Object { return &metav1.PartialObjectMetadataList{} },
		store:     storeIn(field),
	}
}

// buildPods are the pods builds run in.
func buildPods() Resource {
	return typed("pods", gvr("", "v1", "pods"), true,
		func(c *analysis.Cluster) *[]*corev1.Pod { return &c.Pods },
		func() runtime.Object { return &corev1.PodList{} })
}

// deployments are read one by name, per watch: RBAC grants them by name.
func deployments() Resource {
	return typed("deployments.apps", gvr("apps", "v1", "deployments"), true,
		func(c *analysis.Cluster) *[]*appsv1.Deployment { return &c.Deployments },
		func() runtime.Object { return &appsv1.DeploymentList{} })
}

// storeIn adds an informer's items, all of type T, to field, which several
// watches of one resource (parts) may share.
func storeIn[T any](field func(*analysis.Cluster) *[]T) func(*analysis.Cluster, []any) {
	return func(c *analysis.Cluster, items []any) {
		out := slices.Grow(*field(c), len(items))
		for _, it := range items {
			if t, ok := it.(T); ok {
				out = append(out, t)
			}
		}
		*field(c) = out
	}
}

// part makes r a second watch of its resource, in namespace when set.
func part(name, namespace string, r Resource) Resource {
	r.Part, r.Namespace = name, namespace
	r.Name += "@" + name
	return r
}

func withLabelSelector(s string, r Resource) Resource { r.LabelSelector = s; return r }
func withFieldSelector(s string, r Resource) Resource { r.FieldSelector = s; return r }

// NewObject returns an empty object of r's kind, as its informer holds it.
func (r Resource) NewObject() runtime.Object { return r.newObject() }

// NewList returns an empty list of r's objects.
func (r Resource) NewList() runtime.Object { return r.newList() }

// Store adds items, an informer's objects of r, to their field of c.
func (r Resource) Store(c *analysis.Cluster, items []any) { r.store(c, items) }

// WatchNamespace is where r is watched, given the MCO namespace: "" for
// all.
func (r Resource) WatchNamespace(mco string) string {
	switch {
	case !r.Namespaced:
		return ""
	case r.Namespace != "":
		return r.Namespace
	}
	return mco
}
