package analysis

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ocl-exporter/ocl_exporter/classify"
)

const (
	rolloutImage = "quay.io/sregidor/sregidor-os@sha256:8761d4273f3213f2f9c9b4aa9dbe33aa758f17d691f0f53d2b20f55702c9ef13"
	rolloutOld   = "quay.io/sregidor/sregidor-os@sha256:1111111111111111111111111111111111111111111111111111111111111111"
	// rolloutTimeout is what the MCD writes once rpm-ostree kept failing.
	rolloutTimeout = "Failed to update OS to " + rolloutImage + " after retries: timed out waiting for the condition"
	// rolloutManifestUnknown is the same with the last rebase error kept.
	rolloutManifestUnknown = "failed to update OS to " + rolloutImage + " after retries: error running rpm-ostree rebase --experimental ostree-unverified-registry:" + rolloutImage + ": error: Creating importer: failed to invoke method OpenImage: reading manifest sha256:8761 in quay.io/sregidor/sregidor-os: manifest unknown: timed out waiting for the condition"
)

// mcnConds builds MachineConfigNode conditions from "Type=Status" pairs.
func mcnConds(pairs ...string) []metav1.Condition {
	out := make([]metav1.Condition, 0, len(pairs))
	for _, p := range pairs {
		typ, status, _ := strings.Cut(p, "=")
		out = append(out, metav1.Condition{Type: typ, Status: metav1.ConditionStatus(status), Reason: typ})
	}
	return out
}

func TestUpdatePhase(t *testing.T) {
	// The legacy set, as the MCO creates it without ImageModeStatusReporting.
	legacyIdle := mcnConds("UpdatePrepared=False", "UpdateExecuted=False", "UpdatePostActionComplete=False",
		"UpdateComplete=False", "Resumed=False", "Drained=False", "AppliedFilesAndOS=False", "Cordoned=False",
		"RebootedNode=False", "Updated=True", "Uncordoned=False", "NodeDegraded=False")
	tests := []struct {
		name  string
		conds []metav1.Condition
		want  string
	}{
		{"no conditions yet", nil, PhasePending},
		{"updated", legacyIdle, "Updated"},
		{"nothing started", mcnConds("Updated=False", "UpdatePrepared=False", "NodeDegraded=False"), PhasePending},
		{"preparing", mcnConds("Updated=False", "UpdatePrepared=Unknown"), "UpdatePrepared"},
		{"prepared, executing not started", mcnConds("Updated=False", "UpdatePrepared=True"), "UpdatePrepared"},
		// seed 002: the degraded node, legacy conditions.
		{"legacy files and OS", mcnConds("UpdatePrepared=True", "UpdateExecuted=Unknown", "UpdatePostActionComplete=False",
			"UpdateComplete=False", "Resumed=False", "AppliedFilesAndOS=Unknown", "Cordoned=True", "Drained=True",
			"RebootedNode=False", "Uncordoned=False", "Updated=False", "NodeDegraded=True"), "AppliedFilesAndOS"},
		{"draining", mcnConds("UpdatePrepared=True", "UpdateExecuted=Unknown", "Cordoned=True", "Drained=Unknown", "Updated=False"), "Drained"},
		{"pulling the image", mcnConds("UpdatePrepared=True", "UpdateExecuted=Unknown", "Drained=True", "AppliedFiles=False",
			"AppliedOSImage=Unknown", "ImagePulledFromRegistry=Unknown", "Updated=False"), "ImagePulledFromRegistry"},
		{"pulled, applying the OS", mcnConds("UpdateExecuted=Unknown", "AppliedOSImage=Unknown", "ImagePulledFromRegistry=True", "Updated=False"), "AppliedOSImage"},
		{"rebooting", mcnConds("UpdatePrepared=True", "UpdateExecuted=True", "AppliedOSImage=True", "ImagePulledFromRegistry=True",
			"UpdatePostActionComplete=Unknown", "RebootedNode=Unknown", "Updated=False"), "RebootedNode"},
		{"resumed, not yet updated", mcnConds("UpdateComplete=True", "Uncordoned=True", "Resumed=True", "Updated=False"), "Resumed"},
		{"unknown types are ignored", mcnConds("PinnedImageSetsProgressing=Unknown", "SomethingNew=True", "Updated=False"), PhasePending},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := updatePhase(tt.conds); got != tt.want {
				t.Errorf("updatePhase = %q, want %q", got, tt.want)
			}
			reversed := make([]metav1.Condition, len(tt.conds))
			for i, c := range tt.conds {
				reversed[len(tt.conds)-1-i] = c
			}
			if got := updatePhase(reversed); got != tt.want {
				t.Errorf("updatePhase(reversed) = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseNodeReports(t *testing.T) {
	// seed 002, as YAML folds it.
	seed := `Node ip-10-0-75-69.us-east-2.compute.internal is reporting: "Node ip-10-0-75-69.us-east-2.compute.internal upgrade failure. ` + rolloutTimeout + `", Node ip-10-0-75-69.us-east-2.compute.internal is reporting: "` + rolloutTimeout + `"`
	tests := []struct {
		name string
		msg  string
		want map[string][]string
	}{
		{"seed 002: one node twice", seed, map[string][]string{"ip-10-0-75-69.us-east-2.compute.internal": {
			"Node ip-10-0-75-69.us-east-2.compute.internal upgrade failure. " + rolloutTimeout, rolloutTimeout,
		}}},
		{"two nodes, escaped quotes and newlines", `Node a is reporting: "say \"x\"\nthen y", Node b is reporting: "z"`,
			map[string][]string{"a": {"say \"x\"\nthen y"}, "b": {"z"}}},
		{"cut short", `Node a is reporting: "unterminated`, map[string][]string{}},
		{"not a list", "1 nodes are reporting degraded status on sync", map[string][]string{}},
		{"empty", "", map[string][]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseNodeReports(tt.msg); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parseNodeReports = %q, want %q", got, tt.want)
			}
		})
	}
}

// rolloutNode is a worker-pool node with the given annotations ("key=value",
// key without the machineconfiguration prefix).
func rolloutNode(name, role string, annotations ...string) *metav1.PartialObjectMetadata {
	n := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name:        name,
		Labels:      map[string]string{nodeRolePrefix + "worker": "", nodeRolePrefix + role: ""},
		Annotations: map[string]string{},
	}}
	for _, a := range annotations {
		k, v, _ := strings.Cut(a, "=")
		n.Annotations[prefix+k] = v
	}
	return n
}

