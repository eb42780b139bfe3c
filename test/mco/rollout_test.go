//go:build e2emco

package mco

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ocl-exporter/ocl_exporter/test/cluster"
)

// The layered pool of the healthy-rollout-done snapshot and its nodes.
const (
	pool        = "layered"
	newRendered = "rendered-layered-2b9e4f6a1c3d5e7f9a0b2c4d6e8f1a3b"
	// newDigest is the digest the test's registry gives the new image.
	newDigest = "sha256:c4e6a8b0d2f4a6c8e0b2d4f6a8c0e2b4d6f8a0c2e4b6d8f0a2c4e6b8d0f2a4c6"
	newImage  = "quay.io/example-org/layered-os@" + newDigest
)

var poolNodes = []string{
	"ip-10-0-17-233.us-east-2.compute.internal",
	"ip-10-0-44-9.us-east-2.compute.internal",
	"ip-10-0-52-118.us-east-2.compute.internal",
}

// TestBuildSucceedsAndRollsOut replays healthy-new-rendered-config: a
// kernel argument gives pool layered a new rendered config; the MCO's build
// controller builds an image for it, the node controller rolls it out node
// by node. The test plays the render controller (the new rendered config:
// the render controller is not part of this suite), the Job controller and
// kubelet (the build pod runs, then succeeds: no container runs here), the
// build pod's digest container (the registry's digest) and the
// machine-config-daemon (each targeted node updates: no node runs here).
func TestBuildSucceedsAndRollsOut(t *testing.T) {
	runIncidentFrom(t, "healthy-new-rendered-config", false,
		append(newConfigBuildSteps(false, 25), rolloutSteps(newImage, poolNodes, 26, 34, 42, 50)...))
}

// TestOSStreamRebuild replays healthy-os-stream-rebuild: the default OS
// image stream changes, the render controller (played) renders pool
// layered's config on the new stream's base images, and the MCO rebuilds
// and rolls out its image as for any new rendered config; the build,
// pulling a base no node has, takes 45 minutes, and nothing pages.
func TestOSStreamRebuild(t *testing.T) {
	runIncidentFrom(t, "healthy-os-stream-rebuild", false,
		append(newConfigBuildSteps(false, 45), rolloutSteps(newImage, poolNodes, 46, 54, 62, 70)...))
}

// TestPausedPool replays healthy-paused-pool: the admin pauses pool
// layered and adds the kernel argument; the build runs and succeeds while
// the pool is paused, the node controller targets no node until the admin
// unpauses it at minute 400. The test plays what
// TestBuildSucceedsAndRollsOut plays, and the admin's pause and unpause.
func TestPausedPool(t *testing.T) {
	runIncidentFrom(t, "healthy-paused-pool", false, append(append(newConfigBuildSteps(true, 25),
		step{at: 400, note: "the admin unpauses the pool",
			play: func(ctx context.Context, w *world, in *incident) error { return setPaused(ctx, w, false) },
			done: func(ctx context.Context, w *world, in *incident) string {
				if m := poolCondition(ctx, w, "Updating", "True", "waiting for nodes to apply OS image"); m != "" {
					return m
				}
				return firstTargeted(ctx, w, newImage, poolNodes)
			}}),
		rolloutSteps(newImage, poolNodes, 401, 409, 417, 425)...))
}

