package sourcetest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ocl-exporter/ocl_exporter/analysis"
)

// Committed is a tree (or archive) of testdata/must-gathers: a scenario
// written as a release's must-gather image or oc adm inspect lays it out,
// then, for a form, changed as the tool that makes that form changes it.
// testdata/must-gathers/README.md cites the code each follows.
type Committed struct {
	Tree, Scenario string
	Options        MustGatherOptions
	// Form turns the must-gather written under dir (its root) into the
	// form support receives and returns that form's path: nil for the
	// must-gather itself.
	Form func(dir, root string) (string, error)
}

// CommittedMustGathers are the must-gathers of testdata/must-gathers.
var CommittedMustGathers = []Committed{
	{Tree: "4.16-v416-build-pod-failed", Scenario: "v416-build-pod-failed", Options: MustGatherOptions{Release: 16, NoTerminationMessages: true}},
	{Tree: "4.17-healthy-rollout-done", Scenario: "healthy-rollout-done", Options: MustGatherOptions{Release: 17}},
	{Tree: "4.18-seed004-build-failed-no-message", Scenario: "seed004-build-failed", Options: MustGatherOptions{Release: 18, NoTerminationMessages: true}},
	{Tree: "4.19-seed004-build-failed", Scenario: "seed004-build-failed", Options: MustGatherOptions{Release: 19}},
	{Tree: "4.19-macos-extracted-healthy-rollout-done", Scenario: "healthy-rollout-done", Options: MustGatherOptions{Release: 19},
		Form: func(dir, _ string) (string, error) { return dir, MacOSExtracted(dir) }},
	{Tree: "4.19-macos-healthy-rollout-done.tar.gz", Scenario: "healthy-rollout-done", Options: MustGatherOptions{Release: 19},
		Form: func(dir, root string) (string, error) {
			// dir is the archive's name: the tree goes beside it, then away
			tree := strings.TrimSuffix(dir, ".tar.gz")
			if err := os.Rename(dir, tree); err != nil {
				return "", err
			}
			if err := WriteMacOSArchive(filepath.Join(tree, filepath.Base(root)), dir); err != nil {
				return "", err
			}
			return dir, os.RemoveAll(tree)
		}},
	{Tree: "4.19-volume-cut-seed004-build-failed", Scenario: "seed004-build-failed", Options: MustGatherOptions{Release: 19},
		Form: func(dir, root string) (string, error) { return dir, SecretsCut.Apply(root, Now) }},
	{Tree: "4.19-cleaned-seed003-prebuilt-seeded", Scenario: "seed003-prebuilt-seeded", Options: MustGatherOptions{Release: 19},
		Form: func(dir, root string) (string, error) {
			_, err := Clean(root, filepath.Join(dir, "must-gather-clean"), true, Now)
			return dir, err
		}},
	{Tree: "4.18-insecure-log-seed004-build-failed", Scenario: "seed004-build-failed", Options: MustGatherOptions{Release: 18, NoTerminationMessages: true, InsecureLogs: true}},
	{Tree: "4.19-inspect-ns-seed004-build-failed", Scenario: "seed004-build-failed", Options: MustGatherOptions{Release: 19, Inspect: InspectMCONamespace}},
	{Tree: "4.17-inspect-co-first-build-not-started", Scenario: "stage2-builder-crashloop", Options: MustGatherOptions{Release: 17, Inspect: InspectClusterOperator, Edit: FirstBuildNotStarted}},
}

// Write writes c under dir and returns the snapshot to read.
func (c Committed) Write(scenarios, dir string) (string, error) {
	o := c.Options
	o.At = Now
	root, err := WriteMustGather(filepath.Join(scenarios, c.Scenario), dir, o)
	if err != nil || c.Form == nil {
		return dir, err
	}
	return c.Form(dir, root)
}

// SecretsCut is a 4.19 gather stopped at the volume limit while inspect
// wrote the MCO namespace's Secrets (namespace.go: the namespace's Lists
// come after its pods, secrets late among them), in the second Secret,
// before its metadata (the keys are sorted); gather_ppc, which inspects
// its resources one after the other (collection-scripts/gather_ppc),
// had not reached MachineOSBuilds and MachineConfigNodes yet.
var SecretsCut = VolumeCut{
	File: "namespaces/openshift-machine-config-operator/core/secrets.yaml", CutAfter: "  kind: Secret\n", Occurrence: 2,
	Missing: []string{
		"cluster-scoped-resources/machineconfiguration.openshift.io/machineosbuilds",
		"cluster-scoped-resources/machineconfiguration.openshift.io/machineconfignodes",
	},
}

// FirstBuildNotStarted edits stage2-builder-crashloop (the
// machine-os-builder's pod crashlooping) into the moment pool layered
// was first given a MachineOSConfig: the operator started the builder
// (pkg/operator/sync.go), which never ran, so no build started: no
// MachineOSBuild, build pod, Job or ConfigMap of the pool; its nodes
// never had an image (no desiredImage or currentImage), and the pool's
// Updated message names none (pkg/controller/node/status.go
// getPoolUpdateLine adds " / Image" only once the MachineOSConfig has
// one). Nothing an oc adm inspect or a 4.16 or 4.17 must-gather holds
// shows the pool is layered.
func FirstBuildNotStarted(u *unstructured.Unstructured) bool {
	switch u.GetKind() {
	case "MachineOSBuild":
		return false
	case "Pod", "Job", "ConfigMap":
		return u.GetLabels()[analysis.LabelTargetPool] == ""
	case "Node":
		ann := u.GetAnnotations()
		delete(ann, analysis.NodeAnnotationDesiredImage)
		delete(ann, analysis.NodeAnnotationCurrentImage)
		u.SetAnnotations(ann)
	case "MachineConfigPool":
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		var keep []any
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "ImageBuildDegraded" {
				continue
			}
			if msg, _ := m["message"].(string); m["type"] == "Updated" {
				m["message"], _, _ = strings.Cut(msg, " / Image")
			}
			keep = append(keep, m)
		}
		_ = unstructured.SetNestedSlice(u.Object, keep, "status", "conditions")
	}
	return true
}

// cutAfter is b up to the end of the n-th occurrence of s, all of b when
// there are fewer.
func cutAfter(b []byte, s string, n int) []byte {
	at := 0
	for range n {
		i := bytes.Index(b[at:], []byte(s))
		if i < 0 {
			return b
		}
		at += i + len(s)
	}
	return b[:at]
}
