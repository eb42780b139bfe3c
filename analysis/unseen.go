package analysis

// Pools that use image mode in a view that holds no MachineOSConfig at
// all: a must-gather of 4.16 or 4.17 gathers neither MachineOSConfigs nor
// MachineOSBuilds (openshift/must-gather collection-scripts/gather_ppc;
// the machine-config ClusterOperator's relatedObjects do not list them),
// so layering shows only in what the MCO writes elsewhere.

import (
	"fmt"
	"slices"
	"strings"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/ocl-exporter/ocl_exporter/classify"
)

// LayeringState is what a sign of image mode shows about its pool, from
// least to most urgent: the worst sign decides a pool.
type LayeringState int

// What a sign shows.
const (
	// LayeringSeen: the pool uses image mode; nothing seen is moving or
	// failing (which says nothing of what was not captured).
	LayeringSeen LayeringState = iota + 1
	// LayeringMoving: a build or a rollout to a built image is under way.
	LayeringMoving
	// LayeringFailing: a build of the pool's image failed.
	LayeringFailing
)

// LayeringSign is one object that shows a pool uses image mode.
type LayeringSign struct {
	// Sign names the kind of evidence (layeringSigns' names).
	Sign                  string
	Kind, Namespace, Name string
	Field                 string
	State                 LayeringState
	// Message says what the object shows, in one sentence.
	Message string
	// Cause is a failing sign's parsed cause; nil otherwise.
	Cause *classify.Result
	Since time.Time
}

// UnseenLayering is a pool with signs of image mode whose MachineOSConfig
// the view cannot hold: its signs, most urgent first.
type UnseenLayering struct {
	Pool  string
	State LayeringState
	Signs []LayeringSign
}

// Failure is the first failing sign, or nil.
func (u UnseenLayering) Failure() *LayeringSign {
	for i := range u.Signs {
		if u.Signs[i].State == LayeringFailing {
			return &u.Signs[i]
		}
	}
	return nil
}

// BuildRunning reports whether a sign shows a build of the pool's image
// under way (the node controller then targets no node).
func (u UnseenLayering) BuildRunning() bool {
	return slices.ContainsFunc(u.Signs, func(s LayeringSign) bool { return s.State == LayeringMoving && s.Kind != "Node" })
}

// layeringSigns are the kinds of evidence, each read from the view for one
// pool. What each release writes: the pool's ImageBuildDegraded from 4.19
// (pkg/controller/build/reconciler.go syncBuildFailureStatus), its
// Updating messages about OS image builds from 4.18
// (pkg/controller/node/status.go), the nodes' desiredImage (every
// release), the build pod of 4.16/4.17 and the Job and ConfigMaps of 4.17
// on, labelled with their target pool (release-4.16
// build_controller.go targetMachineConfigPoolLabel, release-4.17
// constants.go TargetMachineConfigPoolLabelKey).
var layeringSigns = []struct {
	name string
	read func(c *Cluster, p *mcfgv1.MachineConfigPool, np NodePools) []LayeringSign
}{
	{"pool ImageBuildDegraded", imageBuildDegradedSign},
	{"pool Updating", updatingSign},
	{"pool label", legacyLabelSign},
	{"node image", nodeImageSigns},
	{"build pod", buildPodSigns},
	{"build Job", buildJobSigns},
	{"build ConfigMap", buildConfigMapSigns},
	{"MachineOSBuild", machineOSBuildSigns},
}

// UnseenLayeredPools lists the pools that show signs of image mode when
// the view holds no MachineOSConfig at all; nil when it holds them (live,
// or captured), as the MachineOSConfigs then decide.
func UnseenLayeredPools(c *Cluster) []UnseenLayering {
	if c.Captured(KindMachineOSConfig) {
		return nil
	}
	np := c.NodePools()
	var out []UnseenLayering
	for _, p := range c.MachineConfigPools {
		u := UnseenLayering{Pool: p.Name}
		for _, s := range layeringSigns {
			for _, sign := range s.read(c, p, np) {
				sign.Sign = s.name
				u.Signs = append(u.Signs, sign)
				u.State = max(u.State, sign.State)
			}
		}
		if len(u.Signs) > 0 {
			slices.SortStableFunc(u.Signs, bySignificance)
			out = append(out, u)
		}
	}
	return out
}

// bySignificance orders signs most urgent first, and among failures
// those with a known cause first: the first one names the failure.
func bySignificance(a, b LayeringSign) int {
	if a.State != b.State {
		return int(b.State) - int(a.State)
	}
	if k := known(b.Cause) - known(a.Cause); k != 0 {
		return k
	}
	return strings.Compare(a.Kind+"/"+a.Name, b.Kind+"/"+b.Name) // informers list in no order
}

func known(r *classify.Result) int {
	if r != nil && r.Class != classify.Unknown {
		return 1
	}
	return 0
}