// newConfigBuildSteps are the new rendered config of
// healthy-new-rendered-config and its build, to its success at minute
// built; with paused, the pool is paused first and its messages say so.
func newConfigBuildSteps(paused bool, built int) []step {
	waiting := map[bool]string{false: "waiting for nodes to apply OS image", true: "Pool is paused; OS image build completed successfully"}[paused]
	building := map[bool]string{false: "waiting for OS image build to complete", true: "Pool is paused; OS image build in progress"}[paused]
	return []step{
		// The lifecycle's minute 0, the pool waiting for a new build to
		// start, lasts the build controller's UpdateDelay (5 s) here: the
		// first record is minute 1's, and stands for minute 0 too.
		{at: 1, note: "a MachineConfig renders a new config for the pool; the machine-os-builder creates the build and its Job",
			play: func(ctx context.Context, w *world, in *incident) error {
				if paused {
					if err := setPaused(ctx, w, true); err != nil {
						return err
					}
				}
				return renderNewConfig(ctx, w, in)
			},
			done: func(ctx context.Context, w *world, in *incident) string {
				if m := newBuildJob(ctx, w, in, "layered-d41c8e2a7f3b49d6a0e5c1b8f2d7a3e6"); m != "" {
					return m
				}
				if m := jobPullsNoOSImage(ctx, w, in); m != "" {
					return m
				}
				if m := buildCondition(ctx, w, in, "Prepared", "True"); m != "" {
					return m
				}
				// The node controller's next sync (updateDelay, 5 s).
				return poolCondition(ctx, w, "ImageBuildDegraded", "False", "New build started")
			}},
		{at: 2, note: "the Job's pod runs (played)",
			play: func(ctx context.Context, w *world, in *incident) error {
				return w.startBuildPod(ctx, "build-"+in.mosb, "h2k7m")
			},
			done: func(ctx context.Context, w *world, in *incident) string {
				if m := buildCondition(ctx, w, in, "Building", "True"); m != "" {
					return m
				}
				return poolCondition(ctx, w, "Updating", "True", building)
			}},
		{at: built, note: "the build pod pushes the image and succeeds (played); the MCO cleans up",
			play: func(ctx context.Context, w *world, in *incident) error {
				return w.succeedBuildPod(ctx, "build-"+in.mosb, "h2k7m", in.mosb, newDigest)
			},
			done: func(ctx context.Context, w *world, in *incident) string {
				if m := buildCondition(ctx, w, in, "Succeeded", "True"); m != "" {
					return m
				}
				if w.get(ctx, jobGVR, mcoNamespace, "build-"+in.mosb) != nil {
					return "the deletion of the succeeded build's Job"
				}
				if c := conditions(w.get(ctx, mcpGVR, "", pool))["Updating"]; !strings.Contains(c.Message, waiting) {
					return fmt.Sprintf("pool %s Updating %q (has %v)", pool, waiting, c)
				}
				// The build controller's text, until the node controller's
				// next sync writes its own (status.go calculateStatus).
				if m := poolCondition(ctx, w, "ImageBuildDegraded", "False", "Build completed successfully"); m != "" {
					return m
				}
				if paused {
					return ""
				}
				return firstTargeted(ctx, w, newImage, poolNodes)
			}},
	}
}

// setPaused plays the admin pausing or unpausing the pool.
func setPaused(ctx context.Context, w *world, paused bool) error {
	return w.mergePatch(ctx, mcpGVR, "", pool, map[string]any{"spec": map[string]any{"paused": paused}}, false)
}

// rolloutSteps play the machine-config-daemon on each of nodes the node
// controller targets with image, one at a time (maxUnavailable 1): the
// first is targeted at minute at[0] and starts working, each next one is
// targeted once the previous is done, and the pool is Updated when the
// last is.
func rolloutSteps(image string, nodes []string, at ...int) []step {
	var steps []step
	var working string
	for i, m := range at {
		s := step{at: m}
		if i < len(nodes) {
			n := i + 1
			s.note = fmt.Sprintf("the node controller targets node %d of %d; its daemon works (played)", n, len(nodes))
			s.done = func(ctx context.Context, w *world, in *incident) string {
				targeted := w.nodesTargeting(ctx, nodes, image)
				if len(targeted) != n {
					return fmt.Sprintf("desiredImage %s on %d nodes (has %v)", image, n, targeted)
				}
				for _, t := range targeted {
					if t != working && !done(ctx, w, t) {
						working = t
						if err := w.daemonWorking(ctx, t); err != nil {
							return err.Error()
						}
					}
				}
				// The node controller counts the working node
				// unavailable on its next sync (updateDelay, 5 s).
				return poolCount(ctx, w, "unavailableMachineCount", 1)
			}
		} else {
			s.note = "the last node is done; the pool is Updated"
			s.done = func(ctx context.Context, w *world, in *incident) string {
				return poolCondition(ctx, w, "Updated", "True", "All nodes are updated")
			}
		}
		if i > 0 {
			s.play = func(ctx context.Context, w *world, in *incident) error { return w.daemonDone(ctx, working) }
		}
		steps = append(steps, s)
	}
	return steps
}