func layeredMOSC(pool, image string) *mcfgv1.MachineOSConfig {
	m := &mcfgv1.MachineOSConfig{ObjectMeta: metav1.ObjectMeta{Name: pool}}
	m.Spec.MachineConfigPool.Name = pool
	m.Status.CurrentImagePullSpec = mcfgv1.ImageDigestFormat(image)
	return m
}

func TestAnalyzeRolloutNodes(t *testing.T) {
	tests := []struct {
		name     string
		node     *metav1.PartialObjectMetadata
		mcn      []metav1.Condition // nil: no MachineConfigNode
		layered  bool
		poolMsg  string // the infra pool's NodeDegraded message, True when set
		want     NodeRollout
		wantText string // a substring of the failure excerpt
	}{
		{
			name:    "layered node done",
			node:    rolloutNode("n", "infra", "desiredImage="+rolloutImage, "currentImage="+rolloutImage, "state=Done", "reason="),
			mcn:     mcnConds("Updated=True"),
			layered: true,
			want:    NodeRollout{Name: "n", Pool: "infra", ImageTracked: true, State: "Done", Phase: "Updated"},
		},
		{
			name:    "layered node not yet targeted",
			node:    rolloutNode("n", "infra", "state=Done"),
			layered: true,
			want:    NodeRollout{Name: "n", Pool: "infra", ImageTracked: true, State: "Done"},
		},
		{
			name:    "layered node updating",
			node:    rolloutNode("n", "infra", "desiredImage="+rolloutImage, "currentImage="+rolloutOld, "state=Working"),
			mcn:     mcnConds("UpdatePrepared=True", "UpdateExecuted=Unknown", "Drained=Unknown", "Updated=False"),
			layered: true,
			want:    NodeRollout{Name: "n", Pool: "infra", ImageTracked: true, ImageMismatch: true, State: "Working", Phase: "Drained"},
		},
		{
			// reuseImageForNewMOSB: a new rendered config, the same image.
			name:    "layered node applying a change that kept the image",
			node:    rolloutNode("n", "infra", "desiredImage="+rolloutImage, "currentImage="+rolloutImage, "desiredConfig=rendered-infra-2", "currentConfig=rendered-infra-1", "state=Working"),
			layered: true,
			want:    NodeRollout{Name: "n", Pool: "infra", ImageTracked: true, ConfigMismatch: true, State: "Working"},
		},
		{
			name: "reverting to non-layered: empty desiredImage",
			node: rolloutNode("n", "infra", "desiredImage=", "currentImage="+rolloutImage, "state=Working"),
			want: NodeRollout{Name: "n", Pool: "infra", ImageTracked: true, ImageMismatch: true, State: "Working"},
		},
		{
			name: "reverting to non-layered: desiredImage deleted",
			node: rolloutNode("n", "infra", "currentImage="+rolloutImage, "state=Working"),
			want: NodeRollout{Name: "n", Pool: "infra", ImageTracked: true, ImageMismatch: true, State: "Working"},
		},
		{
			name: "reverted: no image annotation left",
			node: rolloutNode("n", "infra", "state=Done"),
			want: NodeRollout{Name: "n", Pool: "infra", State: "Done"},
		},
		{
			name: "unknown state",
			node: rolloutNode("n", "infra", "state=Rebooting"),
			want: NodeRollout{Name: "n", Pool: "infra"},
		},
		{
			name:     "seed 002: the reason annotation names the cause",
			node:     rolloutNode("n", "infra", "desiredImage="+rolloutImage, "currentImage="+rolloutOld, "state=Degraded", "reason="+rolloutManifestUnknown),
			mcn:      append(mcnConds("UpdateExecuted=Unknown", "AppliedFilesAndOS=Unknown", "Updated=False"), metav1.Condition{Type: "NodeDegraded", Status: "True", Reason: "NodeDegraded", Message: "Node n upgrade failure. " + rolloutTimeout}),
			layered:  true,
			poolMsg:  `Node n is reporting: "Node n upgrade failure. ` + rolloutTimeout + `"`,
			want:     NodeRollout{Name: "n", Pool: "infra", ImageTracked: true, ImageMismatch: true, State: "Degraded", Phase: "AppliedFilesAndOS", Failure: &NodeFailure{Class: classify.ImageNotFound}},
			wantText: "manifest unknown",
		},
		{
			name:     "only the timeout is known",
			node:     rolloutNode("n", "infra", "desiredImage="+rolloutImage, "state=Degraded", "reason="+rolloutTimeout),
			mcn:      []metav1.Condition{{Type: "NodeDegraded", Status: "True", Reason: "NodeDegraded", Message: "Node n upgrade failure. " + rolloutTimeout}},
			layered:  true,
			want:     NodeRollout{Name: "n", Pool: "infra", ImageTracked: true, ImageMismatch: true, State: "Degraded", Phase: PhasePending, Failure: &NodeFailure{Class: classify.OSUpdateTimeout}},
			wantText: "after retries",
		},
		{
			name:     "the pool message is more specific than the node",
			node:     rolloutNode("n", "infra", "desiredImage="+rolloutImage, "state=Degraded", "reason="+rolloutTimeout),
			layered:  true,
			poolMsg:  `Node other is reporting: "x509: certificate signed by unknown authority", Node n is reporting: "` + rolloutManifestUnknown + `"`,
			want:     NodeRollout{Name: "n", Pool: "infra", ImageTracked: true, ImageMismatch: true, State: "Degraded", Failure: &NodeFailure{Class: classify.ImageNotFound}},
			wantText: "manifest unknown",
		},
		{
			name: "failed pull while the MCD still works",
			node: rolloutNode("n", "infra", "desiredImage="+rolloutImage, "state=Working"),
			mcn: []metav1.Condition{
				{Type: "UpdateExecuted", Status: "Unknown"},
				{Type: "ImagePulledFromRegistry", Status: "False", Reason: "UpdateExecutedImagePulledFromRegistry",
					Message: "Failed to pull OS image " + rolloutImage + " from registry: reading manifest sha256:8761 in quay.io/sregidor/sregidor-os: manifest unknown"},
			},
			layered:  true,
			want:     NodeRollout{Name: "n", Pool: "infra", ImageTracked: true, ImageMismatch: true, State: "Working", Phase: "UpdateExecuted", Failure: &NodeFailure{Class: classify.ImageNotFound}},
			wantText: "manifest unknown",
		},
		{
			name: "a reset pull condition is not a failure",
			node: rolloutNode("n", "infra", "desiredImage="+rolloutImage, "currentImage="+rolloutImage, "state=Done"),
			mcn: []metav1.Condition{
				{Type: "Updated", Status: "True"},
				{Type: "ImagePulledFromRegistry", Status: "False", Reason: "UpdateExecutedImagePulledFromRegistry",
					Message: "Action during update to " + rolloutImage + ": Failed to pull OS image " + rolloutImage + " from registry: manifest unknown"},
			},
			layered: true,
			want:    NodeRollout{Name: "n", Pool: "infra", ImageTracked: true, State: "Done", Phase: "Updated"},
		},
		{
			// The drain controller's first failed attempt, as the MCO
			// writes it: an hour before the MCD marks the node Degraded.
			name: "a drain blocked by a PodDisruptionBudget fails from the first attempt",
			node: rolloutNode("n", "infra", "desiredImage="+rolloutImage, "currentImage="+rolloutOld, "state=Working"),
			mcn: []metav1.Condition{
				{Type: "UpdateExecuted", Status: "Unknown", Reason: "Drained", Message: "Node Drain has not succeeded"},
				{Type: "Drained", Status: "Unknown", Reason: "UpdateExecutedDrained",
					Message: "Error: Node Drain has not succeeded. Error is: error when evicting pods/\"web-7d9f\" -n \"shop\": Cannot evict pod as it would violate the pod's disruption budget. The drain will not be complete until desired drainer drain-rendered-infra-1 matches current drainer uncordon-rendered-infra-0"},
			},
			layered:  true,
			want:     NodeRollout{Name: "n", Pool: "infra", ImageTracked: true, ImageMismatch: true, State: "Working", Phase: "Drained", Failure: &NodeFailure{Class: classify.DrainFailed}},
			wantText: "evict",
		},
		{
			// The drain controller's cordon gave up (5 tries); the MCD
			// waits an hour for the drain, then reports it as drain_failed:
			// the class stays the cordon's.
			name: "a refused cordon is cordon_failed, before and after the MCD's drain timeout",
			node: rolloutNode("n", "infra", "desiredImage="+rolloutImage, "currentImage="+rolloutOld, "state=Degraded",
				"reason=failed to drain node: n after 1 hour. Please see machine-config-controller logs for more information"),
			mcn: []metav1.Condition{
				{Type: "UpdateExecuted", Status: "Unknown", Reason: "Cordoned", Message: "Failed to Cordon Node as part of In progress update phase"},
				{Type: "Cordoned", Status: "Unknown", Reason: "UpdateExecutedCordoned",
					Message: "Error: Failed to Cordon node. Error is node n: failed to cordon (5 tries): [timed out waiting for the condition, admission webhook \"deny-nodes\" denied the request: nodes are read-only], The node is reporting Unschedulable = false"},
			},
			layered:  true,
			want:     NodeRollout{Name: "n", Pool: "infra", ImageTracked: true, ImageMismatch: true, State: "Degraded", Phase: "Cordoned", Failure: &NodeFailure{Class: classify.CordonFailed}},
			wantText: "ordon",
		},
		{
			name: "a cordon that succeeded is no failure",
			node: rolloutNode("n", "infra", "desiredImage="+rolloutImage, "currentImage="+rolloutOld, "state=Working"),
			mcn: []metav1.Condition{
				{Type: "UpdateExecuted", Status: "Unknown", Reason: "Cordoned", Message: "Cordoned Node as part of update executed phase"},
				{Type: "Cordoned", Status: "True", Reason: "UpdateExecutedCordoned", Message: "Cordoned node. The node is reporting Unschedulable = true"},
			},
			layered: true,
			want:    NodeRollout{Name: "n", Pool: "infra", ImageTracked: true, ImageMismatch: true, State: "Working", Phase: "UpdateExecuted"},
		},
		{
			name: "a drain error kept by a later reset is not a failure",
			node: rolloutNode("n", "infra", "desiredImage="+rolloutImage, "currentImage="+rolloutImage, "state=Done"),
			mcn: []metav1.Condition{
				{Type: "Updated", Status: "True"},
				{Type: "Drained", Status: "False", Reason: "UpdateExecutedDrained",
					Message: "Action during update to " + rolloutImage + ": Error: Node Drain has not succeeded. Error is: Cannot evict pod as it would violate the pod's disruption budget."},
			},
			layered: true,
			want:    NodeRollout{Name: "n", Pool: "infra", ImageTracked: true, State: "Done", Phase: "Updated"},
		},
		{
			name: "degraded without any message",
			node: rolloutNode("n", "infra", "state=Degraded"),
			want: NodeRollout{Name: "n", Pool: "infra", State: "Degraded", Failure: &NodeFailure{Class: classify.Unknown}},
		},
		{
			name: "unreconcilable with unknown wording",
			node: rolloutNode("n", "infra", "state=Unreconcilable", "reason=ignition kernelType changed"),
			want: NodeRollout{Name: "n", Pool: "infra", State: "Unreconcilable", Failure: &NodeFailure{Class: classify.Unreconcilable}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			infra := selectingPool("infra", nodeRolePrefix+"infra")
			if tt.poolMsg != "" {
				infra.Status.Conditions = []mcfgv1.MachineConfigPoolCondition{{Type: "NodeDegraded", Status: corev1.ConditionTrue, Message: tt.poolMsg}}
			}
			c := &Cluster{
				MachineConfigPools: []*mcfgv1.MachineConfigPool{selectingPool("worker", nodeRolePrefix+"worker"), infra},
				Nodes:              []*metav1.PartialObjectMetadata{tt.node},
			}
			if tt.layered {
				c.MachineOSConfigs = []*mcfgv1.MachineOSConfig{layeredMOSC("infra", rolloutImage)}
			}
			if tt.mcn != nil {
				c.MachineConfigNodes = []*mcfgv1.MachineConfigNode{{ObjectMeta: metav1.ObjectMeta{Name: tt.node.Name}, Status: mcfgv1.MachineConfigNodeStatus{Conditions: tt.mcn}}}
			}
			r := AnalyzeRollout(c)
			if len(r.Nodes) != 1 {
				t.Fatalf("got %d nodes, want 1", len(r.Nodes))
			}
			got := r.Nodes[0]
			if got.Failure != nil && tt.want.Failure != nil {
				if !strings.Contains(got.Failure.Excerpt, tt.wantText) || len(got.Failure.Excerpt) > classify.MaxExcerpt {
					t.Errorf("excerpt %q does not contain %q or is too long", got.Failure.Excerpt, tt.wantText)
				}
				got.Failure = &NodeFailure{Class: got.Failure.Class}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v (failure %+v)\nwant %+v (failure %+v)", got, got.Failure, tt.want, tt.want.Failure)
			}
		})
	}
}

