//go:build e2emco

package mco

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The builds and images of the MachineOSConfig incidents. The MCO names a
// build by an md5 of its inputs (buildrequest/machineosbuild.go
// getHashedName): the same seed and edits give the same names each run.
const (
	seededBuild   = "layered-c9ffb7fbf9b61c67f8c8c6f45d720352" // healthy-rollout-done's
	editedBuild   = "layered-7506374882de579ad11df2933bb829f8"
	reeditedBuild = "layered-8865d185eab2044aff30a676c950f292"
	// The digests the test's registry gives the images it pushes.
	reeditedDigest = "sha256:9a1c3e5b7d9f1a3c5e7b9d1f3a5c7e9b1d3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c"
	reeditedImage  = "quay.io/example-org/layered-os@" + reeditedDigest
	rebuiltDigest  = "sha256:2d4f6a8c0e2b4d6f8a0c2e4b6d8f0a2c4e6b8d0f2a4c6e8b0d2f4a6c8e0b2d4f"
	rebuiltImage   = "quay.io/example-org/layered-os@" + rebuiltDigest
)

// Containerfiles the admin writes into MachineOSConfig layered.
var (
	tmuxContainerfile  = "FROM configs AS final\nRUN dnf install -y tmux && dnf clean all"
	toolsContainerfile = "FROM configs AS final\nRUN dnf install -y tmux strace && dnf clean all"
)

// TestMachineOSConfigEditedMidBuild replays
// healthy-machineosconfig-edited-mid-build: pool layered is Updated on its
// image; the admin edits its Containerfile, and edits it again while the
// build runs. The build controller's updateMachineOSConfig sees the spec
// change and creates a build for the new inputs
// (createNewMachineOSBuildOrReuseExisting), then deletes the running one
// (deleteOtherBuildsForMachineOSConfig, which deletes every build of the
// MachineOSConfig but a succeeded one); the new build succeeds and rolls
// out. The test plays the admin's edits, the Job controller and kubelet
// (each build's pod runs, the last succeeds: no container runs here), the
// garbage collector (the deleted build's Job and pods), the build pod's
// digest container (the registry's digest) and the machine-config-daemon
// on each targeted node.
func TestMachineOSConfigEditedMidBuild(t *testing.T) {
	runIncidentFrom(t, "healthy-machineosconfig-edited-mid-build", false, append([]step{
		updatedAt0(),
		{at: 1, note: "the admin edits the Containerfile: the MCO creates a build and its Job",
			play: setContainerfile(tmuxContainerfile),
			done: func(ctx context.Context, w *world, in *incident) string {
				return newBuildPrepared(ctx, w, in, editedBuild)
			}},
		buildRuns(2, "p4n8c"),
		{at: 10, note: "the admin edits the Containerfile again: the MCO creates a build, deletes the running one; the new build's pod runs (played)",
			play: setContainerfile(toolsContainerfile),
			done: func(ctx context.Context, w *world, in *incident) string {
				return w.replacedAndRunning(ctx, in, reeditedBuild, in.mcoName(editedBuild), "w2j6q")
			}},
		succeeded(30, "w2j6q", reeditedDigest, reeditedImage),
	}, rolloutSteps(reeditedImage, poolNodes, 31, 39, 47, 55)...))
}

// updatedAt0 is the seed as the MCO finds it: the pool Updated on its
// image.
func updatedAt0() step {
	return step{at: 0, note: "the pool is Updated on its image (seeded)",
		done: func(ctx context.Context, w *world, in *incident) string {
			return poolCondition(ctx, w, "Updated", "True", "All nodes are updated")
		}}
}

// setContainerfile plays the admin writing the Containerfile.
func setContainerfile(content string) func(ctx context.Context, w *world, in *incident) error {
	return func(ctx context.Context, w *world, in *incident) error {
		return w.mergePatch(ctx, moscGVR, "", pool, map[string]any{"spec": map[string]any{"containerFile": []any{
			map[string]any{"containerfileArch": "NoArch", "content": content}}}}, false)
	}
}

