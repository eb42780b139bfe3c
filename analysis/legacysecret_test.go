package analysis

import (
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ocl-exporter/ocl_exporter/classify"
)

// TestRefusedStart replays OCPBUGS-33671 as release-4.16 wrote it before
// #4432: MachineOSConfigs infra and layered name the legacy Secret
// legacy-push; infra's build converted it to legacy-push-canonical and
// infra now names the copy (updateConfigSpec); layered's Create of the copy
// failed, so its build keeps only syncAvailableStatus's Failed=False
// MOSCAvailable and is never started.
func TestRefusedStart(t *testing.T) {
	const build = "layered-rendered-layered-5e0f9c1d2b3a4f5e6d7c8b9a0f1e2d3c-builder"
	refused := func(conds ...metav1.Condition) *mcfgv1.MachineOSBuild {
		b := &mcfgv1.MachineOSBuild{ObjectMeta: metav1.ObjectMeta{Name: build}}
		b.Spec.MachineOSConfig.Name = "layered"
		b.Status.Conditions = append([]metav1.Condition{{
			Type: string(mcfgv1.MachineOSBuildFailed), Status: metav1.ConditionFalse, Reason: "MOSCAvailable", Message: "MOSC",
		}}, conds...)
		return b
	}
	names := func(m *mcfgv1.MachineOSConfig, push string) {
		m.Spec.RenderedImagePushSecret.Name = push
	}
	mosc := []*mcfgv1.MachineOSConfig{
		cfgMOSC("infra", func(m *mcfgv1.MachineOSConfig) { names(m, "legacy-push-canonical") }),
		cfgMOSC("layered", func(m *mcfgv1.MachineOSConfig) { names(m, "legacy-push") }),
	}
	secrets := []*metav1.PartialObjectMetadata{
		cfgMeta(cfgNamespace, "legacy-push"), cfgMeta(cfgNamespace, "legacy-push-canonical"), cfgMeta(cfgNamespace, "base-image-pull"),
	}
	for _, tc := range []struct {
		name        string
		build       *mcfgv1.MachineOSBuild
		secrets     []*metav1.PartialObjectMetadata
		notCaptured bool
		class       classify.Class // "" means no failure
	}{
		{name: "legacy secret converted for another MachineOSConfig", build: refused(), secrets: secrets, class: classify.SecretInvalid},
		{name: "no converted copy: the cause is only in the builder's log", build: refused(), secrets: secrets[:1]},
		{name: "a build that started is not refused", secrets: secrets, build: refused(metav1.Condition{
			Type: string(mcfgv1.MachineOSBuildPrepared), Status: metav1.ConditionTrue, Reason: "Prepared", Message: "Build Prepared and Pending",
		})},
		{name: "Secrets not captured", build: refused(), notCaptured: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Cluster{Namespace: cfgNamespace, MachineOSConfigs: mosc, Secrets: tc.secrets, MachineOSBuilds: []*mcfgv1.MachineOSBuild{tc.build}}
			if tc.notCaptured {
				c.NotCaptured = map[string]bool{KindSecret: true}
			}
			got := c.build(tc.build).Failure
			switch {
			case tc.class == "" && got != nil:
				t.Fatalf("Failure = %+v, want none", *got)
			case tc.class == "":
			case got == nil || got.Class != tc.class:
				t.Fatalf("Failure = %+v, want class %s", got, tc.class)
			case !strings.Contains(got.Excerpt, `"legacy-push"`) || !strings.Contains(got.Excerpt, `"legacy-push-canonical"`):
				t.Errorf("Excerpt %q does not name the Secret and its copy", got.Excerpt)
			}
		})
	}
	findings := MachineOSConfigFindings(&Cluster{Namespace: cfgNamespace, MachineOSConfigs: mosc, Secrets: secrets})
	if got := findings[0].Secrets[0].Canonical; got != "" {
		t.Errorf("infra names the copy itself: Canonical = %q, want none", got)
	}
	if got := findings[1].Secrets[0].Canonical; got != "legacy-push-canonical" {
		t.Errorf("layered names the legacy Secret: Canonical = %q, want legacy-push-canonical", got)
	}
}
