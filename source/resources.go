package source

import (
	"context"

	configv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	mcfgv1client "github.com/openshift/client-go/machineconfiguration/clientset/versioned/typed/machineconfiguration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/ocl-exporter/ocl_exporter/analysis"
)

// Label and object names the MCO uses; see reference/ocl-domain.md §6.
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
)

// Resource is one thing the exporter lists and watches. The table below is
// the single source of truth for what the exporter reads: the informers, the
// availability metrics and the ClusterRole test are all derived from it.
type Resource struct {
	// Name is the resource as RBAC spells it: "plural" or "plural.group".
	Name string
	GVR  schema.GroupVersionResource
	// Namespaced resources are watched in the MCO namespace only.
	Namespaced bool
	// MetadataOnly resources are read through the metadata API: the
	// exporter never receives their spec, status or data.
	MetadataOnly bool
	// Selectors narrow the watch server-side to keep memory flat.
	LabelSelector string
	FieldSelector string

	newObject func() runtime.Object
	// store puts the informer's items into their field of the view.
	store func(c *analysis.Cluster, items []any)
	list  func(ctx context.Context, c *Clients, ns string, o metav1.ListOptions) (runtime.Object, error)
	watch func(ctx context.Context, c *Clients, ns string, o metav1.ListOptions) (watch.Interface, error)
}

func gvr(group, version, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
}

// Resources returns the watched resources in a stable order.
func Resources() []Resource {
	mcfg := func(c *Clients) mcfgv1client.MachineconfigurationV1Interface {
		return c.MachineConfig.MachineconfigurationV1()
	}
	return []Resource{
		typed("machineosconfigs.machineconfiguration.openshift.io", mcfgv1.GroupVersion.WithResource("machineosconfigs"), false,
			func(c *analysis.Cluster) *[]*mcfgv1.MachineOSConfig { return &c.MachineOSConfigs },
			func(c *Clients, _ string) listWatcher[*mcfgv1.MachineOSConfigList] { return mcfg(c).MachineOSConfigs() }),
		typed("machineosbuilds.machineconfiguration.openshift.io", mcfgv1.GroupVersion.WithResource("machineosbuilds"), false,
			func(c *analysis.Cluster) *[]*mcfgv1.MachineOSBuild { return &c.MachineOSBuilds },
			func(c *Clients, _ string) listWatcher[*mcfgv1.MachineOSBuildList] { return mcfg(c).MachineOSBuilds() }),
		typed("machineconfigpools.machineconfiguration.openshift.io", mcfgv1.GroupVersion.WithResource("machineconfigpools"), false,
			func(c *analysis.Cluster) *[]*mcfgv1.MachineConfigPool { return &c.MachineConfigPools },
			func(c *Clients, _ string) listWatcher[*mcfgv1.MachineConfigPoolList] {
				return mcfg(c).MachineConfigPools()
			}),
		typed("machineconfignodes.machineconfiguration.openshift.io", mcfgv1.GroupVersion.WithResource("machineconfignodes"), false,
			func(c *analysis.Cluster) *[]*mcfgv1.MachineConfigNode { return &c.MachineConfigNodes },
			func(c *Clients, _ string) listWatcher[*mcfgv1.MachineConfigNodeList] {
				return mcfg(c).MachineConfigNodes()
			}),
		withFieldSelector("metadata.name="+ClusterOperatorName, typed("clusteroperators.config.openshift.io", configv1.GroupVersion.WithResource("clusteroperators"), false,
			func(c *analysis.Cluster) *[]*configv1.ClusterOperator { return &c.ClusterOperators },
			func(c *Clients, _ string) listWatcher[*configv1.ClusterOperatorList] {
				return c.Config.ConfigV1().ClusterOperators()
			})),
		metadataOnly("nodes", gvr("", "v1", "nodes"), false, "", func(c *analysis.Cluster) *[]*metav1.PartialObjectMetadata { return &c.Nodes }),
		metadataOnly("machineconfigs.machineconfiguration.openshift.io", mcfgv1.GroupVersion.WithResource("machineconfigs"), false, "",
			func(c *analysis.Cluster) *[]*metav1.PartialObjectMetadata { return &c.MachineConfigs }),
		metadataOnly("secrets", gvr("", "v1", "secrets"), true, "", func(c *analysis.Cluster) *[]*metav1.PartialObjectMetadata { return &c.Secrets }),
		metadataOnly("configmaps", gvr("", "v1", "configmaps"), true, LabelOnClusterLayering,
			func(c *analysis.Cluster) *[]*metav1.PartialObjectMetadata { return &c.ConfigMaps }),
		withLabelSelector(LabelOnClusterLayering, typed("jobs.batch", gvr("batch", "v1", "jobs"), true,
			func(c *analysis.Cluster) *[]*batchv1.Job { return &c.Jobs },
			func(c *Clients, ns string) listWatcher[*batchv1.JobList] { return c.Kube.BatchV1().Jobs(ns) })),
		withLabelSelector(LabelJobName, typed("pods", gvr("", "v1", "pods"), true,
			func(c *analysis.Cluster) *[]*corev1.Pod { return &c.Pods },
			func(c *Clients, ns string) listWatcher[*corev1.PodList] { return c.Kube.CoreV1().Pods(ns) })),
		withFieldSelector("metadata.name="+BuilderDeploymentName, typed("deployments.apps", gvr("apps", "v1", "deployments"), true,
			func(c *analysis.Cluster) *[]*appsv1.Deployment { return &c.Deployments },
			func(c *Clients, ns string) listWatcher[*appsv1.DeploymentList] {
				return c.Kube.AppsV1().Deployments(ns)
			})),
		withFieldSelector("type="+corev1.EventTypeWarning, typed("events", gvr("", "v1", "events"), true,
			func(c *analysis.Cluster) *[]*corev1.Event { return &c.Events },
			func(c *Clients, ns string) listWatcher[*corev1.EventList] { return c.Kube.CoreV1().Events(ns) })),
	}
}

