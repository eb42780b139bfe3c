package analysis

import (
	"slices"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const nodeRolePrefix = "node-role.kubernetes.io/"

// selectingPool returns a pool selecting nodes by label key: a nil
// selector when key is "", an empty one when key is "{}".
func selectingPool(name, key string) *mcfgv1.MachineConfigPool {
	p := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: name}}
	switch key {
	case "":
	case "{}":
		p.Spec.NodeSelector = &metav1.LabelSelector{}
	default:
		p.Spec.NodeSelector = &metav1.LabelSelector{MatchLabels: map[string]string{key: ""}}
	}
	return p
}

func TestPoolOfNode(t *testing.T) {
	standard := []*mcfgv1.MachineConfigPool{
		selectingPool("master", nodeRolePrefix+"master"),
		selectingPool("worker", nodeRolePrefix+"worker"),
		selectingPool("infra", nodeRolePrefix+"infra"),
		selectingPool("gpu", nodeRolePrefix+"gpu"),
	}
	tests := []struct {
		name   string
		pools  []*mcfgv1.MachineConfigPool
		labels map[string]string
		want   string
	}{
		{"worker", standard, map[string]string{nodeRolePrefix + "worker": ""}, "worker"},
		{"custom pool wins over worker", standard, map[string]string{nodeRolePrefix + "worker": "", nodeRolePrefix + "infra": ""}, "infra"},
		{"master wins over worker", standard, map[string]string{nodeRolePrefix + "worker": "", nodeRolePrefix + "master": ""}, "master"},
		{"master wins over a custom pool", standard, map[string]string{nodeRolePrefix + "master": "", nodeRolePrefix + "infra": ""}, "master"},
		{"two custom pools: none", standard, map[string]string{nodeRolePrefix + "worker": "", nodeRolePrefix + "infra": "", nodeRolePrefix + "gpu": ""}, ""},
		{"no pool selects it", standard, map[string]string{"other": ""}, ""},
		{"nil labels", standard, nil, ""},
		{"windows node is not managed", standard, map[string]string{nodeRolePrefix + "worker": "", "kubernetes.io/os": "windows"}, ""},
		{"nil selector matches nothing", []*mcfgv1.MachineConfigPool{selectingPool("infra", "")}, map[string]string{"any": ""}, ""},
		{"empty selector matches nothing", []*mcfgv1.MachineConfigPool{selectingPool("infra", "{}"), selectingPool("worker", nodeRolePrefix+"worker")}, map[string]string{nodeRolePrefix + "worker": ""}, "worker"},
		{"invalid selector matches nothing", []*mcfgv1.MachineConfigPool{{
			ObjectMeta: metav1.ObjectMeta{Name: "bad"},
			Spec: mcfgv1.MachineConfigPoolSpec{NodeSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "a", Operator: "Bogus"},
			}}},
		}}, map[string]string{"a": ""}, ""},
		{"no pools", nil, map[string]string{nodeRolePrefix + "worker": ""}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Cluster{MachineConfigPools: tt.pools}
			if got := c.PoolOfNode(tt.labels); got != tt.want {
				t.Errorf("PoolOfNode(%v) = %q, want %q", tt.labels, got, tt.want)
			}
		})
	}
}

