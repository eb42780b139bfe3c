//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ocl-exporter/ocl_exporter/test/cluster"
)

// olderCRDs are the CRDs an OpenShift 4.16 cluster serves for the
// resources whose v1 came later, from the openshift/api module test/oldapi
// pins (the version the machine-config-operator's release-4.16 requires):
// MachineOSConfig and MachineOSBuild in v1alpha1 only.
var olderCRDs = map[string]string{
	"machineosconfigs.machineconfiguration.openshift.io": "machineconfiguration/v1alpha1/zz_generated.crd-manifests/0000_80_machine-config_01_machineosconfigs-TechPreviewNoUpgrade.crd.yaml",
	"machineosbuilds.machineconfiguration.openshift.io":  "machineconfiguration/v1alpha1/zz_generated.crd-manifests/0000_80_machine-config_01_machineosbuilds-TechPreviewNoUpgrade.crd.yaml",
}

// TestV1alpha1LiveCluster serves MachineOSConfigs and MachineOSBuilds as a
// 4.16 API server does, in v1alpha1 only, and plays the 4.16 scenario on
// it: the running exporter, whose v1 lists now answer 404, must read them
// in v1alpha1 and export what the offline source exports for the same
// files, its bare build pod (no Job) included. The deletions that follow
// must arrive through the v1alpha1 watches, not a relist. Once today's
// CRDs are back (the cluster upgraded), the exporter must read v1 again.
//
// Each CRD swap fails the exporter's lists until the new CRD is
// established, and client-go's reflector then retries on its own backoff:
// hence recovery, not settle, for the exporter to show the swap.
func TestV1alpha1LiveCluster(t *testing.T) {
	ctx := t.Context()
	dir, err := oldAPIDir(ctx)
	if err != nil {
		t.Fatal(err)
	}
	upgrade := serveOlderCRDs(t, dir)
	objs, _ := playWithin(t, scenario("v416-build-pod-failed"), recovery)

	before, err := lists(ctx)
	if err != nil {
		t.Fatal(err)
	}
	removeAndExpectBaseline(t, nil, objs, settle)
	after, err := lists(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(before, after) {
		t.Errorf("the deletions were seen by relisting, not through the v1alpha1 watches: lists %v before, %v after", before, after)
	}

	upgrade()
	objs, _ = playWithin(t, scenario("healthy-rollout-done"), recovery)
	removeAndExpectBaseline(t, nil, objs, settle)
}

// serveOlderCRDs replaces today's CRDs of olderCRDs with the older ones
// from the openshift/api module in dir. It returns the upgrade back to
// today's, which the test's cleanup runs too if the test did not.
func serveOlderCRDs(t *testing.T, dir string) (upgrade func()) {
	t.Helper()
	var swaps [][2]*unstructured.Unstructured // older, current
	for name, file := range olderCRDs {
		objs, err := cluster.LoadFile(filepath.Join(dir, file))
		if err != nil || len(objs) != 1 {
			t.Fatalf("%s: %d objects, %v", file, len(objs), err)
		}
		swaps = append(swaps, [2]*unstructured.Unstructured{objs[0], env.crds[name]})
	}
	var once sync.Once
	upgrade = func() {
		once.Do(func() {
			ctx := context.Background()
			for _, s := range swaps {
				if err := env.kube.Remove(ctx, s[0]); err != nil {
					t.Error(err)
				}
				if err := env.kube.CreateCRD(ctx, s[1].DeepCopy()); err != nil {
					t.Error(err)
				}
			}
		})
	}
	t.Cleanup(upgrade)
	for _, s := range swaps {
		if err := env.kube.Remove(t.Context(), s[1]); err != nil {
			t.Fatal(err)
		}
		if err := env.kube.CreateCRD(t.Context(), s[0].DeepCopy()); err != nil {
			t.Fatal(err)
		}
	}
	return upgrade
}

// lists counts the exporter's lists of each resource of olderCRDs.
func lists(ctx context.Context) (map[string]float64, error) {
	s, err := env.exporter.scrape(ctx)
	if err != nil {
		return nil, err
	}
	n := map[string]float64{}
	for k, v := range s {
		for name := range olderCRDs {
			if family(k) == "ocl_exporter_list_total" && matches(k, map[string]string{"resource": name}) {
				n[name] += v
			}
		}
	}
	return n, nil
}

// oldAPIDir is the module directory of the openshift/api test/oldapi pins,
// downloaded from the module proxy and checked against its go.sum.
func oldAPIDir(ctx context.Context) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", "github.com/openshift/api")
	cmd.Dir = filepath.Join(repoRoot, "test", "oldapi")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download in test/oldapi: %w: %s", err, out)
	}
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(out, &m); err != nil {
		return "", fmt.Errorf("go mod download in test/oldapi: %w", err)
	}
	if m.Dir == "" {
		return "", fmt.Errorf("go mod download in test/oldapi: %s", m.Error)
	}
	return m.Dir, nil
}