// succeeded is the step where the incident's build pod pushes its image
// and succeeds (played), the MCO cleans up and targets the first node.
func succeeded(at int, suffix, digest, image string) step {
	return step{at: at, note: "the build pod pushes the image and succeeds (played); the MCO cleans up and picks the first node",
		play: func(ctx context.Context, w *world, in *incident) error {
			return w.succeedBuildPod(ctx, "build-"+in.mosb, suffix, in.mosb, digest)
		},
		done: func(ctx context.Context, w *world, in *incident) string {
			if m := buildCondition(ctx, w, in, "Succeeded", "True"); m != "" {
				return m
			}
			if w.get(ctx, jobGVR, mcoNamespace, "build-"+in.mosb) != nil {
				return "the deletion of the succeeded build's Job"
			}
			if m := poolCondition(ctx, w, "ImageBuildDegraded", "False", "Build completed successfully"); m != "" {
				return m
			}
			if m := poolCondition(ctx, w, "Updating", "True", "waiting for nodes to apply OS image"); m != "" {
				return m
			}
			return firstTargeted(ctx, w, image, poolNodes)
		}}
}

// newBuildPrepared says what the MCO has yet to write of a new build: it
// and its Job (named as the lifecycle names the build), Prepared, and the
// node controller's next sync (updateDelay, 5 s).
func newBuildPrepared(ctx context.Context, w *world, in *incident, lifecycleName string) string {
	if m := newBuildJob(ctx, w, in, lifecycleName); m != "" {
		return m
	}
	if m := buildCondition(ctx, w, in, "Prepared", "True"); m != "" {
		return m
	}
	return poolCondition(ctx, w, "ImageBuildDegraded", "False", "New build started")
}

// buildRuns is the step where the incident's build pod runs (played),
// and the node controller says so.
func buildRuns(at int, suffix string) step {
	return step{at: at, note: "the build's pod runs (played)",
		done: func(ctx context.Context, w *world, in *incident) string {
			if m := w.runBuildPod(ctx, in, suffix); m != "" {
				return m
			}
			return poolCondition(ctx, w, "Updating", "True", "waiting for OS image build to complete (mosb: "+in.mosb+")")
		}}
}

// replacedAndRunning says what the MCO has yet to write when a new build
// (named as the lifecycle names it) replaces the build old: the new build
// and its Job, old deleted with all it owns; then the new build's pod runs
// (played) and the node controller, on its first sync after the new
// build's status changes (updateDelay, 5 s: within the minute in a
// cluster), clears the previous build's ImageBuildDegraded and names the
// new build (status.go calculateStatus).
func (w *world) replacedAndRunning(ctx context.Context, in *incident, lifecycleName, old, suffix string) string {
	if m := newBuildJob(ctx, w, in, lifecycleName); m != "" {
		return m
	}
	if m := w.buildGone(ctx, old); m != "" {
		return m
	}
	if m := w.runBuildPod(ctx, in, suffix); m != "" {
		return m
	}
	if m := poolCondition(ctx, w, "ImageBuildDegraded", "False", "New build started"); m != "" {
		return m
	}
	return poolCondition(ctx, w, "Updating", "True", "waiting for OS image build to complete (mosb: "+in.mosb+")")
}

// buildRunning says what the MCO has yet to write of the incident's build
// running: Building, and the pool waiting for it.
func buildRunning(ctx context.Context, w *world, in *incident) string {
	if m := buildCondition(ctx, w, in, "Building", "True"); m != "" {
		return m
	}
	return poolCondition(ctx, w, "Updating", "True", "waiting for OS image build to complete")
}

// buildGone says what is left of a build the MCO deletes: the build, its
// Job, its pods (the garbage collector's, played) and its ephemeral
// objects.
func (w *world) buildGone(ctx context.Context, build string) string {
	if w.get(ctx, mosbGVR, "", build) != nil {
		return "the deletion of build " + build
	}
	if w.get(ctx, jobGVR, mcoNamespace, "build-"+build) != nil {
		return "the deletion of Job build-" + build
	}
	return w.ephemeralLeft(ctx, build)
}

