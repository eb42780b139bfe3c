//go:build e2e

// Package e2e runs the exporter against a real etcd and kube-apiserver, with
// the real CRDs and the deploy bundle's RBAC, and its alerts through a real
// Prometheus and Alertmanager. `make e2e` prepares the servers and runs it;
// see the README, "Integration tests".
package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	sigsyaml "sigs.k8s.io/yaml"
)

const repoRoot = "../.."

// namespaces the fixtures and the deploy bundle need besides its own: the
// MCO's, and openshift-config-managed for the console dashboards.
var namespaces = []string{"openshift-machine-config-operator", "openshift-config-managed"}

// crdFiles are the CRDs the exporter reads, from the openshift/api module
// the exporter is built with. The MachineConfigNode CRD is the
// TechPreviewNoUpgrade one: its configImage fields are what the
// ImageModeStatusReporting fixtures use.
var crdFiles = []string{
	"machineconfiguration/v1/zz_generated.crd-manifests/0000_80_machine-config_01_machineosconfigs.crd.yaml",
	"machineconfiguration/v1/zz_generated.crd-manifests/0000_80_machine-config_01_machineosbuilds.crd.yaml",
	"machineconfiguration/v1/zz_generated.crd-manifests/0000_80_machine-config_01_machineconfigpools.crd.yaml",
	"machineconfiguration/v1/zz_generated.crd-manifests/0000_80_machine-config_01_machineconfigs.crd.yaml",
	"machineconfiguration/v1/zz_generated.crd-manifests/0000_80_machine-config_01_machineconfignodes-TechPreviewNoUpgrade.crd.yaml",
	"config/v1/zz_generated.crd-manifests/0000_00_cluster-version-operator_01_clusteroperators.crd.yaml",
}

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// env is the cluster and exporter every test shares; each test leaves the
// cluster as it found it.
var env struct {
	dir         string
	cluster     *cluster
	kube        *kube
	crds        map[string]*unstructured.Unstructured // by resource name, e.g. machineosbuilds.machineconfiguration.openshift.io
	bundle      []*unstructured.Unstructured
	exporterBin string
	exporter    *exporter
	monitoring  *monitoring
	// baseline is the scrape of the cluster with no OCL objects.
	baseline series
}

// tools are the servers' binaries, from make e2e.
var tools = map[string]string{}

func TestMain(m *testing.M) {
	code, err := setUpAndRun(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		code = 1
	}
	os.Exit(code)
}

func setUpAndRun(m *testing.M) (code int, err error) {
	for _, name := range []string{"E2E_ETCD", "E2E_KUBE_APISERVER", "E2E_PROMETHEUS", "E2E_PROMTOOL", "E2E_ALERTMANAGER"} {
		tools[name] = os.Getenv(name)
		if _, err := os.Stat(tools[name]); err != nil {
			return 1, fmt.Errorf("$%s=%q: %v; run the suite with make e2e, which builds and sets it", name, tools[name], err)
		}
	}
	if env.dir, err = os.MkdirTemp("", "ocl-exporter-e2e-"); err != nil {
		return 1, err
	}
	defer func() {
		if code == 0 && err == nil {
			os.RemoveAll(env.dir)
		} else {
			fmt.Fprintf(os.Stderr, "e2e: server logs and configuration kept in %s\n", env.dir)
		}
	}()
	begin := time.Now()
	env.cluster, err = startCluster(env.dir, tools["E2E_ETCD"], tools["E2E_KUBE_APISERVER"])
	defer func() {
		if env.monitoring != nil {
			env.monitoring.stop()
		}
		if env.exporter != nil {
			env.exporter.stop()
		}
		if env.cluster != nil {
			env.cluster.stop()
		}
	}()
	if err != nil {
		return 1, err
	}
	fmt.Fprintf(os.Stderr, "e2e: etcd and kube-apiserver ready at %s in %s\n", env.cluster.url, time.Since(begin).Round(time.Second))
	if env.kube, err = newKube(env.cluster.admin); err != nil {
		return 1, err
	}
	ctx := context.Background()
	if err := installCRDs(ctx); err != nil {
		return 1, err
	}
	for _, ns := range namespaces {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("Namespace")
		u.SetName(ns)
		if err := env.kube.create(ctx, u); err != nil {
			return 1, err
		}
	}
	if err := applyBundle(ctx); err != nil {
		return 1, err
	}
	if env.exporterBin, err = buildExporter(env.dir); err != nil {
		return 1, err
	}
	if env.exporter, err = startExporter(env.dir, env.exporterBin, "ocl_exporter", env.cluster.exporterKubeconfig, ""); err != nil {
		return 1, err
	}
	// Every watched resource must be readable under the bundle's RBAC.
	if err := env.exporter.eventually(ctx, time.Minute, allAvailable(1)); err != nil {
		return 1, fmt.Errorf("the exporter under deploy/'s RBAC: %w", err)
	}
	if env.baseline, err = env.exporter.scrape(ctx); err != nil {
		return 1, err
	}
	if env.monitoring, err = startMonitoring(env.dir, strings.TrimPrefix(env.exporter.url, "http://")); err != nil {
		return 1, err
	}
	fmt.Fprintf(os.Stderr, "e2e: set up in %s\n", time.Since(begin).Round(time.Second))
	return m.Run(), nil
}

// openshiftAPIDir is the openshift/api module the exporter is built with.
func openshiftAPIDir() (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/openshift/api")
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list -m github.com/openshift/api: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

func installCRDs(ctx context.Context) error {
	dir, err := openshiftAPIDir()
	if err != nil {
		return err
	}
	env.crds = map[string]*unstructured.Unstructured{}
	for _, f := range crdFiles {
		objs, err := loadFile(filepath.Join(dir, f))
		if err != nil {
			return err
		}
		for _, crd := range objs {
			env.crds[crd.GetName()] = crd
			if err := createCRD(ctx, crd); err != nil {
				return err
			}
		}
	}
	return nil
}

// createCRD creates a CRD and waits until it is Established.
func createCRD(ctx context.Context, crd *unstructured.Unstructured) error {
	if err := env.kube.create(ctx, crd); err != nil {
		return fmt.Errorf("CRD %s: %w", crd.GetName(), err)
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := env.kube.dyn.Resource(crdResource).Get(ctx, crd.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
}

// applyBundle creates what `oc apply -k deploy/` would, so the exporter runs
// under exactly the bundle's RBAC. Kinds this cluster does not serve (the
// monitoring.coreos.com ones: their CRDs do not ship in a module the
// project uses) are skipped.
func applyBundle(ctx context.Context) error {
	rm, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join(repoRoot, "deploy"))
	if err != nil {
		return fmt.Errorf("kustomize build deploy/: %w", err)
	}
	for _, r := range rm.Resources() {
		y, err := r.AsYAML()
		if err != nil {
			return err
		}
		u := &unstructured.Unstructured{}
		if err := sigsyaml.Unmarshal(y, &u.Object); err != nil {
			return err
		}
		if _, err := env.kube.resource(u); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: deploy/ %s %s not applied: %v\n", u.GetKind(), objectName(u), err)
			continue
		}
		if err := env.kube.create(ctx, u); err != nil {
			return fmt.Errorf("deploy/ %s %s: %w", u.GetKind(), objectName(u), err)
		}
		env.bundle = append(env.bundle, u)
	}
	return nil
}
