//go:build e2emco

package mco

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// seed004 names: the failing build of the seed, its Job and the suffixes
// of its four pods, in the order the Job controller created them.
const (
	failingBuild = "layered-a9d6cc1c8ff0e876884feb344f8d637f"
	failingJob   = "build-" + failingBuild
	fixedDigest  = "sha256:7b3e9d1f5a2c8e4b6d0f1a3c5e7b9d2f4a6c8e0b1d3f5a7c9e2b4d6f8a0c1e3b"
	fixedImage   = "quay.io/example-org/layered-os@" + fixedDigest
	fixedBuild   = "layered-5e1d0c7b9a8f46e2b3c4d5e6f7a8b9c0"
)

// seed004Nodes are the seed's pool layered: two nodes.
var seed004Nodes = []string{poolNodes[0], poolNodes[2]}

// TestBuildFailsRetriesThenFailsForGood replays
// seed004-containerfile-failure from its minute 0 (the first pod failed,
// the Job's first retry runs): each retry fails the same way until the Job
// gives up, the admin fixes the Containerfile, the MCO builds again and
// rolls the image out. The test plays the Job controller and kubelet (each
// pod's failure, the next retry, the Job's BackoffLimitExceeded: no
// container runs here, and the Job controller's backoff is its own timer),
// the admin's edit, the build pod's digest container (the registry's
// digest) and the machine-config-daemon on each targeted node.
func TestBuildFailsRetriesThenFailsForGood(t *testing.T) {
	var message string // the buildah output of each failed pod, from the seed
	retry := func(at int, failing, next string, failed int) step {
		return step{at: at, note: fmt.Sprintf("pod %s fails like the first (played); retry %d runs", failing, failed),
			play: func(ctx context.Context, w *world, in *incident) error {
				if err := w.failBuildPod(ctx, failingJob, failing, failed, message); err != nil {
					return err
				}
				return w.startBuildPod(ctx, failingJob, next)
			},
			done: func(ctx context.Context, w *world, in *incident) string {
				return buildCondition(ctx, w, in, "Building", "True")
			}}
	}
	runIncidentFrom(t, "seed004-containerfile-failure", true, append([]step{
		{at: 0, note: "the first pod failed; the first retry runs (the lifecycle's minute 0, seeded)",
			play: func(ctx context.Context, w *world, in *incident) error {
				in.mosb = failingBuild
				message = terminationMessage(in.states[0].Objects, failingJob+"-vq7ds")
				if message == "" {
					return fmt.Errorf("no termination message on the seed's first pod")
				}
				return nil
			},
			done: buildRunning},
		retry(7, "k2w9p", "x8mzt", 2),
		retry(14, "x8mzt", "hc5nl", 3),
		{at: 20, note: "the last retry fails; the Job gives up (played): the build is Failed",
			play: func(ctx context.Context, w *world, in *incident) error {
				return w.failBuildPod(ctx, failingJob, "hc5nl", 4, message)
			},
			done: func(ctx context.Context, w *world, in *incident) string {
				if m := buildCondition(ctx, w, in, "Failed", "True"); m != "" {
					return m
				}
				return poolCondition(ctx, w, "ImageBuildDegraded", "True", "")
			}},
		{at: 45, note: "the admin fixes the Containerfile: the MCO starts a new build, deletes the failed one; the new build's pod runs (played)",
			play: fixContainerfile,
			done: func(ctx context.Context, w *world, in *incident) string {
				return w.replacedAndRunning(ctx, in, fixedBuild, failingBuild, "r5t8w")
			}},
		{at: 70, note: "the new build pushes its image and succeeds (played); the MCO cleans up",
			play: func(ctx context.Context, w *world, in *incident) error {
				return w.succeedBuildPod(ctx, "build-"+in.mosb, "r5t8w", in.mosb, fixedDigest)
			},
			done: func(ctx context.Context, w *world, in *incident) string {
				if m := buildCondition(ctx, w, in, "Succeeded", "True"); m != "" {
					return m
				}
				if w.get(ctx, jobGVR, mcoNamespace, "build-"+in.mosb) != nil {
					return "the deletion of the succeeded build's Job"
				}
				// No node runs the new image: the node controller's next
				// count says so.
				if m := poolCount(ctx, w, "updatedMachineCount", 0); m != "" {
					return m
				}
				if m := poolCondition(ctx, w, "Updating", "True", "waiting for nodes to apply OS image"); m != "" {
					return m
				}
				return firstTargeted(ctx, w, fixedImage, seed004Nodes)
			}},
	}, rolloutSteps(fixedImage, seed004Nodes, 71, 79, 87)...))
}

// fixContainerfile plays the admin's fix: the Containerfile of the
// lifecycle's minute 45.
func fixContainerfile(ctx context.Context, w *world, in *incident) error {
	var fixed []any
	for _, s := range in.states {
		if s.At != 45 {
			continue
		}
		for _, u := range s.Objects {
			if u.GetKind() == "MachineOSConfig" && u.GetName() == pool {
				fixed, _, _ = unstructured.NestedSlice(u.Object, "spec", "containerFile")
			}
		}
	}
	if fixed == nil {
		return fmt.Errorf("the lifecycle has no MachineOSConfig %s at minute 45", pool)
	}
	return w.mergePatch(ctx, moscGVR, "", pool, map[string]any{"spec": map[string]any{"containerFile": fixed}}, false)
}

// terminationMessage is the image-build container's termination message of
// a pod among objs.
func terminationMessage(objs []*unstructured.Unstructured, pod string) string {
	for _, u := range objs {
		if u.GetKind() != "Pod" || u.GetName() != pod {
			continue
		}
		statuses, _, _ := unstructured.NestedSlice(u.Object, "status", "initContainerStatuses")
		for _, s := range statuses {
			m, _ := s.(map[string]any)
			msg, _, _ := unstructured.NestedString(m, "state", "terminated", "message")
			if msg != "" {
				return msg
			}
		}
	}
	return ""
}