func TestAnalyzeRolloutPools(t *testing.T) {
	infra := selectingPool("infra", nodeRolePrefix+"infra")
	infra.Status = mcfgv1.MachineConfigPoolStatus{
		MachineCount: 3, ReadyMachineCount: 0, UpdatedMachineCount: 0, UnavailableMachineCount: 1, DegradedMachineCount: 1,
		Conditions: []mcfgv1.MachineConfigPoolCondition{
			{Type: "Updated", Status: corev1.ConditionFalse},
			{Type: "Updating", Status: corev1.ConditionFalse},
			{Type: "Degraded", Status: corev1.ConditionTrue},
			{Type: "NodeDegraded", Status: corev1.ConditionTrue},
			{Type: "RenderDegraded", Status: corev1.ConditionFalse},
			{Type: "ImageBuildDegraded", Status: "Bogus"},
		},
	}
	infra.Spec.Paused = true
	infra.Spec.Configuration.Name = "rendered-infra-2"
	worker := selectingPool("worker", nodeRolePrefix+"worker")
	worker.Status.MachineCount = 1
	worker.Spec.Configuration.Name = "rendered-worker-1"
	plain := selectingPool("plain", nodeRolePrefix+"plain") // never layered: no target of image mode
	plain.Spec.Configuration.Name = "rendered-plain-1"
	c := &Cluster{
		MachineConfigPools: []*mcfgv1.MachineConfigPool{worker, infra, plain},
		MachineOSConfigs:   []*mcfgv1.MachineOSConfig{layeredMOSC("infra", rolloutImage), layeredMOSC("gone", rolloutImage)},
		Nodes: []*metav1.PartialObjectMetadata{
			rolloutNode("a", "infra", "currentImage="+rolloutImage, "currentConfig=rendered-infra-2", "state=Working"),
			rolloutNode("b", "infra", "currentImage="+rolloutImage, "currentConfig=rendered-infra-1"), // a change that kept the image
			rolloutNode("c", "infra", "currentImage="+rolloutOld, "currentConfig=rendered-infra-2", "state=Degraded"),
			rolloutNode("w", "worker", "currentImage="+rolloutImage, "currentConfig=rendered-worker-1"), // not in infra; reverting
			rolloutNode("v", "worker", "currentConfig=rendered-worker-1"),
			rolloutNode("p", "plain", "currentConfig=rendered-plain-0", "state=Working"),
		},
	}
	want := []PoolRollout{
		// No node carries desired annotations: every tracked one is off
		// target (TestPoolOffTargetCounts tells them apart).
		{Name: "worker", TargetKnown: true, Conditions: []string{"", "", "", "", "", "", "", ""},
			Machines: MachineCounts{Total: 1, OnTarget: 1, Nodes: 2, OffImage: 1, OffConfig: 1, OffTarget: 1}, MaxUnavailable: 1},
		{Name: "infra", Layered: true, HasImage: true, Paused: true, TargetKnown: true, Conditions: []string{"false", "false", "true", "true", "false", "unknown", "", ""},
			Machines: MachineCounts{Total: 3, Unavailable: 1, Degraded: 1, OnCurrentImage: 2, OnTarget: 1, Nodes: 3, Working: 1, Failing: 1, OffImage: 3, OffConfig: 3, OffTarget: 3}, MaxUnavailable: 1},
		{Name: "plain", Conditions: []string{"", "", "", "", "", "", "", ""}, Machines: MachineCounts{Nodes: 1, Working: 1}, MaxUnavailable: 1},
	}
	if got := AnalyzeRollout(c).Pools; !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestAnalyzeRolloutEmpty(t *testing.T) {
	r := AnalyzeRollout(&Cluster{Nodes: []*metav1.PartialObjectMetadata{rolloutNode("n", "infra")}})
	if len(r.Pools) != 0 || len(r.Nodes) != 0 {
		t.Errorf("got %+v, want nothing without pools", r)
	}
}

// BenchmarkAnalyzeRollout is a 5,000-node cluster: four pools, one layered,
// a MachineConfigNode with the full condition set per node, 1% degraded.
func BenchmarkAnalyzeRollout(b *testing.B) {
	c := &Cluster{MachineOSConfigs: []*mcfgv1.MachineOSConfig{layeredMOSC("infra", rolloutImage)}}
	for _, p := range []string{"master", "worker", "infra", "gpu"} {
		c.MachineConfigPools = append(c.MachineConfigPools, selectingPool(p, nodeRolePrefix+p))
	}
	full := mcnConds("UpdatePrepared=True", "UpdateExecuted=Unknown", "UpdatePostActionComplete=False", "UpdateComplete=False",
		"Resumed=False", "Drained=True", "AppliedFiles=False", "AppliedOSImage=Unknown", "Cordoned=True", "RebootedNode=False",
		"Updated=False", "Uncordoned=False", "ImagePulledFromRegistry=Unknown", "NodeDegraded=False",
		"PinnedImageSetsDegraded=False", "PinnedImageSetsProgressing=False")
	for i := range 5000 {
		name := "node-" + strconv.Itoa(i)
		n := rolloutNode(name, []string{"worker", "infra", "gpu"}[i%3], "desiredImage="+rolloutImage, "currentImage="+rolloutOld, "state=Working")
		if i%100 == 0 {
			n = rolloutNode(name, "infra", "desiredImage="+rolloutImage, "state=Degraded", "reason="+rolloutManifestUnknown)
		}
		c.Nodes = append(c.Nodes, n)
		c.MachineConfigNodes = append(c.MachineConfigNodes, &mcfgv1.MachineConfigNode{
			ObjectMeta: metav1.ObjectMeta{Name: name}, Status: mcfgv1.MachineConfigNodeStatus{Conditions: full},
		})
	}
	b.ReportAllocs()
	for b.Loop() {
		AnalyzeRollout(c)
	}
}

// TestPoolUpdateStopped: the node controller's Updating=False messages
// (pkg/controller/node/status.go calculateStatus); a failed build's says
// nothing of the cause, which is that build's.
func TestPoolUpdateStopped(t *testing.T) {
	// Failed with no start, Job or pod: startBuild's Containerfile
	// validation.
	failed := &mcfgv1.MachineOSBuild{
		ObjectMeta: metav1.ObjectMeta{Name: "infra-1a2b"},
		Spec:       mcfgv1.MachineOSBuildSpec{MachineOSConfig: mcfgv1.MachineOSConfigReference{Name: "infra"}},
		Status: mcfgv1.MachineOSBuildStatus{
			Conditions: []metav1.Condition{{Type: string(mcfgv1.MachineOSBuildFailed), Status: metav1.ConditionTrue}},
		},
	}
	tests := []struct {
		status  corev1.ConditionStatus
		message string
		want    classify.Class // "" for no stop
	}{
		{corev1.ConditionFalse, "Pool update stopped due to OS image build failure (mosb: infra-1a2b)", classify.ContainerfileInvalid},
		{corev1.ConditionFalse, "Pool is paused; OS image build failed (mosb: infra-gone)", classify.Unknown},
		{corev1.ConditionFalse, "Pool update stopped due to OS image build being interrupted (mosb: infra-1a2b)", classify.BuildInterrupted},
		{corev1.ConditionFalse, "Pool update paused due to degraded condition", classify.PoolDegradedBlocksBuild},
		{corev1.ConditionFalse, "Pool is paused; OS image build was interrupted (mosb: infra-1a2b)", classify.BuildInterrupted},
		{corev1.ConditionFalse, "Pool is paused; OS image build completed successfully (mosb: infra-1a2b)", ""},
		{corev1.ConditionTrue, "Pool is waiting for OS image build to complete (mosb: infra-1a2b)", ""},
		{corev1.ConditionFalse, "", ""},
	}
	for _, tt := range tests {
		pool := selectingPool("infra", nodeRolePrefix+"infra")
		pool.Status.Conditions = []mcfgv1.MachineConfigPoolCondition{{Type: mcfgv1.MachineConfigPoolUpdating, Status: tt.status, Message: tt.message}}
		c := &Cluster{MachineConfigPools: []*mcfgv1.MachineConfigPool{pool}, MachineOSBuilds: []*mcfgv1.MachineOSBuild{failed}}
		got := AnalyzeRollout(c).Pools[0].Stopped
		switch {
		case tt.want == "" && got != nil:
			t.Errorf("%q: stopped %+v, want not stopped", tt.message, got)
		case tt.want != "" && (got == nil || got.Class != tt.want || got.Excerpt != tt.message):
			t.Errorf("%q: %+v, want %s quoting the message", tt.message, got, tt.want)
		}
	}
}

// TestPoolOffTargetCounts: the pool counts are the sums of the nodes'
// node_layered_image_mismatch and node_config_mismatch, over the nodes
// image mode concerns.
func TestPoolOffTargetCounts(t *testing.T) {
	infra := selectingPool("infra", nodeRolePrefix+"infra")
	c := &Cluster{
		MachineConfigPools: []*mcfgv1.MachineConfigPool{infra},
		MachineOSConfigs:   []*mcfgv1.MachineOSConfig{layeredMOSC("infra", rolloutImage)},
		Nodes: []*metav1.PartialObjectMetadata{
			rolloutNode("image", "infra", "currentImage="+rolloutOld, "desiredImage="+rolloutImage, "currentConfig=c1", "desiredConfig=c1"),
			rolloutNode("config", "infra", "currentImage="+rolloutImage, "desiredImage="+rolloutImage, "currentConfig=c1", "desiredConfig=c2"),
			rolloutNode("both", "infra", "currentImage="+rolloutOld, "desiredImage="+rolloutImage, "currentConfig=c1", "desiredConfig=c2"),
			rolloutNode("done", "infra", "currentImage="+rolloutImage, "desiredImage="+rolloutImage, "currentConfig=c2", "desiredConfig=c2"),
		},
	}
	m := AnalyzeRollout(c).Pools[0].Machines
	if m.OffImage != 2 || m.OffConfig != 2 || m.OffTarget != 3 {
		t.Errorf("off image %d, config %d, target %d; want 2, 2, 3", m.OffImage, m.OffConfig, m.OffTarget)
	}
}
