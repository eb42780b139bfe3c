package collector

import (
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ocl-exporter/ocl_exporter/analysis"
	"github.com/ocl-exporter/ocl_exporter/collector/labelvalue"
)

// TestHostileLabelValuesAreBounded feeds megabyte-long object content to
// every stage: the scrape stays small, every label value within the bound,
// and two objects that differ only past the bound stay two series.
func TestHostileLabelValuesAreBounded(t *testing.T) {
	huge := strings.Repeat("x", 1<<20)
	mosc := func(name string) *mcfgv1.MachineOSConfig {
		return &mcfgv1.MachineOSConfig{
			ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"machineconfiguration.openshift.io/current-machine-os-build": huge}},
			Spec: mcfgv1.MachineOSConfigSpec{
				MachineConfigPool:       mcfgv1.MachineConfigPoolReference{Name: huge},
				RenderedImagePushSpec:   mcfgv1.ImageTagFormat(huge),
				RenderedImagePushSecret: mcfgv1.ImageSecretObjectReference{Name: huge},
			},
			Status: mcfgv1.MachineOSConfigStatus{CurrentImagePullSpec: mcfgv1.ImageDigestFormat(huge)},
		}
	}
	cluster := &analysis.Cluster{
		Namespace:        "openshift-machine-config-operator",
		Now:              time.Date(2025, 10, 17, 13, 0, 0, 0, time.UTC),
		MachineOSConfigs: []*mcfgv1.MachineOSConfig{mosc(huge + "a"), mosc(huge + "b")},
		MachineOSBuilds: []*mcfgv1.MachineOSBuild{{
			ObjectMeta: metav1.ObjectMeta{Name: huge},
			Spec: mcfgv1.MachineOSBuildSpec{
				MachineOSConfig: mcfgv1.MachineOSConfigReference{Name: huge + "a"},
				MachineConfig:   mcfgv1.MachineConfigReference{Name: huge},
			},
			Status: mcfgv1.MachineOSBuildStatus{DigestedImagePushSpec: mcfgv1.ImageDigestFormat(huge)},
		}},
		ClusterOperators: []*configv1.ClusterOperator{{
			ObjectMeta: metav1.ObjectMeta{Name: "machine-config"},
			Status: configv1.ClusterOperatorStatus{Conditions: []configv1.ClusterOperatorStatusCondition{{
				Type: configv1.OperatorDegraded, Status: configv1.ConditionTrue, Reason: huge, Message: huge,
			}}},
		}},
	}
	out := exposition(t, New(view{cluster: cluster}, DefaultOptions))
	if len(out) > 256<<10 {
		t.Errorf("the scrape is %d bytes for 1 MiB values", len(out))
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		if len(line) > 16*labelvalue.MaxBytes {
			t.Errorf("a %d-byte series: %.200s", len(line), line)
		}
	}
	if n := strings.Count(string(out), "mosc_info{"); n != 2 {
		t.Errorf("%d mosc_info series for two MachineOSConfigs that differ past the bound, want 2", n)
	}
}
