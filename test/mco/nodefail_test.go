//go:build e2emco

package mco

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// seed002 names: pool infra and its failing node.
const (
	infraPool   = "infra"
	failingNode = "ip-10-0-75-69.us-east-2.compute.internal"
)

// TestNodeFailsItsUpdate replays seed002-manifest-unknown from its minute
// 0: pool infra rolls out an image whose manifest the registry lost, the
// daemon of ip-10-0-75-69 is Degraded; twenty minutes later its next
// attempt fails again, at minute 40 the tag is back and the node takes
// the image. The node controller decides the pool's NodeDegraded,
// Degraded and Updating conditions, their messages and its counts. The
// test plays the machine-config-daemon of the failing node (no node runs
// here) as the lifecycle's stages write it: its node annotations and its
// MachineConfigNode's conditions, which the node controller reads the
// degraded machines' messages from (status.go calculateStatus); at minute
// 20 they are the texts of the daemon at 7ff337a (see the lifecycle). At
// the end it plays the drain controller's uncordon, which the node
// controller's ready count waits for.
func TestNodeFailsItsUpdate(t *testing.T) {
	daemon := func(at int) func(context.Context, *world, *incident) error {
		return func(ctx context.Context, w *world, in *incident) error {
			return w.playDaemonAsLifecycle(ctx, in, at, failingNode)
		}
	}
	runIncidentFrom(t, "seed002-manifest-unknown", true, []step{
		{at: 0, note: "ip-10-0-75-69 is Degraded (seeded); its daemon's MachineConfigNodes (played)",
			play: createMachineConfigNodes,
			done: func(ctx context.Context, w *world, in *incident) string {
				// The seed has NodeDegraded and Updating already; the
				// ImageBuildDegraded text is the node controller's first sync.
				if m := poolConditionOf(ctx, w, infraPool, "NodeDegraded", "True", "manifest unknown"); m != "" {
					return m
				}
				if m := poolConditionOf(ctx, w, infraPool, "ImageBuildDegraded", "False", "Build completed successfully"); m != "" {
					return m
				}
				return poolConditionOf(ctx, w, infraPool, "Updating", "False", "Pool update paused due to degraded condition")
			}},
		{at: 20, note: "the daemon's next attempt fails for the same cause, with 7ff337a's text (played)", play: daemon(20),
			done: func(ctx context.Context, w *world, in *incident) string {
				return poolConditionOf(ctx, w, infraPool, "NodeDegraded", "True", "failed to update OS to")
			}},
		{at: 40, note: "the tag is restored; the daemon's retry pulls the image (played)", play: daemon(40),
			done: func(ctx context.Context, w *world, in *incident) string {
				if m := poolConditionOf(ctx, w, infraPool, "NodeDegraded", "False", ""); m != "" {
					return m
				}
				return poolConditionOf(ctx, w, infraPool, "Updating", "True", "Pool is waiting for nodes to apply OS image")
			}},
		{at: 46, note: "ip-10-0-75-69 is uncordoned and runs the image (played); the pool is Updated", play: daemon(46),
			done: func(ctx context.Context, w *world, in *incident) string {
				return poolConditionOf(ctx, w, infraPool, "Updated", "True", "All nodes are updated")
			}},
	})
}

// daemonAnnotations are the node annotations the daemon and the drain
// controller write (pkg/daemon/writer.go, pkg/daemon/daemon.go
// completeUpdate, pkg/controller/drain/drain_controller.go).
var daemonAnnotations = []string{stateAnno, reasonAnno, currentConfigAnno, currentImageAnno,
	annoPrefix + "desiredDrain", annoPrefix + "lastAppliedDrain"}

