package deploy_test

// Where each bundle's pods may run, on the nodes of an OpenShift cluster,
// and so which pool's rollout moves the exporter.

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// clusterNode is a node as the installer, the MCO and an administrator
// label and taint it, with the MachineConfigPool whose rollouts drain it.
type clusterNode struct {
	name, pool string
	labels     map[string]string
	taints     []corev1.Taint
}

var (
	linux        = map[string]string{"kubernetes.io/os": "linux"}
	masterTaint  = corev1.Taint{Key: "node-role.kubernetes.io/master", Effect: corev1.TaintEffectNoSchedule}
	cordonTaint  = corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}
	infraTaints  = []corev1.Taint{{Key: "node-role.kubernetes.io/infra", Value: "reserved", Effect: corev1.TaintEffectNoSchedule}, {Key: "node-role.kubernetes.io/infra", Value: "reserved", Effect: corev1.TaintEffectNoExecute}}
	clusterNodes = []clusterNode{
		// The installer's control plane: both role labels, the master taint.
		{"master-0", "master", with(linux, "node-role.kubernetes.io/master", "node-role.kubernetes.io/control-plane"), []corev1.Taint{masterTaint}},
		// A control-plane node the MCO drains: cordoned.
		{"master-1", "master", with(linux, "node-role.kubernetes.io/master", "node-role.kubernetes.io/control-plane"), []corev1.Taint{masterTaint, cordonTaint}},
		{"worker-0", "worker", with(linux, "node-role.kubernetes.io/worker"), nil},
		// A custom pool's node (a layered pool of its own).
		{"layered-0", "layered", with(linux, "node-role.kubernetes.io/worker", "node-role.kubernetes.io/layered"), nil},
		// An infra node as OpenShift's documentation makes one.
		{"infra-0", "infra", with(linux, "node-role.kubernetes.io/worker", "node-role.kubernetes.io/infra"), infraTaints},
	}
)

func with(base map[string]string, roles ...string) map[string]string {
	m := maps.Clone(base)
	for _, r := range roles {
		m[r] = ""
	}
	return m
}

// schedulable is the scheduler's node selector and taint checks: the pod
// may run on n.
func schedulable(pod corev1.PodSpec, n clusterNode) bool {
	if !labels.SelectorFromSet(pod.NodeSelector).Matches(labels.Set(n.labels)) {
		return false
	}
	for _, taint := range n.taints {
		if taint.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		if !slices.ContainsFunc(pod.Tolerations, func(t corev1.Toleration) bool { return t.ToleratesTaint(&taint) }) {
			return false
		}
	}
	return true
}

// placements is what each bundle promises: its replicas, the nodes they
// may run on (so the pools whose rollouts move them), and whether two of
// them may share a node.
var placements = map[string]struct {
	replicas int32
	nodes    []string
}{
	".":                      {1, []string{"master-0"}},
	"overlays/user-workload": {1, []string{"master-0"}},
	"overlays/perses":        {1, []string{"master-0"}},
	"overlays/two-replicas":  {2, []string{"master-0"}},
	"overlays/infra":         {1, []string{"infra-0"}},
}

// bundleDirs are the base and every overlay.
func bundleDirs(t *testing.T) []string {
	t.Helper()
	overlays, err := filepath.Glob(filepath.Join("overlays", "*"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"."}, overlays...)
}

func TestPlacement(t *testing.T) {
	for _, dir := range bundleDirs(t) {
		want, ok := placements[filepath.ToSlash(dir)]
		if !ok {
			t.Errorf("%s: add the overlay to placements: its replicas and the nodes they may run on", dir)
			continue
		}
		d := build(t, dir).deployments[0]
		pod := d.Spec.Template.Spec
		if got := ptrValue(d.Spec.Replicas); got != want.replicas {
			t.Errorf("%s: %d replicas, want %d", dir, got, want.replicas)
		}
		var nodes []string
		for _, n := range clusterNodes {
			if schedulable(pod, n) {
				nodes = append(nodes, n.name)
			}
		}
		if !slices.Equal(nodes, want.nodes) {
			t.Errorf("%s: the pod may run on %v, want %v", dir, nodes, want.nodes)
		}
		// The platform's system-* classes are for its own components.
		if pod.PriorityClassName != "openshift-user-critical" {
			t.Errorf("%s: priorityClassName %q, want openshift-user-critical", dir, pod.PriorityClassName)
		}
		if want.replicas > 1 {
			checkSpread(t, dir, d)
		}
	}
}

