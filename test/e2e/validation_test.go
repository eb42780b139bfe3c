//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsyaml "sigs.k8s.io/yaml"
)

// The seed's first MachineOSConfig (seed 000, lines 32-48) with one thing
// wrong at a time; the API server must refuse each with the message the
// seed quotes (lines 53 and 60).
const seedMachineOSConfig = `
apiVersion: machineconfiguration.openshift.io/v1
kind: MachineOSConfig
metadata:
  name: infra
spec:
  machineConfigPool:
    name: infra
  imageBuilder:
    imageBuilderType: Job
  baseImagePullSecret:
    name: base-image-pull
  renderedImagePushSecret:
    name: rendered-image
  renderedImagePushSpec: "quay.io/sregidor/sregidor-os:mco_layering"
`

func TestInvalidMachineOSConfigsRejected(t *testing.T) {
	for _, tc := range []struct {
		name   string
		edit   func(u *unstructured.Unstructured)
		reject string
	}{
		{"valid", func(*unstructured.Unstructured) {}, ""},
		{"imageBuilderType job", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "job", "spec", "imageBuilder", "imageBuilderType")
		}, `spec.imageBuilder.imageBuilderType: Unsupported value: "job": supported values: "Job"`},
		{"name differs from its pool", func(u *unstructured.Unstructured) { u.SetName("worker") },
			`Invalid value: "object": MachineOSConfig name must match the referenced MachineConfigPool name; can only have one MachineOSConfig per MachineConfigPool`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := &unstructured.Unstructured{}
			if err := sigsyaml.Unmarshal([]byte(seedMachineOSConfig), &u.Object); err != nil {
				t.Fatal(err)
			}
			tc.edit(u)
			err := env.kube.Create(t.Context(), u)
			if err == nil {
				t.Cleanup(func() { _ = env.kube.Remove(context.Background(), u) })
			}
			switch {
			case tc.reject == "" && err != nil:
				t.Fatalf("the valid MachineOSConfig is refused: %v", err)
			case tc.reject != "" && err == nil:
				t.Fatalf("accepted, want refused with %q", tc.reject)
			case tc.reject != "" && !strings.Contains(err.Error(), tc.reject):
				t.Fatalf("refused with\n  %v\nwant the seed's message\n  %s", err, tc.reject)
			}
		})
	}
}