// playDaemonAsLifecycle plays what surrounds the node controller on node
// at minute at, as the lifecycle's state there has it:
// the daemon's annotations, the drain controller's cordon (and the node
// lifecycle controller's unschedulable taint), and the daemon's
// MachineConfigNode conditions. The node controller writes the rest.
func (w *world) playDaemonAsLifecycle(ctx context.Context, in *incident, at int, node string) error {
	want := in.stateObject(at, "Node", node)
	if want == nil {
		return fmt.Errorf("the lifecycle has no node %s at minute %d", node, at)
	}
	annos := map[string]any{}
	for _, k := range daemonAnnotations {
		if v, ok := want.GetAnnotations()[k]; ok {
			annos[k] = v
		} else {
			annos[k] = nil
		}
	}
	spec, _, _ := unstructured.NestedMap(want.Object, "spec")
	if err := w.mergePatch(ctx, nodeGVR, "", node, map[string]any{
		"metadata": map[string]any{"annotations": annos},
		"spec":     map[string]any{"unschedulable": spec["unschedulable"], "taints": spec["taints"]},
	}, false); err != nil {
		return err
	}
	mcn := in.stateObject(at, "MachineConfigNode", node)
	if mcn == nil {
		return nil
	}
	conds, _, _ := unstructured.NestedSlice(shiftTimes(mcn.DeepCopy().Object, in.begin.Sub(in.l.Start)).(map[string]any), "status", "conditions")
	cur := w.get(ctx, mcnGVR, "", node)
	if cur == nil {
		return fmt.Errorf("no MachineConfigNode %s", node)
	}
	if err := unstructured.SetNestedSlice(cur.Object, conds, "status", "conditions"); err != nil {
		return err
	}
	if _, err := w.resource(mcnGVR, "").UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("MachineConfigNode %s status: %w", node, err)
	}
	return nil
}

// stateObject is an object of the lifecycle's state at minute at.
func (in *incident) stateObject(at int, kind, name string) *unstructured.Unstructured {
	var found *unstructured.Unstructured
	for _, s := range in.states {
		if s.At > at {
			break
		}
		found = nil
		for _, u := range s.Objects {
			if u.GetKind() == kind && u.GetName() == name {
				found = u
			}
		}
	}
	return found
}

// createMachineConfigNodes plays each daemon creating its node's
// MachineConfigNode (upgrademonitor.GenerateAndApplyMachineConfigNodes),
// as the lifecycle's minute 0 has them, owned by the node. The
// configImage fields are left out: the ImageModeStatusReporting feature
// gate that adds them is off in the Default feature set at 7ff337a, and
// its CRD has no such field. The conditions stay the seed's, that gate's
// ImagePulledFromRegistry included: the node controller reads only
// NodeDegraded (and Updated with the gate on), the exporter all.
func createMachineConfigNodes(ctx context.Context, w *world, in *incident) error {
	for _, u := range in.states[0].Objects {
		if u.GetKind() != "MachineConfigNode" {
			continue
		}
		mcn := &unstructured.Unstructured{Object: shiftTimes(u.DeepCopy().Object, in.begin.Sub(in.l.Start)).(map[string]any)}
		unstructured.RemoveNestedField(mcn.Object, "spec", "configImage")
		unstructured.RemoveNestedField(mcn.Object, "status", "configImage")
		node := w.get(ctx, nodeGVR, "", mcn.GetName())
		if node == nil {
			return fmt.Errorf("no node %s for its MachineConfigNode", mcn.GetName())
		}
		mcn.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.GetName(), UID: node.GetUID()}})
		if err := w.kube.Create(ctx, mcn); err != nil {
			return fmt.Errorf("MachineConfigNode %s: %w", mcn.GetName(), err)
		}
	}
	return nil
}

// poolConditionOf says what the pool lacks of the condition, "" when it
// has it.
func poolConditionOf(ctx context.Context, w *world, name, typ, status, message string) string {
	p := w.get(ctx, mcpGVR, "", name)
	if hasCondition(p, typ, status, message) {
		return ""
	}
	got := conditions(p)[typ]
	return fmt.Sprintf("pool %s condition %s=%s %q (has %s %q)", name, typ, status, message, got.Status, strings.TrimSpace(got.Message))
}