// done says whether the daemon has finished on node.
func done(ctx context.Context, w *world, node string) bool {
	u := w.get(ctx, nodeGVR, "", node)
	return u != nil && u.GetAnnotations()[stateAnno] == "Done" && u.GetAnnotations()[currentConfigAnno] == u.GetAnnotations()[desiredConfigAnno] &&
		u.GetAnnotations()[currentImageAnno] == u.GetAnnotations()[desiredImageAnno]
}

// renderNewConfig plays the render controller on the MachineConfigs the
// lifecycle's stage 0 applies: the new rendered config becomes the pool's.
func renderNewConfig(ctx context.Context, w *world, in *incident) error {
	mcs, err := cluster.LoadDir(filepath.Join(in.l.Dir, in.l.Stages[0].Apply[0]))
	if err != nil {
		return err
	}
	sources, err := w.poolSources(ctx)
	if err != nil {
		return err
	}
	for _, mc := range mcs {
		if err := w.kube.Create(ctx, mc); err != nil {
			return fmt.Errorf("MachineConfig %s: %w", mc.GetName(), err)
		}
		if mc.GetName() != newRendered {
			sources = append(sources, mc.GetName())
		}
	}
	slices.Sort(sources)
	return w.renderConfig(ctx, pool, newRendered, sources)
}

// poolSources are the MachineConfigs of the pool's rendered config.
func (w *world) poolSources(ctx context.Context) ([]string, error) {
	p := w.get(ctx, mcpGVR, "", pool)
	if p == nil {
		return nil, fmt.Errorf("no pool %s", pool)
	}
	src, _, _ := unstructured.NestedSlice(p.Object, "spec", "configuration", "source")
	var out []string
	for _, s := range src {
		m, _ := s.(map[string]any)
		name, _ := m["name"].(string)
		out = append(out, name)
	}
	return out, nil
}

// newBuildJob waits for the MCO's new build of the incident and its Job,
// and maps its generated name to the lifecycle's.
func newBuildJob(ctx context.Context, w *world, in *incident, lifecycleName string) string {
	for _, b := range w.buildsOf(ctx, pool) {
		if !slices.Contains(in.seeded, b) && in.names[b] == "" {
			in.mosb = b
			in.names[b] = lifecycleName
		}
	}
	if in.names[in.mosb] != lifecycleName {
		return "a new MachineOSBuild for pool " + pool
	}
	if w.get(ctx, jobGVR, mcoNamespace, "build-"+in.mosb) == nil {
		return "the Job build-" + in.mosb
	}
	return ""
}

// jobPullsNoOSImage says which container of the incident's build Job runs
// an OS image, "" when none does. Before OCPBUGS-57473's fix (#5794, in
// 4.23, 5.0 and main) its create-digest-configmap container ran the base
// OS image (4.18 to 4.21 BaseOSContainerImage, 4.22 the rendered config's
// osImageURL), which the kubelet pulled beside the build's own pull:
// twice the time, gigabytes in the node's image store. Now the buildah
// FROM pulls it, once (buildrequest.go toBuildahPod: both containers run
// the MCO's image).
func jobPullsNoOSImage(ctx context.Context, w *world, in *incident) string {
	job := w.get(ctx, jobGVR, mcoNamespace, "build-"+in.mosb)
	mc := w.get(ctx, mcGVR, "", newRendered)
	if job == nil || mc == nil {
		return "the build Job and its rendered config"
	}
	osImage, _, _ := unstructured.NestedString(mc.Object, "spec", "osImageURL")
	for _, field := range []string{"initContainers", "containers"} {
		cs, _, _ := unstructured.NestedSlice(job.Object, "spec", "template", "spec", field)
		for _, c := range cs {
			m, _ := c.(map[string]any)
			if img, _ := m["image"].(string); img == osImage || img == baseOSContainerImage {
				return fmt.Sprintf("container %v of Job build-%s running the OS image %s (OCPBUGS-57473)", m["name"], in.mosb, img)
			}
		}
	}
	return ""
}

