//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

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
// files. Its bare build pod is left out: the live exporter watches the
// pods of build Jobs only (docs/versions.md). Once today's CRDs are back,
// the exporter must read v1 again.
func TestV1alpha1LiveCluster(t *testing.T) {
	ctx := t.Context()
	dir, err := oldAPIDir(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for name, file := range olderCRDs {
		objs, err := cluster.LoadFile(filepath.Join(dir, file))
		if err != nil || len(objs) != 1 {
			t.Fatalf("%s: %d objects, %v", file, len(objs), err)
		}
		current := env.crds[name]
		if err := env.kube.Remove(ctx, current); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx := context.Background()
			if err := env.kube.Remove(ctx, objs[0]); err != nil {
				t.Error(err)
			}
			if err := env.kube.CreateCRD(ctx, current.DeepCopy()); err != nil {
				t.Error(err)
			}
		})
		if err := env.kube.CreateCRD(ctx, objs[0].DeepCopy()); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		// Registered before play's, so it runs after the objects and the
		// v1alpha1 CRDs are gone and today's are back.
		if err := env.exporter.eventually(context.Background(), settle, sameAs(env.baseline)); err != nil {
			t.Errorf("the exporter does not read v1 again once it is served: %v", err)
		}
	})
	objs, _ := play(t, withoutBarePods(t, scenario("v416-build-pod-failed")))
	if len(objs) == 0 {
		t.Fatal("no objects played")
	}
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

// withoutBarePods copies a scenario with an empty list of pods.
func withoutBarePods(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if d.Name() == "pods.yaml" {
			data = []byte("apiVersion: v1\nkind: List\nitems: []\n")
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}
