//go:build e2e

// Package e2e runs the exporter against a real etcd and kube-apiserver, with
// the real CRDs and the deploy bundle's RBAC, and its alerts through a real
// Prometheus and Alertmanager. `make e2e` prepares the servers and runs it;
// see CONTRIBUTING.md, "Integration tests".
package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ocl-exporter/ocl_exporter/test/cluster"
)

const repoRoot = "../.."

// namespaces the fixtures and the deploy bundle need besides its own: the
// MCO's, and openshift-config-managed for the console dashboards.
var namespaces = []string{"openshift-machine-config-operator", "openshift-config-managed"}

// env is the cluster and exporter every test shares; each test leaves the
// cluster as it found it.
var env struct {
	dir         string
	cluster     *cluster.Cluster
	kube        *kube
	crds        map[string]*unstructured.Unstructured // by resource name, e.g. machineosbuilds.machineconfiguration.openshift.io
	bundle      []*unstructured.Unstructured
	scenarios   string // the seed scenarios, whole (materializeScenarios)
	exporterBin string
	exporter    *exporter
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
	for _, name := range []string{"E2E_ETCD", "E2E_KUBE_APISERVER", "E2E_PROMETHEUS", "E2E_PROMTOOL", "E2E_ALERTMANAGER", "E2E_PROMETHEUS_OPERATOR", "E2E_OPERATOR_PROMETHEUS"} {
		tools[name] = os.Getenv(name)
		if _, err := os.Stat(tools[name]); err != nil {
			return 1, fmt.Errorf("$%s=%q: %w; run the suite with make e2e, which builds and sets it", name, tools[name], err)
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
	if env.scenarios, err = materializeScenarios(env.dir); err != nil {
		return 1, err
	}
	begin := time.Now()
	env.cluster, err = cluster.Start(env.dir, tools["E2E_ETCD"], tools["E2E_KUBE_APISERVER"])
	defer func() {
		if env.exporter != nil {
			env.exporter.Stop()
		}
		if env.cluster != nil {
			env.cluster.Stop()
		}
	}()
	if err != nil {
		return 1, err
	}
	fmt.Fprintf(os.Stderr, "e2e: etcd and kube-apiserver ready at %s in %s\n", env.cluster.URL, time.Since(begin).Round(time.Second))
	if env.kube, err = newKube(env.cluster.Admin); err != nil {
		return 1, err
	}
	ctx := context.Background()
	if env.crds, err = env.kube.InstallCRDs(ctx, repoRoot); err != nil {
		return 1, err
	}
	for _, ns := range namespaces {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("Namespace")
		u.SetName(ns)
		if err := env.kube.Create(ctx, u); err != nil {
			return 1, err
		}
	}
	if err := installMonitoringCRDs(ctx); err != nil {
		return 1, err
	}
	if err := applyBundle(ctx); err != nil {
		return 1, err
	}
	if env.exporterBin, err = buildExporter(env.dir); err != nil {
		return 1, err
	}
	if env.exporter, err = startExporter(env.dir, env.exporterBin, "ocl_exporter", env.cluster.ExporterKubeconfig, ""); err != nil {
		return 1, err
	}
	// Every watched resource must be readable under the bundle's RBAC.
	if err := env.exporter.eventually(ctx, time.Minute, allAvailable(1)); err != nil {
		return 1, fmt.Errorf("the exporter under deploy/'s RBAC: %w", err)
	}
	if env.baseline, err = env.exporter.scrape(ctx); err != nil {
		return 1, err
	}
	if err := prepareRules(env.dir); err != nil {
		return 1, err
	}
	fmt.Fprintf(os.Stderr, "e2e: set up in %s\n", time.Since(begin).Round(time.Second))
	return m.Run(), nil
}

// applyBundle creates what `oc apply -k deploy/` would, every object, so
// the exporter runs under exactly the bundle's RBAC and the Prometheus
// Operator sees its ServiceMonitor and PrometheusRule.
func applyBundle(ctx context.Context) error {
	objs, err := kustomizeBuild(filepath.Join(repoRoot, "deploy"))
	if err != nil {
		return err
	}
	for _, u := range objs {
		if err := env.kube.Create(ctx, u); err != nil {
			return fmt.Errorf("deploy/ %s %s: %w", u.GetKind(), objectName(u), err)
		}
		env.bundle = append(env.bundle, u)
	}
	return nil
}