// LabelTargetPool416 is the build pod's pool label on 4.16.
const LabelTargetPool416 = prefix + "targetMachineConfigPool"

// ofPool reports whether an object of a build names pool as its target.
func ofPool(labels map[string]string, pool string) bool {
	return labels[LabelTargetPool] == pool || labels[LabelTargetPool416] == pool
}

func poolSign(p *mcfgv1.MachineConfigPool, cond *mcfgv1.MachineConfigPoolCondition, st LayeringState, msg string) LayeringSign {
	s := LayeringSign{Kind: KindMachineConfigPool, Name: p.Name, Field: "status.conditions[type=" + string(cond.Type) + "]",
		State: st, Message: msg, Since: cond.LastTransitionTime.Time}
	if st == LayeringFailing {
		r := classify.Classify(classify.Message{Origin: classify.OriginPoolCondition, Reason: cond.Reason, Text: cond.Message})
		s.Cause = &r
	}
	return s
}

// imageBuildReasons reads ImageBuildDegraded=False by its reason; a
// reason not listed (NoLayeredObjects: no layered object is left) is no
// sign. ImageBuildDegraded=True is a failed build whatever its reason.
var imageBuildReasons = map[string]LayeringState{
	string(mcfgv1.MachineConfigPoolBuilding):     LayeringMoving,
	string(mcfgv1.MachineConfigPoolBuildPending): LayeringMoving,
	string(mcfgv1.MachineConfigPoolBuildSuccess): LayeringSeen,
}

func imageBuildDegradedSign(_ *Cluster, p *mcfgv1.MachineConfigPool, _ NodePools) []LayeringSign {
	cond := FindPoolCondition(p, mcfgv1.MachineConfigPoolImageBuildDegraded)
	if cond == nil {
		return nil
	}
	st, ok := imageBuildReasons[cond.Reason]
	switch cond.Status {
	case corev1.ConditionTrue:
		st, ok = LayeringFailing, true
	case corev1.ConditionFalse:
	default:
		ok = false
	}
	if !ok {
		return nil
	}
	return []LayeringSign{poolSign(p, cond, st, fmt.Sprintf("ImageBuildDegraded=%s (reason %s): %s", cond.Status, cond.Reason, cond.Message))}
}

// updatingSign reads the node controller's Updating messages about OS
// image builds: waiting for one (4.18 on), or stopped by a failed or
// interrupted one.
func updatingSign(c *Cluster, p *mcfgv1.MachineConfigPool, _ NodePools) []LayeringSign {
	cond := FindPoolCondition(p, mcfgv1.MachineConfigPoolUpdating)
	switch {
	case cond == nil:
		return nil
	case c.updateStopped(p) != nil && strings.Contains(cond.Message, "OS image build"):
		return []LayeringSign{poolSign(p, cond, LayeringFailing, "Updating=False: "+cond.Message)}
	case cond.Status == corev1.ConditionTrue && strings.Contains(cond.Message, "OS image build"):
		return []LayeringSign{poolSign(p, cond, LayeringMoving, "Updating=True: "+cond.Message)}
	}
	return nil
}

// legacyLabelSign: the operator counts a pool labelled layering-enabled
// as opted in (pkg/operator/sync.go getLayeredMachineConfigPools).
func legacyLabelSign(_ *Cluster, p *mcfgv1.MachineConfigPool, _ NodePools) []LayeringSign {
	if _, ok := p.Labels[LabelLayeringEnabledPool]; !ok {
		return nil
	}
	return []LayeringSign{{Kind: KindMachineConfigPool, Name: p.Name, Field: "metadata.labels[" + LabelLayeringEnabledPool + "]",
		State: LayeringSeen, Message: "the pool carries the layering-enabled label, which opts it into image mode"}}
}

// nodeImageSigns: the node controller sets desiredImage only on the
// nodes of a layered pool; a reverting node loses it first.
func nodeImageSigns(c *Cluster, p *mcfgv1.MachineConfigPool, np NodePools) []LayeringSign {
	var on, moving []string
	images := map[string]string{}
	for _, n := range c.Nodes {
		desired := n.Annotations[NodeAnnotationDesiredImage]
		if desired == "" || np.PoolOf(n.Labels) != p.Name {
			continue
		}
		images[n.Name] = desired
		if desired == n.Annotations[NodeAnnotationCurrentImage] {
			on = append(on, n.Name)
		} else {
			moving = append(moving, n.Name)
		}
	}
	slices.Sort(on)
	slices.Sort(moving)
	field := "metadata.annotations[" + NodeAnnotationDesiredImage + "]"
	var out []LayeringSign
	if len(moving) > 0 {
		out = append(out, LayeringSign{Kind: "Node", Name: moving[0], Field: field, State: LayeringMoving,
			Message: fmt.Sprintf("%d node(s) are moving to a layered image (%s)", len(moving), strings.Join(moving, ", "))})
	}
	if len(on) > 0 {
		out = append(out, LayeringSign{Kind: "Node", Name: on[0], Field: field, State: LayeringSeen,
			Message: fmt.Sprintf("%d node(s) run the layered image %s", len(on), images[on[0]])})
	}
	return out
}