// TestRebuildAnnotation replays healthy-rebuild-annotation: pool layered
// is Updated on its image; the admin annotates MachineOSConfig layered
// with machineconfiguration.openshift.io/rebuild. The build controller's
// updateMachineOSConfig calls rebuildMachineOSConfig: it deletes the
// current build (deleteMachineOSBuild: the digest ConfigMap, the build;
// the image stays, the nodes run it) and creates it again, under the name
// of its inputs (the current build's), whose start clears the annotation
// (updateMachineOSConfigStatus).
// The rebuild pushes a new digest, which rolls out. The test plays the
// admin's annotation, the Job controller and kubelet, the build pod's
// digest container (a new digest: the registry's) and the
// machine-config-daemon on each targeted node.
func TestRebuildAnnotation(t *testing.T) {
	runIncidentFrom(t, "healthy-rebuild-annotation", false, append([]step{
		updatedAt0(),
		{at: 1, note: "the admin annotates the MachineOSConfig to rebuild: the MCO deletes and recreates the build, and its Job",
			play: func(ctx context.Context, w *world, in *incident) error {
				return w.mergePatch(ctx, moscGVR, "", pool, map[string]any{"metadata": map[string]any{
					"annotations": map[string]any{rebuildAnno: ""}}}, false)
			},
			done: func(ctx context.Context, w *world, in *incident) string {
				// The MCO names the rebuild by its inputs, as it named the
				// current build in a cluster; the seed's name is invented,
				// so the rebuild maps to it.
				if m := w.buildGone(ctx, seededBuild); m != "" {
					return m
				}
				if _, ok := w.get(ctx, moscGVR, "", pool).GetAnnotations()[rebuildAnno]; ok {
					return "the rebuild annotation cleared"
				}
				return newBuildPrepared(ctx, w, in, seededBuild)
			}},
		buildRuns(2, "k5t2v"),
		succeeded(20, "k5t2v", rebuiltDigest, rebuiltImage),
	}, rolloutSteps(rebuiltImage, poolNodes, 21, 29, 37, 45)...))
}

// mcoName is the MCO's name of the lifecycle's build.
func (in *incident) mcoName(lifecycleName string) string {
	for mco, l := range in.names {
		if l == lifecycleName {
			return mco
		}
	}
	return lifecycleName
}

// TestMachineOSConfigDeletedMidBuild replays
// machineosconfig-deleted-mid-build: the first build of pool layered runs
// (one eviction retried: the seed004-build-evicted-retrying snapshot)
// when the admin gives up on layering and deletes MachineOSConfig layered.
// The build controller's deleteMachineOSConfig deletes the builds it
// controls (deleteMachineOSBuild: the digest ConfigMap, the build); the
// garbage collector deletes the Job, its pods and the ConfigMaps and
// Secrets the Job owns (jobimagebuilder.go start makes it their owner);
// the node controller, with no MachineOSConfig for the pool, reports it
// Updated on its rendered config, which its nodes never left. The test
// plays the admin's deletion, the garbage collector, and the operator
// removing the machine-os-builder Deployment, its pod and the global pull
// secret copy once no pool is layered (its own machine-os-builder process
// runs on: the MCO has nothing left to build).
func TestMachineOSConfigDeletedMidBuild(t *testing.T) {
	runIncidentFrom(t, "machineosconfig-deleted-mid-build", false, []step{
		{at: 0, note: "the first build runs (seeded)",
			play: func(ctx context.Context, w *world, in *incident) error {
				in.mosb = seededBuild
				return nil
			},
			done: buildRunning},
		{at: 5, note: "the admin deletes the MachineOSConfig: the MCO deletes its build; the operator removes the builder (played)",
			play: deleteLayering,
			done: func(ctx context.Context, w *world, in *incident) string {
				if m := w.buildGone(ctx, seededBuild); m != "" {
					return m
				}
				if pods := w.buildPods(ctx); len(pods) > 0 {
					return "the deletion of pod " + pods[0]
				}
				return poolCondition(ctx, w, "Updated", "True", "All nodes are updated")
			}},
	})
}

// deleteLayering plays the admin deleting MachineOSConfig layered, and the
// operator removing what only a layered pool needs.
func deleteLayering(ctx context.Context, w *world, in *incident) error {
	for _, o := range []struct {
		gvr       schema.GroupVersionResource
		namespace string
		name      string
	}{
		{moscGVR, "", pool},
		{deploymentGVR, mcoNamespace, "machine-os-builder"},
		{podGVR, mcoNamespace, "machine-os-builder-b8f48488f-lth94"},
		{secretGVR, mcoNamespace, "global-pull-secret-copy"},
	} {
		// At once: the kubelet, which ends a deleted pod, does not run.
		now := int64(0)
		if err := w.resource(o.gvr, o.namespace).Delete(ctx, o.name, metav1.DeleteOptions{GracePeriodSeconds: &now}); err != nil {
			return fmt.Errorf("delete %s %s: %w", o.gvr.Resource, o.name, err)
		}
	}
	return nil
}

// buildPods are the names of the pods of build Jobs.
func (w *world) buildPods(ctx context.Context) []string {
	list, err := w.resource(podGVR, mcoNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, p := range list.Items {
		if strings.HasPrefix(p.GetName(), "build-") {
			out = append(out, p.GetName())
		}
	}
	return out
}
