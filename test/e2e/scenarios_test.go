//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ocl-exporter/ocl_exporter/collector"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
	"github.com/ocl-exporter/ocl_exporter/test/cluster"
	seed "github.com/ocl-exporter/ocl_exporter/test/scenario"
)

// settle is how long the exporter may take to show a change.
const settle = 30 * time.Second

// timeValued families derive their value from creationTimestamp, which the
// API server sets when the test creates the object: only their series,
// not their values, can match the snapshot's.
var timeValued = []string{
	"mosb_creation_timestamp_seconds",
	"mosc_waiting_for_build_since_timestamp_seconds",
	"ocl_operator_degraded_event_timestamp_seconds", // an event's creation bounds its last time
}

// fixtureDirs are the seed scenarios and the example cluster. Scenarios
// in an older release's shape (v416-*: v1alpha1 MachineOSConfigs and
// MachineOSBuilds) are not: the API server serves today's CRDs, whose v1
// would refuse them, so they are read offline only (docs/versions.md).
func fixtureDirs(t *testing.T) []string {
	dirs, err := filepath.Glob(filepath.Join(env.scenarios, "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no scenarios under %s: %v", env.scenarios, err)
	}
	dirs = slices.DeleteFunc(dirs, func(d string) bool { return olderRelease.MatchString(filepath.Base(d)) })
	return append(dirs, filepath.Join(repoRoot, "examples", "snapshot"))
}

// olderRelease names a scenario written in an older release's shape.
var olderRelease = regexp.MustCompile(`^v4[0-9]+-`)

// TestScenarios plays each fixture directory on the API server: every
// object must pass the real schema (CEL included) under strict field
// validation; the live exporter must then export exactly what the offline
// snapshot source exports for the same files (the collector's golden
// files), and diagnose and a capture must read the cluster as the files
// (diagnoseLive); the scenario's transitions must show; and once the objects are
// deleted the scrape must be back to the empty cluster's.
func TestScenarios(t *testing.T) {
	for _, dir := range fixtureDirs(t) {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			objs, _ := play(t, dir)
			m := startMonitoring(t)
			diagnoseLive(t, dir)
			if want, decided, ok := expectedAlerts(t, name); ok {
				m.expectAlerts(t, want, decided)
			}
			if step := transitions[name]; step != nil {
				step(t, m, objs)
			}
			removeAndExpectBaseline(t, m, objs, settle)
		})
	}
}

// play creates dir's objects (deleted when the test ends) and waits until
// the exporter exports what the offline source exports for dir.
func play(t *testing.T, dir string) (objs []*unstructured.Unstructured, want series) {
	t.Helper()
	return playWithin(t, dir, settle)
}

// playWithin is play with the time the exporter may take to show dir.
func playWithin(t *testing.T, dir string, timeout time.Duration) (objs []*unstructured.Unstructured, want series) {
	t.Helper()
	objs, err := cluster.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	want = offline(t, dir)
	t.Cleanup(func() { _ = env.kube.removeAll(context.Background(), objs) })
	if err := env.kube.applyAll(t.Context(), objs); err != nil {
		t.Fatalf("the API server rejects the fixture %s: %v", dir, err)
	}
	if err := env.exporter.eventually(t.Context(), timeout, sameAs(want)); err != nil {
		t.Fatalf("live scrape differs from the offline snapshot source on %s: %v", dir, err)
	}
	return objs, want
}

// removeAndExpectBaseline deletes objs and wants the empty cluster's scrape
// within timeout, and no alert firing on m, when the test has one.
func removeAndExpectBaseline(t *testing.T, m *monitoring, objs []*unstructured.Unstructured, timeout time.Duration) {
	t.Helper()
	if err := env.kube.removeAll(t.Context(), objs); err != nil {
		t.Fatal(err)
	}
	if err := env.exporter.eventually(t.Context(), timeout, sameAs(env.baseline)); err != nil {
		t.Fatalf("series left after deleting every object: %v", err)
	}
	if m != nil {
		m.expectAlerts(t, nil, nil)
	}
}

// scenario is the directory of a seed scenario, whole (test/scenario).
func scenario(name string) string { return filepath.Join(env.scenarios, name) }

