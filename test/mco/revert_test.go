//go:build e2emco

package mco

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestRevertFromLayering replays healthy-revert-to-non-layered: after a
// successful rollout the admin deletes MachineOSConfig layered. The build
// controller deletes its build and the build's digest ConfigMap
// (deleteMachineOSConfig, pkg/controller/build/reconciler.go); the node
// controller, finding no MachineOSConfig for the pool, treats it as not
// layered and reverts the nodes to the pool's rendered config one at a
// time: it removes each node's desiredImage (SetDesiredStateFromPool),
// and counts a node still booted into an image as not done until its
// daemon is (isNodeImageDone, layered_node_state.go). The test plays the
// admin's deletion and the machine-config-daemon of each node the node
// controller targets (no node runs here); each step also waits for the
// pool's counts, so that what is recorded is the node controller's sync
// after the daemon's write.
func TestRevertFromLayering(t *testing.T) {
	steps := rolloutSteps("", poolNodes, 0, 8, 16, 24)
	steps[0].note = "the admin deletes MachineOSConfig layered; " + steps[0].note
	steps[0].play = deleteMachineOSConfig
	for i := range steps {
		done, unavailable := steps[i].done, int64(1)
		if i == len(poolNodes) {
			unavailable = 0
		}
		steps[i].done = func(ctx context.Context, w *world, in *incident) string {
			if builds := w.buildsOf(ctx, pool); len(builds) > 0 {
				return fmt.Sprintf("the deletion of the builds %v", builds)
			}
			if m := done(ctx, w, in); m != "" {
				return m
			}
			return poolCounts(ctx, w, int64(i), unavailable)
		}
	}
	runIncidentFrom(t, "healthy-revert-to-non-layered", false, steps)
}

// deleteMachineOSConfig plays the admin's deletion and the operator's
// answer: with no MachineOSConfig left it deletes the machine-os-builder
// Deployment (startOrUpdateMachineOSBuilderDeployment,
// pkg/operator/sync.go), its pod going with it. The machine-os-builder the
// suite runs stays up: it has nothing left to do. The admin acts on a pool
// the node controller has long synced: first its status for the
// rolled-out build ("Build completed successfully", which the seed lacks).
func deleteMachineOSConfig(ctx context.Context, w *world, in *incident) error {
	if err := w.waitUntil(ctx, func() string {
		return poolCondition(ctx, w, "ImageBuildDegraded", "False", "Build completed successfully")
	}); err != nil {
		return err
	}
	if err := w.resource(moscGVR, "").Delete(ctx, pool, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("delete MachineOSConfig %s: %w", pool, err)
	}
	if err := w.resource(deploymentGVR, mcoNamespace).Delete(ctx, "machine-os-builder", metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("the operator's deletion of the machine-os-builder Deployment: %w", err)
	}
	pods, err := w.resource(podGVR, mcoNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range pods.Items {
		if strings.HasPrefix(pods.Items[i].GetName(), "machine-os-builder-") {
			if err := w.kube.Remove(ctx, &pods.Items[i]); err != nil {
				return fmt.Errorf("the machine-os-builder pod: %w", err)
			}
		}
	}
	return nil
}

// waitUntil polls until what says nothing is missing.
func (w *world) waitUntil(ctx context.Context, what func() string) error {
	deadline := time.Now().Add(settleTimeout)
	for m := what(); m != ""; m = what() {
		if time.Now().After(deadline) {
			return fmt.Errorf("after %s the MCO has not written %s", settleTimeout, m)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return nil
}

// poolCounts says what the pool's status lacks of updated (and ready)
// machines and unavailable ones, "" when it has them.
func poolCounts(ctx context.Context, w *world, updated, unavailable int64) string {
	p := w.get(ctx, mcpGVR, "", pool)
	if p == nil {
		return "pool " + pool
	}
	want := map[string]int64{"updatedMachineCount": updated, "readyMachineCount": updated, "unavailableMachineCount": unavailable}
	for f, n := range want {
		if got, _, _ := unstructured.NestedInt64(p.Object, "status", f); got != n {
			return fmt.Sprintf("pool %s status.%s %d (has %d)", pool, f, n, got)
		}
	}
	return ""
}
