//go:build e2e

package e2e

import (
	"os/exec"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ocl-exporter/ocl_exporter/test/cluster"
)

// TestManifestsApply: what `make manifests IMAGE=...` writes, for the
// base and the user-workload overlay, passes the real API server's strict
// validation object by object (server-side dry run, as `make deploy`'s
// apply would send it), with the image set on the exporter's container.
// The Perses overlay's needs the Perses CRDs: TestPersesOverlay checks it.
func TestManifestsApply(t *testing.T) {
	for _, bundle := range []string{"deploy", "deploy/overlays/user-workload"} {
		t.Run(filepath.Base(bundle), func(t *testing.T) { manifestsApply(t, bundle) })
	}
}

// manifestsApply renders bundle as `make manifests BUNDLE=bundle` does
// and dry-runs each object.
func manifestsApply(t *testing.T, bundle string) {
	t.Helper()
	const image = "quay.io/example/ocl_exporter:v0.1.0"
	out := filepath.Join(t.TempDir(), "ocl-exporter.yaml")
	cmd := exec.CommandContext(t.Context(), "go", "run", "./hack/bundle", "-manifests="+out, "-dir="+bundle, "-image="+image)
	cmd.Dir = repoRoot
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make manifests BUNDLE=%s: %v\n%s", bundle, err, b)
	}
	objs, err := cluster.LoadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	deployments := 0
	for _, u := range objs {
		if err := env.kube.Apply(t.Context(), u, true); err != nil {
			t.Errorf("%s %s: %v", u.GetKind(), objectName(u), err)
		}
		if u.GetKind() != "Deployment" {
			continue
		}
		deployments++
		containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
		for _, c := range containers {
			if got := c.(map[string]any)["image"]; got != image {
				t.Errorf("Deployment %s: image %v, want %s", objectName(u), got, image)
			}
		}
	}
	if deployments != 1 {
		t.Errorf("%d Deployments, want the exporter's", deployments)
	}
}
