//go:build e2emco

package mco

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/ocl-exporter/ocl_exporter/test/cluster"
)

// mcoNamespace is where the MCO runs its builds.
const mcoNamespace = "openshift-machine-config-operator"

// mcoCRDs are the CRDs of the openshift/api the MCO vendors, for the
// feature set a self-managed cluster runs (Default, SelfManagedHA): the
// kinds both controllers and the exporter read. The node controller waits
// for every informer to sync, OSImageStream included (OSStreams is on).
var mcoCRDs = []string{
	"machineconfiguration/v1/zz_generated.crd-manifests/0000_80_machine-config_01_controllerconfigs-Default.crd.yaml",
	"machineconfiguration/v1/zz_generated.crd-manifests/0000_80_machine-config_01_machineconfigs.crd.yaml",
	"machineconfiguration/v1/zz_generated.crd-manifests/0000_80_machine-config_01_machineconfigpools-SelfManagedHA.crd.yaml",
	"machineconfiguration/v1/zz_generated.crd-manifests/0000_80_machine-config_01_machineosconfigs.crd.yaml",
	"machineconfiguration/v1/zz_generated.crd-manifests/0000_80_machine-config_01_machineosbuilds.crd.yaml",
	"machineconfiguration/v1/zz_generated.crd-manifests/0000_80_machine-config_01_machineconfignodes-SelfManagedHA-Default.crd.yaml",
	"machineconfiguration/v1/zz_generated.crd-manifests/0000_80_machine-config_01_osimagestreams-SelfManagedHA.crd.yaml",
	"config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_schedulers-SelfManagedHA-Default.crd.yaml",
	"config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_infrastructures-Default.crd.yaml",
	"config/v1/zz_generated.crd-manifests/0000_00_cluster-version-operator_01_clusteroperators.crd.yaml",
	"operator/v1/zz_generated.crd-manifests/0000_80_machine-config_01_machineconfigurations.crd.yaml",
}

// world is one cluster for one incident: etcd and kube-apiserver, the
// MCO's machine-os-builder and node controller, and an exporter, all on
// loopback; its logs stay in dir when the test fails.
type world struct {
	t        *testing.T
	dir      string
	cluster  *cluster.Cluster
	kube     *cluster.Kube
	exporter string // its URL
	procs    []*cluster.Proc
}

// newWorld starts a cluster holding seed and the objects of
// testdata/cluster.yaml, then the MCO's controllers and the exporter. The
// seed is created owners first, its owner references following their
// owners' new uids.
func newWorld(t *testing.T, seed []*unstructured.Unstructured) *world {
	t.Helper()
	dir, err := os.MkdirTemp("", "e2e-mco-"+strings.ReplaceAll(t.Name(), "/", "-")+"-")
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, dir: dir}
	t.Cleanup(w.stop)
	if w.cluster, err = cluster.Start(dir, tools["E2E_ETCD"], tools["E2E_KUBE_APISERVER"]); err != nil {
		t.Fatal(err)
	}
	if w.kube, err = cluster.NewKube(w.cluster.Admin); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for _, f := range mcoCRDs {
		crds, err := cluster.LoadFile(filepath.Join(tools["E2E_MCO_DIR"], "vendor/github.com/openshift/api", f))
		if err != nil {
			t.Fatalf("the MCO's vendored CRD %s: %v", f, err)
		}
		for _, crd := range crds {
			if err := w.kube.CreateCRD(ctx, crd); err != nil {
				t.Fatal(err)
			}
		}
	}
	base, err := w.baseObjects()
	if err != nil {
		t.Fatal(err)
	}
	uids := map[types.UID]types.UID{} // the seed's uids to the API server's
	var nodes int
	for _, u := range append(base, seed...) {
		// The node controller picks the oldest node of a zone first
		// (sortNodeList): the API server stamps creation times to the
		// second, so the seed's nodes, oldest first, get a second each.
		if u.GetKind() == "Node" {
			if nodes > 0 {
				time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
			}
			nodes++
		}
		refs := u.GetOwnerReferences()
		for i := range refs {
			if uid, ok := uids[refs[i].UID]; ok {
				refs[i].UID = uid
			}
		}
		u.SetOwnerReferences(refs)
		if err := w.kube.Create(ctx, u); err != nil {
			t.Fatalf("seeding %s %s: %v", u.GetKind(), u.GetName(), err)
		}
		ri, err := w.kube.Resource(u)
		if err != nil {
			t.Fatal(err)
		}
		created, err := ri.Get(ctx, u.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		uids[u.GetUID()] = created.GetUID()
	}
	// A build names its Job by uid too (jobimagebuilder.go start), and is
	// created before it.
	for _, u := range seed {
		if uid, ok := uids[types.UID(u.GetAnnotations()[jobUIDAnno])]; ok && u.GetKind() == "MachineOSBuild" {
			if err := w.mergePatch(ctx, mosbGVR, "", u.GetName(), map[string]any{"metadata": map[string]any{
				"annotations": map[string]any{jobUIDAnno: string(uid)}}}, false); err != nil {
				t.Fatal(err)
			}
		}
	}
	w.startControllers()
	return w
}