// materializeScenarios writes every seed scenario whole under dir, for
// the exporter and diagnose to read by its path as a user's snapshot.
func materializeScenarios(dir string) (string, error) {
	dirs, err := filepath.Glob(filepath.Join(repoRoot, "testdata", "scenarios", "*"))
	if err != nil {
		return "", err
	}
	if len(dirs) == 0 {
		return "", fmt.Errorf("no scenarios under %s", filepath.Join(repoRoot, "testdata", "scenarios"))
	}
	out := filepath.Join(dir, "scenarios")
	for _, d := range dirs {
		if err := seed.Materialize(d, filepath.Join(out, filepath.Base(d))); err != nil {
			return "", err
		}
	}
	return out, nil
}

// offline is what the exporter exports for dir in snapshot mode: the same
// loader, informers and collector on fake clientsets.
func offline(t *testing.T, dir string) series {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(collector.New(sourcetest.Source(t, dir), collector.DefaultOptions))
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*dto.MetricFamily{}
	for _, mf := range families {
		byName[mf.GetName()] = mf
	}
	return oclSeries(byName)
}

// cluster keeps the series about the cluster: not the exporter's own
// (ocl_exporter_*), which count requests and differ between modes.
func clusterSeries(s series) series {
	out := series{}
	for k, v := range s {
		if !strings.HasPrefix(k, "ocl_exporter_") {
			out[k] = v
		}
	}
	return out
}

// sameAs wants exactly want's cluster series, values included except for
// the time-valued families.
func sameAs(want series) expectation {
	want = clusterSeries(want)
	return func(got series) []string {
		got = clusterSeries(got)
		var diff []string
		for _, k := range slices.Sorted(maps.Keys(want)) {
			v, ok := got[k]
			switch {
			case !ok:
				diff = append(diff, fmt.Sprintf("missing %s %g", k, want[k]))
			case v != want[k] && !slices.Contains(timeValued, family(k)):
				diff = append(diff, fmt.Sprintf("%s is %g, want %g", k, v, want[k]))
			}
		}
		for _, k := range slices.Sorted(maps.Keys(got)) {
			if _, ok := want[k]; !ok {
				diff = append(diff, fmt.Sprintf("unexpected %s %g", k, got[k]))
			}
		}
		return diff
	}
}

// resourcesAvailable wants ocl_exporter_resource_available at v for every
// watched resource, and at 1-v for those named.
func resourcesAvailable(v float64, except ...string) expectation {
	want := series{}
	for _, r := range snapshot.Resources() {
		w := v
		if slices.Contains(except, r.Name) {
			w = 1 - v
		}
		want[seriesKey("ocl_exporter_resource_available", map[string]string{"resource": r.Name})] = w
	}
	return hasValues(want)
}

func allAvailable(v float64) expectation { return resourcesAvailable(v) }

// transitions are the later steps of a scenario, checked after its objects
// match the snapshot.
var transitions = map[string]func(t *testing.T, m *monitoring, objs []*unstructured.Unstructured){
	// The user creates the missing secrets, one at a time.
	"seed000-secrets-missing": func(t *testing.T, m *monitoring, _ []*unstructured.Unstructured) {
		missing := func(secret string) string {
			field := map[string]string{"rendered-image": "renderedImagePushSecret", "base-image-pull": "baseImagePullSecret"}[secret]
			return seriesKey("mosc_secret_missing", map[string]string{"machineosconfig": "infra", "pool": "infra", "field": field, "secret": secret})
		}
		createSecret(t, "rendered-image")
		expect(t, hasValues(series{missing("rendered-image"): 0, missing("base-image-pull"): 1}))
		createSecret(t, "base-image-pull")
		expect(t, hasValues(series{missing("rendered-image"): 0, missing("base-image-pull"): 0}))
		m.expectAlerts(t, nil, []string{"OCLMachineOSConfigSecretMissing"}) // resolved
	},
	// The failing node pulls the image after all.
	"seed002-manifest-unknown": catchUp,
	// The rollout completes.
	"stage3-rollout-in-progress": catchUp,
	// The revert completes: the MCD deletes both image annotations.
	"stage3-revert-to-non-layered": catchUp,
	// The operator recreates the component MachineConfig.
	"seed003-prebuilt-no-component-mc": func(t *testing.T, _ *monitoring, _ []*unstructured.Unstructured) {
		seeded, err := cluster.LoadDir(scenario("seed003-prebuilt-seeded"))
		if err != nil {
			t.Fatal(err)
		}
		const name = "10-prebuiltimage-osimageurl-prebuilt"
		i := slices.IndexFunc(seeded, func(u *unstructured.Unstructured) bool {
			return u.GetKind() == "MachineConfig" && u.GetName() == name
		})
		if i < 0 {
			t.Fatalf("seed003-prebuilt-seeded has no MachineConfig %s", name)
		}
		mustCreate(t, seeded[i])
		expect(t, hasValues(series{seriesKey("mosc_prebuilt_image_machineconfig_missing", map[string]string{"machineosconfig": "prebuilt", "pool": "prebuilt"}): 0}))
	},
}

