package analysis

import (
	"sort"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Keys the MCO writes (openshift/machine-config-operator@7ff337a: pkg/controller/build/constants/constants.go,
// pkg/daemon/constants/constants.go).
const (
	prefix = "machineconfiguration.openshift.io/"

	AnnotationCurrentBuild   = prefix + "current-machine-os-build"
	AnnotationRebuild        = prefix + "rebuild"
	AnnotationPreBuiltImage  = prefix + "pre-built-image"
	LabelPreBuiltImage       = prefix + "pre-built-image"
	LabelTargetPool          = prefix + "target-machine-config-pool"
	LabelRenderedConfig      = prefix + "rendered-machine-config"
	LabelMachineOSConfig     = prefix + "machine-os-config"
	LabelMachineOSBuild      = prefix + "machine-os-build"
	LabelOnClusterLayering   = prefix + "on-cluster-layering"
	LabelEphemeralObject     = prefix + "ephemeral-build-object"
	LabelLayeringEnabledPool = prefix + "layering-enabled"
	// LabelBuildPod416 marks the build pod of OpenShift 4.16, which
	// carried none of the labels above (release-4.16
	// pkg/controller/common/constants.go OSImageBuildPodLabel).
	LabelBuildPod416 = prefix + "buildPod"

	NodeAnnotationCurrentConfig = prefix + "currentConfig"
	NodeAnnotationDesiredConfig = prefix + "desiredConfig"
	NodeAnnotationCurrentImage  = prefix + "currentImage"
	NodeAnnotationDesiredImage  = prefix + "desiredImage"
	NodeAnnotationState         = prefix + "state"
	NodeAnnotationReason        = prefix + "reason"

	// DefaultBasePullSecret is what the MCO uses when a MachineOSConfig has
	// no baseImagePullSecret: a copy of openshift-config/pull-secret.
	DefaultBasePullSecret = "global-pull-secret-copy"

	// ConditionSeeded is the MachineOSConfig condition of a pre-built image.
	ConditionSeeded = "Seeded"

	masterPool = "master"
	workerPool = "worker"

	// labelOS is the kubelet's OS label; the MCO skips Windows nodes.
	labelOS = "kubernetes.io/os"
)

// FindCondition returns the condition of the given type, or nil.
func FindCondition(conds []metav1.Condition, condType string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == condType {
			return &conds[i]
		}
	}
	return nil
}

// ConditionTrue reports whether the condition of the given type is True.
func ConditionTrue(conds []metav1.Condition, condType string) bool {
	c := FindCondition(conds, condType)
	return c != nil && c.Status == metav1.ConditionTrue
}

// FindPoolCondition returns the pool condition of the given type, or nil.
func FindPoolCondition(p *mcfgv1.MachineConfigPool, condType mcfgv1.MachineConfigPoolConditionType) *mcfgv1.MachineConfigPoolCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == condType {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// PoolConditionTrue reports whether the pool condition is True.
func PoolConditionTrue(p *mcfgv1.MachineConfigPool, condType mcfgv1.MachineConfigPoolConditionType) bool {
	c := FindPoolCondition(p, condType)
	return c != nil && c.Status == corev1.ConditionTrue
}

// Pool returns the MachineConfigPool of that name, or nil.
func (c *Cluster) Pool(name string) *mcfgv1.MachineConfigPool {
	for _, p := range c.MachineConfigPools {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// MachineOSConfigForPool returns the pool's MachineOSConfig, or nil when the
// pool is not layered. The API allows one per pool.
func (c *Cluster) MachineOSConfigForPool(pool string) *mcfgv1.MachineOSConfig {
	for _, m := range c.MachineOSConfigs {
		if m.Spec.MachineConfigPool.Name == pool {
			return m
		}
	}
	return nil
}

// BuildsFor returns the MachineOSBuilds of a MachineOSConfig, newest first.
func (c *Cluster) BuildsFor(mosc string) []*mcfgv1.MachineOSBuild {
	var out []*mcfgv1.MachineOSBuild
	for _, b := range c.MachineOSBuilds {
		if b.Spec.MachineOSConfig.Name == mosc {
			out = append(out, b)
		}
	}
	newestFirst(out)
	return out
}

// newestFirst sorts builds by creation, newest first, then by name.
func newestFirst(builds []*mcfgv1.MachineOSBuild) {
	sort.SliceStable(builds, func(i, j int) bool {
		ti, tj := builds[i].CreationTimestamp, builds[j].CreationTimestamp
		if ti.Equal(&tj) {
			return builds[i].Name < builds[j].Name
		}
		return tj.Before(&ti)
	})
}

// CurrentBuild is the MachineOSBuild that decides a layered pool's image, as
// the MCO picks it: the one named by the current-machine-os-build
// annotation, else the one for the pool's rendered config, else the newest.
// It is nil before the first build exists.
func (c *Cluster) CurrentBuild(mosc *mcfgv1.MachineOSConfig) *mcfgv1.MachineOSBuild {
	builds := c.BuildsFor(mosc.Name)
	if name := mosc.Annotations[AnnotationCurrentBuild]; name != "" {
		for _, b := range builds {
			if b.Name == name {
				return b
			}
		}
	}
	if p := c.Pool(mosc.Spec.MachineConfigPool.Name); p != nil {
		for _, b := range builds {
			if b.Spec.MachineConfig.Name == p.Spec.Configuration.Name {
				return b
			}
		}
	}
	if len(builds) > 0 {
		return builds[0]
	}
	return nil
}

// NewestBuildForPool is the newest MachineOSBuild of mosc for its pool's
// current rendered config: the build the pool waits for. It differs from
// CurrentBuild while the MCO has not made it current, as when startBuild
// fails a build whose Containerfile does not validate before it creates a
// Job, and returns before updateMachineOSConfigStatus annotates it
// (openshift/machine-config-operator@7ff337a,
// pkg/controller/build/reconciler.go). Nil when the pool is unknown or has
// no build for its config.
func (c *Cluster) NewestBuildForPool(mosc *mcfgv1.MachineOSConfig) *mcfgv1.MachineOSBuild {
	p := c.Pool(mosc.Spec.MachineConfigPool.Name)
	if p == nil || p.Spec.Configuration.Name == "" {
		return nil
	}
	for _, b := range c.BuildsFor(mosc.Name) { // newest first
		if b.Spec.MachineConfig.Name == p.Spec.Configuration.Name {
			return b
		}
	}
	return nil
}

// PoolOfNode returns the pool the MCO manages a node with, or "" when none
// does. Matching many nodes, use NodePools once and PoolOf per node.
func (c *Cluster) PoolOfNode(nodeLabels map[string]string) string {
	return c.NodePools().PoolOf(nodeLabels)
}

// NodePools are the pools' node selectors, parsed once: parsing a selector
// costs far more than matching it, and a scrape matches every node.
type NodePools []poolSelector

type poolSelector struct {
	name string
	sel  labels.Selector
}

// NodePools parses every pool's node selector. Like the MCO, a pool with a
// nil, empty or invalid selector matches nothing.
func (c *Cluster) NodePools() NodePools {
	out := make(NodePools, 0, len(c.MachineConfigPools))
	for _, p := range c.MachineConfigPools {
		if p.Spec.NodeSelector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.NodeSelector)
		if err != nil || sel.Empty() {
			continue
		}
		out = append(out, poolSelector{name: p.Name, sel: sel})
	}
	return out
}

// PoolOf returns the pool the MCO manages a node with, as its
// GetPrimaryPoolForNode decides: a custom pool wins over worker, master wins
// over worker and over a custom pool, and a node in two custom pools or a
// Windows node is managed by none ("").
func (ps NodePools) PoolOf(nodeLabels map[string]string) string {
	if nodeLabels[labelOS] == "windows" {
		return ""
	}
	set := labels.Set(nodeLabels)
	custom := ""
	customs, master, worker := 0, false, false
	for _, p := range ps {
		if !p.sel.Matches(set) {
			continue
		}
		switch p.name {
		case masterPool:
			master = true
		case workerPool:
			worker = true
		default:
			custom = p.name
			customs++
		}
	}
	switch {
	case customs > 1:
		return "" // the MCO refuses to manage such a node
	case master:
		return masterPool
	case customs == 1:
		return custom
	case worker:
		return workerPool
	}
	return ""
}
