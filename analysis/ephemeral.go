package analysis

import (
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Kinds of the ephemeral objects a build leaves behind when it fails.
const (
	KindConfigMap = "ConfigMap"
	KindSecret    = "Secret"
	KindJob       = "Job"

	// Kinds whose absence other findings read, for Cluster.Captured.
	KindDeployment        = "Deployment"
	KindMachineConfigPool = "MachineConfigPool"
	KindMachineConfig     = "MachineConfig"
	KindPod               = "Pod"
	KindMachineOSConfig   = "MachineOSConfig"
	KindMachineConfigNode = "MachineConfigNode"
	KindClusterOperator   = "ClusterOperator"
)

// EphemeralKinds lists the kinds counted, in a stable order.
var EphemeralKinds = []string{KindConfigMap, KindSecret, KindJob}

// ephemeralPrefixes are the name prefixes of a build's objects
// (openshift/machine-config-operator@7ff337a: pkg/controller/build/utils/helpers.go), read only when the
// machine-os-build label and annotation are both missing.
var ephemeralPrefixes = []string{
	"containerfile-", "mc-", "additionaltrustbundle-", "etc-policy-",
	"etc-registries-", "digest-", "base-", "final-", buildJobPrefix,
}

// EphemeralCount is how many objects of one kind a build still has.
type EphemeralCount struct {
	MachineOSBuild string
	Kind           string
	Count          int
}

// EphemeralObjects counts the ConfigMaps, Secrets and Jobs labelled
// on-cluster-layering in the MCO namespace, per build. The MCO deletes them
// when a build succeeds and keeps them when it fails, so outside a running
// build they are leftovers. Every kind is listed, with 0, for each build
// that has any, but a kind an offline snapshot did not capture; an object
// naming no build counts under "".
func (c *Cluster) EphemeralObjects() []EphemeralCount {
	counts := map[string]map[string]int{}
	c.eachEphemeral(func(kind string, m metav1.ObjectMeta) {
		owner := ephemeralOwner(m)
		if counts[owner] == nil {
			counts[owner] = map[string]int{}
		}
		counts[owner][kind]++
	})

	builds := make([]string, 0, len(counts))
	for b := range counts {
		builds = append(builds, b)
	}
	sort.Strings(builds)
	var out []EphemeralCount
	for _, b := range builds {
		for _, k := range EphemeralKinds {
			if c.Captured(k) { // a kind not captured is unknown, not 0
				out = append(out, EphemeralCount{MachineOSBuild: b, Kind: k, Count: counts[b][k]})
			}
		}
	}
	return out
}

// ephemeralOwner names the build an object belongs to: the label, else the
// annotation (Secrets keep none), else the name without its prefix.
func ephemeralOwner(m metav1.ObjectMeta) string {
	if b := m.Labels[LabelMachineOSBuild]; b != "" {
		return b
	}
	if b := m.Annotations[LabelMachineOSBuild]; b != "" { // same key as the label
		return b
	}
	for _, p := range ephemeralPrefixes {
		if b, ok := strings.CutPrefix(m.Name, p); ok && b != "" {
			return b
		}
	}
	return ""
}

// eachEphemeral calls f with each ConfigMap, Secret and Job labelled
// on-cluster-layering in the MCO namespace.
func (c *Cluster) eachEphemeral(f func(kind string, m metav1.ObjectMeta)) {
	add := func(kind string, m metav1.ObjectMeta) {
		if _, ok := m.Labels[LabelOnClusterLayering]; ok && m.Namespace == c.Namespace {
			f(kind, m)
		}
	}
	for _, o := range c.ConfigMaps {
		add(KindConfigMap, o.ObjectMeta)
	}
	for _, o := range c.Secrets {
		add(KindSecret, o.ObjectMeta)
	}
	for _, o := range c.Jobs {
		add(KindJob, o.ObjectMeta)
	}
}

// Orphan counts the ephemeral objects of a MachineOSBuild that is gone.
type Orphan struct {
	MachineOSBuild, MachineOSConfig, Pool string
	Count                                 int
	// Newest is the creation of its newest object: orphaned since then at
	// the earliest (when its build went is not recorded anywhere).
	Newest time.Time
}

// OrphanedObjects counts, per build that no longer exists, the ephemeral
// objects still naming it, with the MachineOSConfig and pool of their
// labels. The MCO cleans a build's objects when it deletes the build
// (deleteBuilderForMachineOSBuild) and the garbage collector follows the
// Job's owner reference; objects made before the Job existed
// (jobimagebuilder.go start sets the owner only after creating it), or
// left while the machine-os-builder was down, are never deleted. Nothing
// is concluded when the builds were not captured.
func (c *Cluster) OrphanedObjects() []Orphan {
	if !c.Captured(KindMachineOSBuild) {
		return nil
	}
	builds := map[string]bool{}
	for _, b := range c.MachineOSBuilds {
		builds[b.Name] = true
	}
	byBuild := map[string]*Orphan{}
	c.eachEphemeral(func(_ string, m metav1.ObjectMeta) {
		owner := ephemeralOwner(m)
		if owner == "" || builds[owner] {
			return
		}
		o := byBuild[owner]
		if o == nil {
			o = &Orphan{MachineOSBuild: owner, MachineOSConfig: m.Labels[LabelMachineOSConfig], Pool: m.Labels[LabelTargetPool]}
			byBuild[owner] = o
		}
		o.Count++
		if t := m.CreationTimestamp.Time; t.After(o.Newest) {
			o.Newest = t
		}
	})
	out := make([]Orphan, 0, len(byBuild))
	for _, o := range byBuild {
		out = append(out, *o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].MachineOSBuild < out[j].MachineOSBuild })
	return out
}