// catchUp makes every node whose currentImage differs from its desiredImage
// finish its update as the MCD would, then wants no mismatch left: 0 on the
// nodes of layered pools, no series for nodes that reverted.
func catchUp(t *testing.T, _ *monitoring, objs []*unstructured.Unstructured) {
	const (
		current = "machineconfiguration.openshift.io/currentImage"
		desired = "machineconfiguration.openshift.io/desiredImage"
	)
	var checks []expectation
	for _, u := range objs {
		if u.GetKind() != "Node" {
			continue
		}
		a := u.GetAnnotations()
		if a[current] == a[desired] {
			continue
		}
		annotations := map[string]any{
			"machineconfiguration.openshift.io/currentConfig": a["machineconfiguration.openshift.io/desiredConfig"],
			"machineconfiguration.openshift.io/state":         "Done",
			"machineconfiguration.openshift.io/reason":        nil,
		}
		node := map[string]string{"node": u.GetName()}
		if a[desired] == "" { // SetDone deletes both when the pool is no longer layered
			annotations[current], annotations[desired] = nil, nil
			checks = append(checks, lacks("node_layered_image_mismatch", node))
		} else {
			annotations[current] = a[desired]
			checks = append(checks, valueOf("node_layered_image_mismatch", node, 0))
		}
		patch := mustJSON(t, map[string]any{"metadata": map[string]any{"annotations": annotations}})
		if _, err := env.kube.CS.CoreV1().Nodes().Patch(t.Context(), u.GetName(), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if len(checks) == 0 {
		t.Fatal("no node to catch up")
	}
	expect(t, all(checks...))
}

// valueOf wants at least one series of the family with those labels, and
// every such series at v.
func valueOf(name string, labels map[string]string, v float64) expectation {
	return func(got series) []string {
		var diff []string
		found := false
		for k, x := range got {
			if family(k) == name && matches(k, labels) {
				found = true
				if x != v {
					diff = append(diff, fmt.Sprintf("%s is %g, want %g", k, x, v))
				}
			}
		}
		if !found {
			diff = append(diff, fmt.Sprintf("no %s series with %v", name, labels))
		}
		slices.Sort(diff)
		return diff
	}
}

// expect fails the test unless the exporter shows want within settle.
func expect(t *testing.T, want expectation) {
	t.Helper()
	if err := env.exporter.eventually(t.Context(), settle, want); err != nil {
		t.Fatal(err)
	}
}

func mustCreate(t *testing.T, u *unstructured.Unstructured) {
	t.Helper()
	if err := env.kube.Create(t.Context(), u); err != nil {
		t.Fatalf("create %s %s: %v", u.GetKind(), objectName(u), err)
	}
	t.Cleanup(func() { _ = env.kube.Remove(context.Background(), u) })
}

// createSecret creates a pull secret in the MCO namespace.
func createSecret(t *testing.T, name string) {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/dockerconfigjson",
		"metadata":   map[string]any{"name": name, "namespace": snapshot.DefaultNamespace},
		"stringData": map[string]any{".dockerconfigjson": `{"auths":{}}`},
	}}
	mustCreate(t, u)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