func TestCurrentBuild(t *testing.T) {
	t0 := time.Date(2025, 10, 17, 10, 0, 0, 0, time.UTC)
	build := func(name, mosc, mc string, age time.Duration) *mcfgv1.MachineOSBuild {
		return &mcfgv1.MachineOSBuild{
			ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(t0.Add(-age))},
			Spec: mcfgv1.MachineOSBuildSpec{
				MachineOSConfig: mcfgv1.MachineOSConfigReference{Name: mosc},
				MachineConfig:   mcfgv1.MachineConfigReference{Name: mc},
			},
		}
	}
	mosc := func(annotation string) *mcfgv1.MachineOSConfig {
		m := &mcfgv1.MachineOSConfig{ObjectMeta: metav1.ObjectMeta{Name: "infra"}}
		m.Spec.MachineConfigPool.Name = "infra"
		if annotation != "" {
			m.Annotations = map[string]string{AnnotationCurrentBuild: annotation}
		}
		return m
	}
	infra := selectingPool("infra", nodeRolePrefix+"infra")
	infra.Spec.Configuration.Name = "rendered-infra-b"
	builds := []*mcfgv1.MachineOSBuild{
		build("infra-old", "infra", "rendered-infra-a", 3*time.Hour),
		build("infra-rendered", "infra", "rendered-infra-b", 2*time.Hour),
		build("infra-newest", "infra", "rendered-infra-c", time.Hour),
		build("worker-newer", "worker", "rendered-infra-b", 0),
	}
	tests := []struct {
		name   string
		mosc   *mcfgv1.MachineOSConfig
		pools  []*mcfgv1.MachineConfigPool
		builds []*mcfgv1.MachineOSBuild
		want   string
	}{
		{"annotation wins", mosc("infra-old"), []*mcfgv1.MachineConfigPool{infra}, builds, "infra-old"},
		{"annotation naming a missing build: rendered config", mosc("gone"), []*mcfgv1.MachineConfigPool{infra}, builds, "infra-rendered"},
		{"rendered config match", mosc(""), []*mcfgv1.MachineConfigPool{infra}, builds, "infra-rendered"},
		{"no pool: newest", mosc(""), nil, builds, "infra-newest"},
		{"no build for the rendered config: newest", mosc(""), []*mcfgv1.MachineConfigPool{infra}, builds[:1], "infra-old"},
		{"another MachineOSConfig's build never counts", mosc("worker-newer"), []*mcfgv1.MachineConfigPool{infra}, builds[3:], ""},
		{"none", mosc(""), []*mcfgv1.MachineConfigPool{infra}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Cluster{MachineConfigPools: tt.pools, MachineOSBuilds: tt.builds}
			got := ""
			if b := c.CurrentBuild(tt.mosc); b != nil {
				got = b.Name
			}
			if got != tt.want {
				t.Errorf("CurrentBuild = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestNewestBuildForPool(t *testing.T) {
	pool := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "layered"}}
	pool.Spec.Configuration.Name = "rendered-new"
	old := buildMOSB("old", 0, BuildSucceeded)
	old.Spec.MachineConfig.Name = "rendered-new"
	edited := buildMOSB("edited", 5, BuildFailed) // a Containerfile edit: same config, new name
	edited.Spec.MachineConfig.Name = "rendered-new"
	other := buildMOSB("other", 9, BuildSucceeded) // newer, for another config
	mosc := buildMOSC("layered")
	mosc.Annotations = map[string]string{AnnotationCurrentBuild: "old"}
	c := &Cluster{
		MachineOSConfigs:   []*mcfgv1.MachineOSConfig{mosc},
		MachineConfigPools: []*mcfgv1.MachineConfigPool{pool},
		MachineOSBuilds:    []*mcfgv1.MachineOSBuild{old, edited, other},
	}
	if got := c.NewestBuildForPool(mosc); got != edited {
		t.Errorf("NewestBuildForPool = %v, want edited", got)
	}
	if got := c.CurrentBuild(mosc); got != old {
		t.Errorf("CurrentBuild = %v, want old", got)
	}
	var names []string
	for _, b := range c.Builds(0) {
		names = append(names, b.Name)
	}
	if want := []string{"old", "edited"}; !slices.Equal(names, want) {
		t.Errorf("Builds(0) = %v, want %v: the newest build is exported beside the current one", names, want)
	}
	c.MachineConfigPools = nil
	if got := c.NewestBuildForPool(mosc); got != nil {
		t.Errorf("without the pool NewestBuildForPool = %v, want nil", got.Name)
	}
}