// listWatcher is what every generated typed client offers.
type listWatcher[L runtime.Object] interface {
	List(ctx context.Context, o metav1.ListOptions) (L, error)
	Watch(ctx context.Context, o metav1.ListOptions) (watch.Interface, error)
}

// typed watches the kind T (a pointer to E) through its typed client and
// stores it in the view's field.
func typed[E any, T interface {
	*E
	runtime.Object
}, L runtime.Object](name string, r schema.GroupVersionResource, namespaced bool, field func(*analysis.Cluster) *[]T, client func(c *Clients, ns string) listWatcher[L]) Resource {
	return Resource{
		Name: name, GVR: r, Namespaced: namespaced,
		newObject: func() runtime.Object { return T(new(E)) },
		store:     storeIn(field),
		list: func(ctx context.Context, c *Clients, ns string, o metav1.ListOptions) (runtime.Object, error) {
			return client(c, ns).List(ctx, o)
		},
		watch: func(ctx context.Context, c *Clients, ns string, o metav1.ListOptions) (watch.Interface, error) {
			return client(c, ns).Watch(ctx, o)
		},
	}
}

func metadataOnly(name string, r schema.GroupVersionResource, namespaced bool, labelSelector string, field func(*analysis.Cluster) *[]*metav1.PartialObjectMetadata) Resource {
	return Resource{
		Name: name, GVR: r, Namespaced: namespaced, MetadataOnly: true, LabelSelector: labelSelector,
		newObject: func() runtime.Object { return &metav1.PartialObjectMetadata{} },
		store:     storeIn(field),
		list: func(ctx context.Context, c *Clients, ns string, o metav1.ListOptions) (runtime.Object, error) {
			return c.Metadata.Resource(r).Namespace(ns).List(ctx, o)
		},
		watch: func(ctx context.Context, c *Clients, ns string, o metav1.ListOptions) (watch.Interface, error) {
			return c.Metadata.Resource(r).Namespace(ns).Watch(ctx, o)
		},
	}
}

// storeIn stores an informer's items, all of type T, in field.
func storeIn[T any](field func(*analysis.Cluster) *[]T) func(*analysis.Cluster, []any) {
	return func(c *analysis.Cluster, items []any) {
		out := make([]T, 0, len(items))
		for _, it := range items {
			if t, ok := it.(T); ok {
				out = append(out, t)
			}
		}
		*field(c) = out
	}
}

func withLabelSelector(s string, r Resource) Resource { r.LabelSelector = s; return r }
func withFieldSelector(s string, r Resource) Resource { r.FieldSelector = s; return r }
