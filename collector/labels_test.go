package collector

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	configv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ocl-exporter/ocl_exporter/analysis"
)

func TestBoundLabelValue(t *testing.T) {
	long := strings.Repeat("a", MaxLabelValueBytes)
	for _, tc := range []struct {
		name, in, want string
	}{
		{"short", "quay.io/example/os:latest", "quay.io/example/os:latest"},
		{"at the bound", long, long},
		{"invalid UTF-8", "a\xffb", "a\uFFFDb"},
		{"one over", long + "b", strings.Repeat("a", MaxLabelValueBytes-34) + "...(truncated sha256:d9a41d9b6cbf)"},
		{"cut inside a character", "x" + strings.Repeat("é", 600), "x" + strings.Repeat("é", 494) + "...(truncated sha256:cf1671cd20e0)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := boundLabelValue(tc.in); got != tc.want {
				t.Errorf("got %q (%d bytes), want %q", got, len(got), tc.want)
			}
		})
	}
}

// FuzzBoundLabelValue checks the bound's promises for any input: at most
// MaxLabelValueBytes of valid UTF-8, unchanged when already within them,
// idempotent, and distinct long values stay distinct.
func FuzzBoundLabelValue(f *testing.F) {
	f.Add("quay.io/example/os:latest", 1)
	f.Add("é", MaxLabelValueBytes)
	f.Add("\xff\xfe", 600)
	f.Fuzz(func(t *testing.T, s string, repeat int) {
		if repeat < 0 || repeat > 4096 || len(s)*repeat > 1<<20 {
			return
		}
		v := strings.Repeat(s, repeat)
		got := boundLabelValue(v)
		if len(got) > MaxLabelValueBytes || !utf8.ValidString(got) {
			t.Fatalf("%d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
		}
		if utf8.ValidString(v) && len(v) <= MaxLabelValueBytes && got != v {
			t.Fatalf("a value within the bound changed: %q -> %q", v, got)
		}
		if again := boundLabelValue(got); again != got {
			t.Fatalf("not idempotent: %q -> %q", got, again)
		}
		if other := boundLabelValue(v + "x"); len(v) >= MaxLabelValueBytes && other == got {
			t.Fatalf("two long values share the bounded value %q", got)
		}
	})
}

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
		if len(line) > 16*MaxLabelValueBytes {
			t.Errorf("a %d-byte series: %.200s", len(line), line)
		}
	}
	if n := strings.Count(string(out), "mosc_info{"); n != 2 {
		t.Errorf("%d mosc_info series for two MachineOSConfigs that differ past the bound, want 2", n)
	}
}