// baseObjects are the namespace and testdata/cluster.yaml, the
// ControllerConfig's CA fields set to the API server's CA.
func (w *world) baseObjects() ([]*unstructured.Unstructured, error) {
	objs, err := cluster.LoadFile(filepath.Join("testdata", "cluster.yaml"))
	if err != nil {
		return nil, err
	}
	ca := base64.StdEncoding.EncodeToString(w.cluster.CAPEM)
	for _, u := range objs {
		if u.GetKind() == "ControllerConfig" {
			for _, f := range []string{"rootCAData", "kubeAPIServerServingCAData"} {
				if err := unstructured.SetNestedField(u.Object, ca, "spec", f); err != nil {
					return nil, err
				}
			}
		}
	}
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(mcoNamespace)
	return append([]*unstructured.Unstructured{ns}, objs...), nil
}

// startControllers starts the machine-os-builder as its Deployment runs it
// (`machine-os-builder start`, a kubeconfig in KUBECONFIG), the node
// controller, and the exporter, and waits until the exporter serves.
func (w *world) startControllers() {
	w.t.Helper()
	env := []string{"KUBECONFIG=" + w.cluster.AdminKubeconfig}
	metrics, err := cluster.FreeAddress()
	if err != nil {
		w.t.Fatal(err)
	}
	builder := w.start("machine-os-builder", tools["E2E_MCO_BUILDER"], env, "start", "--metrics-listen-address", metrics)
	node := w.start("node-controller", tools["E2E_MCO_NODE"], env)
	addr, err := cluster.FreeAddress()
	if err != nil {
		w.t.Fatal(err)
	}
	p := w.start("ocl_exporter", exporterBin, nil, "--kubeconfig", w.cluster.AdminKubeconfig,
		"--web.listen-address", addr, "--collector.render-interval=100ms")
	w.exporter = "http://" + addr
	if err := cluster.WaitHTTP(p, http.DefaultClient, w.exporter+"/readyz", "", 2*time.Minute); err != nil {
		w.t.Fatal(err)
	}
	// A cluster's controllers have long synced when an incident starts:
	// the tests play their first change once both have handled what they
	// found at start (the build controller's first pass runs after its
	// 5 s UpdateDelay).
	w.waitLog(builder, "Finished adding MachineConfigPool")
	w.waitLog(node, "Starting MachineConfigController-NodeController")
}

// waitLog waits until a controller's log says what it has done.
func (w *world) waitLog(p *cluster.Proc, text string) {
	w.t.Helper()
	deadline := time.Now().Add(settleTimeout)
	for !strings.Contains(p.Tail(100000), text) {
		if !p.Running() || time.Now().After(deadline) {
			w.t.Fatalf("%s has not logged %q:\n%s", p.Name, text, p.Tail(30))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func (w *world) start(name, bin string, env []string, args ...string) *cluster.Proc {
	w.t.Helper()
	p, err := cluster.StartProcEnv(w.dir, name, bin, env, args...)
	if err != nil {
		w.t.Fatalf("%s: %v", name, err)
	}
	w.procs = append(w.procs, p)
	return p
}

// stop stops everything, keeping the logs when the test failed.
func (w *world) stop() {
	for i := len(w.procs) - 1; i >= 0; i-- {
		w.procs[i].Stop()
	}
	if w.cluster != nil {
		w.cluster.Stop()
	}
	if w.t.Failed() {
		w.t.Logf("logs of the MCO's controllers, the exporter and the servers kept in %s", w.dir)
		return
	}
	os.RemoveAll(w.dir)
}

// checkRunning fails the test when a controller has exited.
func (w *world) checkRunning() {
	w.t.Helper()
	for _, p := range w.procs {
		if !p.Running() {
			w.t.Fatalf("%s exited:\n%s", p.Name, p.Tail(30))
		}
	}
}

// resource is the dynamic client of a kind's resource.
func (w *world) resource(gvr schema.GroupVersionResource, namespace string) dynamic.ResourceInterface {
	if namespace == "" {
		return w.kube.Dyn.Resource(gvr)
	}
	return w.kube.Dyn.Resource(gvr).Namespace(namespace)
}

// get reads one object, nil when it does not exist.
func (w *world) get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) *unstructured.Unstructured {
	u, err := w.resource(gvr, namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return u
}

// logTail is the end of a process's log, by name.
func (w *world) logTail(name string, lines int) string {
	for _, p := range w.procs {
		if p.Name == name {
			return p.Tail(lines)
		}
	}
	return fmt.Sprintf("(no process %s)", name)
}