// checkSpread wants replicas on distinct nodes, replaced one at a time
// without a node to surge onto.
func checkSpread(t *testing.T, dir string, d *appsv1.Deployment) {
	t.Helper()
	a := d.Spec.Template.Spec.Affinity
	spread := false
	if a != nil && a.PodAntiAffinity != nil {
		for _, term := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			sel := labels.SelectorFromSet(term.LabelSelector.MatchLabels)
			spread = spread || (term.TopologyKey == "kubernetes.io/hostname" && len(term.LabelSelector.MatchLabels) > 0 &&
				sel.Matches(labels.Set(d.Spec.Template.Labels)))
		}
	}
	if !spread {
		t.Errorf("%s: %d replicas may share a node (a drain would evict both): want a required pod anti-affinity on kubernetes.io/hostname selecting the pod's labels", dir, ptrValue(d.Spec.Replicas))
	}
	ru := d.Spec.Strategy.RollingUpdate
	if ru == nil || ru.MaxSurge == nil || ru.MaxSurge.IntValue() != 0 || ru.MaxUnavailable == nil || ru.MaxUnavailable.IntValue() != 1 {
		t.Errorf("%s: rolling update %+v: want maxSurge 0 and maxUnavailable 1, which need no node beyond the replicas'", dir, ru)
	}
}

func ptrValue(p *int32) int32 {
	if p == nil {
		return 1 // the API server's default
	}
	return *p
}

// TestNoDisruptionBudgetBlocksADrain: the MCO drains a node by evicting its
// pods, and an eviction a PodDisruptionBudget refuses is retried until
// the drain times out after an hour and the node degrades. One replica
// with minAvailable: 1 refuses every eviction; two with maxUnavailable: 1
// refuse it while the other is unready. The bundles ship none.
func TestNoDisruptionBudgetBlocksADrain(t *testing.T) {
	for _, dir := range bundleDirs(t) {
		for _, pdb := range build(t, dir).disruptionBudgets {
			t.Errorf("%s: PodDisruptionBudget %s/%s would block a drain of the exporter's node", dir, pdb.Namespace, pdb.Name)
		}
	}
}

func TestEveryBundleGrantsTheExporterExactlyWhatItNeeds(t *testing.T) {
	for _, dir := range bundleDirs(t) {
		checkExporterRBAC(t, build(t, dir))
	}
}

// TestPlacementsCombineWithUserWorkload builds README's example of a
// placement combined with user-workload monitoring, in a copy of deploy/:
// two replicas, scraped as the user-workload overlay scrapes.
func TestPlacementsCombineWithUserWorkload(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	const dir = "overlays/mine"
	_, after, ok := strings.Cut(string(readme), "`deploy/"+dir+"/kustomization.yaml`")
	_, block, ok2 := strings.Cut(after, "```yaml\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatalf("README.md has no yaml block after deploy/%s/kustomization.yaml", dir)
	}
	fsys := filesys.MakeFsInMemory()
	if err := fs.WalkDir(os.DirFS("."), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || strings.HasSuffix(p, ".go") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return fsys.WriteFile("/deploy/"+p, b)
	}); err != nil {
		t.Fatal(err)
	}
	if err := fsys.WriteFile("/deploy/"+dir+"/kustomization.yaml", []byte(block)); err != nil {
		t.Fatal(err)
	}
	b := buildIn(t, fsys, "/deploy/"+dir)
	if got := ptrValue(b.deployments[0].Spec.Replicas); got != 2 {
		t.Errorf("README's %s: %d replicas, want 2", dir, got)
	}
	//nolint:staticcheck // SA1019: checking that the deprecated field is unset.
	if ep := b.serviceMonitors[0].Spec.Endpoints[0]; ep.Authorization == nil || ep.BearerTokenFile != "" {
		t.Errorf("README's %s does not scrape as the user-workload overlay does: %+v", dir, ep)
	}
	checkSpread(t, dir, b.deployments[0])
}
