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
	list      func(ctx context.Context, c *Clients, ns string, o metav1.ListOptions) (runtime.Object, error)
	watch     func(ctx context.Context, c *Clients, ns string, o metav1.ListOptions) (watch.Interface, error)
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
			func() runtime.Object { return &mcfgv1.MachineOSConfig{} },
			func(c *Clients, _ string) listWatcher[*mcfgv1.MachineOSConfigList] { return mcfg(c).MachineOSConfigs() }),
		typed("machineosbuilds.machineconfiguration.openshift.io", mcfgv1.GroupVersion.WithResource("machineosbuilds"), false,
			func() runtime.Object { return &mcfgv1.MachineOSBuild{} },
			func(c *Clients, _ string) listWatcher[*mcfgv1.MachineOSBuildList] { return mcfg(c).MachineOSBuilds() }),
		typed("machineconfigpools.machineconfiguration.openshift.io", mcfgv1.GroupVersion.WithResource("machineconfigpools"), false,
			func() runtime.Object { return &mcfgv1.MachineConfigPool{} },
			func(c *Clients, _ string) listWatcher[*mcfgv1.MachineConfigPoolList] {
				return mcfg(c).MachineConfigPools()
			}),
		typed("machineconfignodes.machineconfiguration.openshift.io", mcfgv1.GroupVersion.WithResource("machineconfignodes"), false,
			func() runtime.Object { return &mcfgv1.MachineConfigNode{} },
			func(c *Clients, _ string) listWatcher[*mcfgv1.MachineConfigNodeList] {
				return mcfg(c).MachineConfigNodes()
			}),
		withFieldSelector("metadata.name="+ClusterOperatorName, typed("clusteroperators.config.openshift.io", configv1.GroupVersion.WithResource("clusteroperators"), false,
			func() runtime.Object { return &configv1.ClusterOperator{} },
			func(c *Clients, _ string) listWatcher[*configv1.ClusterOperatorList] {
				return c.Config.ConfigV1().ClusterOperators()
			})),
		metadataOnly("nodes", gvr("", "v1", "nodes"), false, ""),
		metadataOnly("machineconfigs.machineconfiguration.openshift.io", mcfgv1.GroupVersion.WithResource("machineconfigs"), false, ""),
		metadataOnly("secrets", gvr("", "v1", "secrets"), true, ""),
		metadataOnly("configmaps", gvr("", "v1", "configmaps"), true, LabelOnClusterLayering),
		withLabelSelector(LabelOnClusterLayering, typed("jobs.batch", gvr("batch", "v1", "jobs"), true,
			func() runtime.Object { return &batchv1.Job{} },
			func(c *Clients, ns string) listWatcher[*batchv1.JobList] { return c.Kube.BatchV1().Jobs(ns) })),
		withLabelSelector(LabelJobName, typed("pods", gvr("", "v1", "pods"), true,
			func() runtime.Object { return &corev1.Pod{} },
			func(c *Clients, ns string) listWatcher[*corev1.PodList] { return c.Kube.CoreV1().Pods(ns) })),
		withFieldSelector("metadata.name="+BuilderDeploymentName, typed("deployments.apps", gvr("apps", "v1", "deployments"), true,
			func() runtime.Object { return &appsv1.Deployment{} },
			func(c *Clients, ns string) listWatcher[*appsv1.DeploymentList] {
				return c.Kube.AppsV1().Deployments(ns)
			})),
		withFieldSelector("type="+corev1.EventTypeWarning, typed("events", gvr("", "v1", "events"), true,
			func() runtime.Object { return &corev1.Event{} },
			func(c *Clients, ns string) listWatcher[*corev1.EventList] { return c.Kube.CoreV1().Events(ns) })),
	}
}

// listWatcher is what every generated typed client offers.
type listWatcher[L runtime.Object] interface {
	List(ctx context.Context, o metav1.ListOptions) (L, error)
	Watch(ctx context.Context, o metav1.ListOptions) (watch.Interface, error)
}

func typed[L runtime.Object](name string, r schema.GroupVersionResource, namespaced bool, newObject func() runtime.Object, client func(c *Clients, ns string) listWatcher[L]) Resource {
	return Resource{
		Name: name, GVR: r, Namespaced: namespaced, newObject: newObject,
		list: func(ctx context.Context, c *Clients, ns string, o metav1.ListOptions) (runtime.Object, error) {
			return client(c, ns).List(ctx, o)
		},
		watch: func(ctx context.Context, c *Clients, ns string, o metav1.ListOptions) (watch.Interface, error) {
			return client(c, ns).Watch(ctx, o)
		},
	}
}

func metadataOnly(name string, r schema.GroupVersionResource, namespaced bool, labelSelector string) Resource {
	return Resource{
		Name: name, GVR: r, Namespaced: namespaced, MetadataOnly: true, LabelSelector: labelSelector,
		newObject: func() runtime.Object { return &metav1.PartialObjectMetadata{} },
		list: func(ctx context.Context, c *Clients, ns string, o metav1.ListOptions) (runtime.Object, error) {
			return c.Metadata.Resource(r).Namespace(ns).List(ctx, o)
		},
		watch: func(ctx context.Context, c *Clients, ns string, o metav1.ListOptions) (watch.Interface, error) {
			return c.Metadata.Resource(r).Namespace(ns).Watch(ctx, o)
		},
	}
}

func withLabelSelector(s string, r Resource) Resource { r.LabelSelector = s; return r }
func withFieldSelector(s string, r Resource) Resource { r.FieldSelector = s; return r }