// baseOSContainerImage is the release's base OS image
// (testdata/cluster.yaml's ControllerConfig and images.json).
const baseOSContainerImage = "registry.build06.ci.openshift.org/ci-ln-bfn63jk/stable@sha256:64f7c4d00f741fb0297b7a1741a097c511293b65ac1dd1bad5306b3a2e665c6d"

// poolCondition says what the pool lacks of the condition, "" when it has it.
func poolCondition(ctx context.Context, w *world, typ, status, message string) string {
	return poolConditionOf(ctx, w, pool, typ, status, message)
}

// buildCondition says what the incident's build lacks of the condition.
func buildCondition(ctx context.Context, w *world, in *incident, typ, status string) string {
	if hasCondition(w.get(ctx, mosbGVR, "", in.mosb), typ, status, "") {
		return ""
	}
	return fmt.Sprintf("MachineOSBuild %s condition %s=%s", in.mosb, typ, status)
}

// runBuildPod plays the Job controller and the kubelet once the MCO has
// created the incident's build Job: its pod runs. It says what the build
// lacks until it reads Building.
func (w *world) runBuildPod(ctx context.Context, in *incident, suffix string) string {
	job := "build-" + in.mosb
	if w.get(ctx, podGVR, mcoNamespace, job+"-"+suffix) == nil {
		if err := w.startBuildPod(ctx, job, suffix); err != nil {
			return err.Error()
		}
	}
	return buildCondition(ctx, w, in, "Building", "True")
}

// ephemeralLeft names what is left of a build's ephemeral ConfigMaps and
// Secrets, which the build controller's cleaner deletes with the build.
func (w *world) ephemeralLeft(ctx context.Context, build string) string {
	for _, gvr := range []schema.GroupVersionResource{cmGVR, secretGVR} {
		list, err := w.resource(gvr, mcoNamespace).List(ctx, metav1.ListOptions{LabelSelector: annoPrefix + "machine-os-build=" + build})
		if err != nil {
			return err.Error()
		}
		if len(list.Items) > 0 {
			return fmt.Sprintf("the deletion of %s %s", gvr.Resource, list.Items[0].GetName())
		}
	}
	return ""
}

// poolCount says what the pool lacks of a status count, "" when it has it.
func poolCount(ctx context.Context, w *world, field string, want int64) string {
	p := w.get(ctx, mcpGVR, "", pool)
	if p == nil {
		return "pool " + pool
	}
	got, _, _ := unstructured.NestedInt64(p.Object, "status", field)
	if got == want {
		return ""
	}
	return fmt.Sprintf("pool %s status.%s %d (has %d)", pool, field, want, got)
}

// firstTargeted says what the node controller has yet to write of its
// first target once a build succeeded: the MachineOSConfig names the
// image, and its next sync (updateDelay, 5 s after the one that reported
// the pool waiting for nodes) picks a node, counted unavailable.
func firstTargeted(ctx context.Context, w *world, image string, nodes []string) string {
	if targeted := w.nodesTargeting(ctx, nodes, image); len(targeted) != 1 {
		return fmt.Sprintf("desiredImage %s on one node (has %v)", image, targeted)
	}
	return poolCount(ctx, w, "unavailableMachineCount", 1)
}