func buildPodSigns(c *Cluster, p *mcfgv1.MachineConfigPool, _ NodePools) []LayeringSign {
	var out []LayeringSign
	for _, pod := range c.Pods {
		if pod.Namespace != c.Namespace || !ofPool(pod.Labels, p.Name) {
			continue
		}
		s := LayeringSign{Kind: KindPod, Namespace: pod.Namespace, Name: pod.Name, Field: "status", Since: pod.CreationTimestamp.Time}
		switch {
		case buildPodFailed(pod):
			r := causeOf(podMessages(pod))
			s.State, s.Cause, s.Message = LayeringFailing, &r, "the build pod of the pool's image failed"
		case podDone(pod):
			s.State, s.Message = LayeringSeen, "the build pod of the pool's image succeeded"
		default:
			s.State, s.Message = LayeringMoving, "the build pod of the pool's image runs"
		}
		out = append(out, s)
	}
	return out
}

func buildJobSigns(c *Cluster, p *mcfgv1.MachineConfigPool, _ NodePools) []LayeringSign {
	var out []LayeringSign
	for _, j := range c.Jobs {
		if j.Namespace != c.Namespace || !ofPool(j.Labels, p.Name) {
			continue
		}
		s := LayeringSign{Kind: KindJob, Namespace: j.Namespace, Name: j.Name, Field: "status.conditions", State: LayeringMoving,
			Message: "the build Job of the pool's image runs", Since: j.CreationTimestamp.Time}
		for _, jc := range j.Status.Conditions {
			switch {
			case jc.Status != corev1.ConditionTrue:
			case jc.Type == batchv1.JobFailed:
				r := causeOf(c.jobPodMessages(j.Name, jc))
				s.State, s.Cause, s.Message, s.Since = LayeringFailing, &r, "the build Job of the pool's image failed", jc.LastTransitionTime.Time
			case jc.Type == batchv1.JobComplete:
				s.State, s.Message = LayeringSeen, "the build Job of the pool's image completed"
			}
		}
		out = append(out, s)
	}
	return out
}

// jobPodMessages are a failed Job's pods' messages, then its condition's.
func (c *Cluster) jobPodMessages(job string, jc batchv1.JobCondition) []classify.Message {
	var msgs []classify.Message
	for _, p := range c.Pods {
		if p.Namespace == c.Namespace && p.Labels[labelJobName] == job && buildPodFailed(p) {
			msgs = append(msgs, podMessages(p)...)
		}
	}
	return append(msgs, classify.Message{Origin: classify.OriginJobCondition, Reason: jc.Reason, Text: jc.Message})
}

// buildConfigMapSigns: a build's ConfigMaps outlive a failed build.
func buildConfigMapSigns(c *Cluster, p *mcfgv1.MachineConfigPool, _ NodePools) []LayeringSign {
	var names []string
	for _, cm := range c.ConfigMaps {
		if cm.Namespace == c.Namespace && ofPool(cm.Labels, p.Name) {
			names = append(names, cm.Name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	slices.Sort(names)
	return []LayeringSign{{Kind: KindConfigMap, Namespace: c.Namespace, Name: names[0], Field: "metadata.labels[" + LabelTargetPool + "]",
		State: LayeringSeen, Message: fmt.Sprintf("%d ConfigMap(s) of a build of the pool's image are kept", len(names))}}
}

// machineOSBuildSigns: a view may hold the builds without their configs.
func machineOSBuildSigns(c *Cluster, p *mcfgv1.MachineConfigPool, _ NodePools) []LayeringSign {
	var out []LayeringSign
	for _, b := range c.MachineOSBuilds {
		if !ofPool(b.Labels, p.Name) {
			continue
		}
		s := LayeringSign{Kind: KindMachineOSBuild, Name: b.Name, Field: "status.conditions", Since: b.CreationTimestamp.Time}
		switch ph := PhaseOf(b); ph {
		case BuildFailed, BuildInterrupted:
			f := c.build(b).Failure
			s.State, s.Cause, s.Message = LayeringFailing, f, fmt.Sprintf("the MachineOSBuild of the pool's image is %s", ph)
		case BuildSucceeded:
			s.State, s.Message = LayeringSeen, "the MachineOSBuild of the pool's image succeeded"
		default:
			s.State, s.Message = LayeringMoving, fmt.Sprintf("the MachineOSBuild of the pool's image is %s", ph)
		}
		out = append(out, s)
	}
	return out
}
