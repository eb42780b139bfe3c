//go:build e2e

package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/ocl-exporter/ocl_exporter/test/cluster"
)

// The Prometheus Operator's module, pinned by hack/prometheus-operator
// (make e2e-tools builds its cmd/operator into $E2E_PROMETHEUS_OPERATOR).
const (
	operatorModule    = "github.com/prometheus-operator/prometheus-operator"
	operatorToolsDir  = repoRoot + "/hack/prometheus-operator"
	operatorCRDSubdir = "example/prometheus-operator-crd"
)

// The platform monitoring stack as cluster-monitoring-operator deploys it:
// the Prometheus "k8s" in openshift-monitoring, running as the service
// account prometheus-k8s, with the service CA bundle mounted from the
// ConfigMap serving-certs-ca-bundle.
const (
	monitoringNamespace = "openshift-monitoring"
	prometheusName      = "k8s"
	prometheusSA        = "prometheus-k8s"
	serviceCABundle     = "serving-certs-ca-bundle"
	// clusterMonitoringLabel selects the namespaces whose ServiceMonitors
	// and PrometheusRules the platform Prometheus loads.
	clusterMonitoringLabel = "openshift.io/cluster-monitoring"
	// operatorPrometheus is the Prometheus that runs the operator's
	// configuration ($E2E_OPERATOR_PROMETHEUS, built by make e2e-tools from
	// hack/prometheus: the version the operator defaults to;
	// Debian's is built without Kubernetes service discovery). The
	// operator generates the configuration for this version.
	operatorPrometheus = "3.5.0"
)

// moduleDir downloads mod at the version the Go module in dir requires and
// returns its directory in the module cache: the CRDs are data of the same
// module version the operator is built from.
func moduleDir(dir, mod string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", mod)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s in %s: %w", mod, dir, err)
	}
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(out, &m); err != nil {
		return "", fmt.Errorf("go mod download %s: %w", mod, err)
	}
	if m.Dir == "" {
		return "", fmt.Errorf("go mod download %s: no directory (%s)", mod, m.Error)
	}
	return m.Dir, nil
}

// installMonitoringCRDs installs every CRD of the Prometheus Operator the
// suite runs, server-side and strictly validated, as its documentation
// says to (kubectl apply --server-side), and waits until each is served.
func installMonitoringCRDs(ctx context.Context) error {
	dir, err := moduleDir(operatorToolsDir, operatorModule)
	if err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(dir, operatorCRDSubdir, "*.yaml"))
	if err != nil {
		return fmt.Errorf("CRDs in %s: %w", filepath.Join(dir, operatorCRDSubdir), err)
	}
	if len(files) == 0 {
		return fmt.Errorf("no CRDs in %s", filepath.Join(dir, operatorCRDSubdir))
	}
	_, err = applyCRDs(ctx, files)
	return err
}

// applyCRDs applies the CRDs of files server-side and strictly validated,
// as `kubectl apply --server-side` does, waits until each is served, and
// returns them.
func applyCRDs(ctx context.Context, files []string) ([]*unstructured.Unstructured, error) {
	var crds []*unstructured.Unstructured
	for _, f := range files {
		objs, err := cluster.LoadFile(f)
		if err != nil {
			return crds, err
		}
		for _, crd := range objs {
			if err := env.kube.Apply(ctx, crd, false); err != nil {
				return crds, fmt.Errorf("%s: %w", f, err)
			}
			crds = append(crds, crd)
			if err := env.kube.WaitEstablished(ctx, crd); err != nil {
				return crds, fmt.Errorf("CRD %s not established: %w", crd.GetName(), err)
			}
		}
	}
	return crds, nil
}

// kustomizeBuild is `kustomize build dir`, as objects.
func kustomizeBuild(dir string) ([]*unstructured.Unstructured, error) {
	rm, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	var out []*unstructured.Unstructured
	for _, r := range rm.Resources() {
		y, err := r.AsYAML()
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := sigsyaml.Unmarshal(y, &u.Object); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

// TestOverlaysApply: every object of every overlay passes the real API
// server's validation, the monitoring.coreos.com ones against the
// Prometheus Operator's CRDs, strictly (server-side dry run: the suite
// runs with the base applied).
func TestOverlaysApply(t *testing.T) {
	for _, dir := range bundleDirs(t)[1:] {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			objs, err := kustomizeBuild(filepath.Join(repoRoot, dir))
			if err != nil {
				t.Fatal(err)
			}
			kinds := map[string]bool{}
			for _, u := range objs {
				kinds[u.GetKind()] = true
				if err := env.kube.Apply(t.Context(), u, true); err != nil {
					t.Errorf("%s %s %s: %v", dir, u.GetKind(), objectName(u), err)
				}
			}
			for _, k := range []string{"Deployment", "ServiceMonitor", "PrometheusRule"} {
				if !kinds[k] {
					t.Errorf("%s has no %s", dir, k)
				}
			}
		})
	}
}

// bundleObject is the object of deploy/ (as applied) of that kind and name.
func bundleObject(t *testing.T, kind, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	for _, u := range env.bundle {
		if u.GetKind() == kind && u.GetNamespace() == namespace && u.GetName() == name {
			return u
		}
	}
	t.Fatalf("deploy/ has no %s %s/%s", kind, namespace, name)
	return nil
}

// startOperator runs the Prometheus Operator against the API server with
// the admin's credentials. No kubelet: --kubelet-service stays empty, and
// the pods of the StatefulSet it writes never run.
func startOperator(t *testing.T, dir string) *cluster.Proc {
	t.Helper()
	addr, err := cluster.FreeAddress()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", env.cluster.AdminKubeconfig)
	p, err := cluster.StartProc(dir, "prometheus-operator", tools["E2E_PROMETHEUS_OPERATOR"],
		"--web.listen-address="+addr, "--kubelet-service=", "--log-level=info")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	if err := cluster.WaitHTTP(p, http.DefaultClient, "http://"+addr+"/healthz", "", time.Minute); err != nil {
		t.Fatal(err)
	}
	return p
}

// generated is what the operator writes for the Prometheus: its
// configuration (Secret prometheus-<name>, prometheus.yaml.gz), its rule
// files (ConfigMap prometheus-<name>-rulefiles-0) and the TLS assets it
// copies from referenced Secrets and ConfigMaps.
type generated struct {
	config    string
	rules     map[string]string
	tlsAssets map[string][]byte
}

// waitGenerated waits until the operator's configuration has a scrape
// pool for each ServiceMonitor named and a rule file for each
// PrometheusRule named.
func waitGenerated(t *testing.T, op *cluster.Proc, serviceMonitors, rules []string) generated {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cs := env.kube.CS.CoreV1()
	var g generated
	var missing []string
	for {
		missing = nil
		if s, err := cs.Secrets(monitoringNamespace).Get(ctx, "prometheus-"+prometheusName, metav1.GetOptions{}); err != nil {
			missing = append(missing, "Secret prometheus-"+prometheusName+": "+err.Error())
		} else if g.config, err = gunzip(s.Data["prometheus.yaml.gz"]); err != nil {
			missing = append(missing, "prometheus.yaml.gz: "+err.Error())
		}
		for _, sm := range serviceMonitors {
			if pool := "serviceMonitor/" + sm + "/0"; !strings.Contains(g.config, "job_name: "+pool+"\n") {
				missing = append(missing, "scrape pool "+pool)
			}
		}
		g.rules = map[string]string{}
		if cm, err := cs.ConfigMaps(monitoringNamespace).Get(ctx, "prometheus-"+prometheusName+"-rulefiles-0", metav1.GetOptions{}); err != nil {
			missing = append(missing, "ConfigMap prometheus-"+prometheusName+"-rulefiles-0: "+err.Error())
		} else {
			g.rules = cm.Data
		}
		for _, r := range rules {
			if !slices.ContainsFunc(slices.Collect(maps.Keys(g.rules)), func(k string) bool { return strings.HasPrefix(k, strings.ReplaceAll(r, "/", "-")+"-") }) {
				missing = append(missing, "rule file of PrometheusRule "+r)
			}
		}
		if s, err := cs.Secrets(monitoringNamespace).Get(ctx, "prometheus-"+prometheusName+"-tls-assets-0", metav1.GetOptions{}); err == nil {
			g.tlsAssets = s.Data
		}
		if len(missing) == 0 {
			return g
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the operator did not generate the configuration: missing\n  %s\n--- operator log:\n%s", strings.Join(missing, "\n  "), op.Tail(30))
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func gunzip(b []byte) (string, error) {
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return "", err
	}
	out, err := io.ReadAll(r)
	return string(out), err
}

// mutation is a mistake in the bundle's ServiceMonitor endpoint that must
// make the scrape check fail.
type mutation struct {
	name   string
	change func(ep map[string]any)
}

var serviceMonitorMistakes = []mutation{
	{"port", func(ep map[string]any) { ep["port"] = "metrics" }},
	{"scheme", func(ep map[string]any) { ep["scheme"] = "http" }},
	{"servername", func(ep map[string]any) { tlsConfig(ep)["serverName"] = "ocl-exporter.openshift-monitoring.svc" }},
	// The API server's CA instead of the service CA.
	{"ca", func(ep map[string]any) { tlsConfig(ep)["caFile"] = saMount + "ca.crt" }},
	{"token", func(ep map[string]any) { delete(ep, "bearerTokenFile") }},
}

func tlsConfig(ep map[string]any) map[string]any {
	c, _ := ep["tlsConfig"].(map[string]any)
	return c
}

// TestPrometheusOperator runs deploy/ the way a cluster does: the real
// Prometheus Operator turns the bundle's ServiceMonitor and PrometheusRule
// into a Prometheus configuration and rule files for the platform
// Prometheus; the real Prometheus, running exactly that, discovers the
// exporter through the Service's endpoints, scrapes it over TLS against
// the service CA with its service account's token (which --auth.kubernetes
// reviews), and fires a scenario's alerts from the generated rules. Copies
// of the ServiceMonitor with one mistake each get the same check, which
// must fail for them.
func TestPrometheusOperator(t *testing.T) {
	dir := filepath.Join(env.dir, "operator")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	serviceCA, err := cluster.NewCA("openshift-service-serving-signer")
	if err != nil {
		t.Fatal(err)
	}
	ns := cluster.ExporterNamespace
	sm := bundleObject(t, "ServiceMonitor", ns, "ocl-exporter")
	rule := bundleObject(t, "PrometheusRule", ns, "ocl-exporter")
	monitors := []string{ns + "/" + sm.GetName()}
	for _, m := range serviceMonitorMistakes {
		bad := cluster.Sanitize(sm)
		bad.SetName(sm.GetName() + "-bad-" + m.name)
		eps, _, _ := unstructured.NestedSlice(bad.Object, "spec", "endpoints")
		ep := eps[0].(map[string]any)
		m.change(ep)
		// A label of its own: the copy scrapes the exporter's target under
		// the same job, instance and service, so its failed scrapes would
		// write up=0 into the real target's series and, depending on the
		// scrape offsets, page OCLExporterDown in the alert check below.
		relabelings, _ := ep["relabelings"].([]any)
		ep["relabelings"] = append(relabelings, map[string]any{"action": "replace", "targetLabel": "mistake", "replacement": m.name})
		if err := unstructured.SetNestedSlice(bad.Object, eps, "spec", "endpoints"); err != nil {
			t.Fatal(err)
		}
		if err := env.kube.Create(t.Context(), bad); err != nil {
			t.Fatalf("ServiceMonitor with the wrong %s: %v", m.name, err)
		}
		t.Cleanup(func() { _ = env.kube.Remove(context.Background(), bad) })
		monitors = append(monitors, ns+"/"+bad.GetName())
	}

	addr := startBundleExporter(t, dir, serviceCA).addr
	publishEndpoints(t, addr)
	platformPrometheus(t, serviceCA, nil)
	op := startOperator(t, dir)
	g := waitGenerated(t, op, monitors, []string{ns + "/" + rule.GetName()})
	if err := os.WriteFile(filepath.Join(dir, "operator-generated.yaml"), []byte(g.config), 0o600); err != nil {
		t.Fatal(err)
	}
	promURL := runGenerated(t, dir, g)

	t.Run("scrapes the exporter", func(t *testing.T) {
		poll(t, 90*time.Second, "the operator-generated configuration does not scrape the exporter", func() string {
			pools, err := targets(promURL)
			if err != nil {
				return err.Error()
			}
			return scrapeCheck(pools, monitors[0])
		})
		// Every family of the empty cluster's scrape, through Prometheus.
		want := map[string]bool{}
		for k := range env.baseline {
			want[family(k)] = true
		}
		poll(t, 30*time.Second, "OCL series missing in Prometheus", func() string {
			ls, _, err := query(promURL, `count by (__name__) ({job="ocl-exporter", namespace="ocl-exporter", __name__=~"(mosc|mosb|node|ocl)_.+"})`)
			if err != nil {
				return err.Error()
			}
			got := map[string]bool{}
			for _, l := range ls {
				got[l["__name__"]] = true
			}
			var missing []string
			for _, f := range slices.Sorted(maps.Keys(want)) {
				if !got[f] {
					missing = append(missing, f)
				}
			}
			return strings.Join(missing, "\n")
		})
	})

	t.Run("a mistake in the ServiceMonitor fails the check", func(t *testing.T) {
		for i, m := range serviceMonitorMistakes {
			poll(t, 90*time.Second, "the wrong "+m.name+" is not noticed", func() string {
				pools, err := targets(promURL)
				if err != nil {
					return err.Error()
				}
				why := scrapeCheck(pools, monitors[i+1])
				ts := pools["serviceMonitor/"+monitors[i+1]+"/0"]
				if why == "" {
					return "the check passes"
				}
				if len(ts) == 1 && ts[0].Health == "unknown" {
					return "not scraped yet" // wait for the first scrape
				}
				t.Logf("wrong %s: %s", m.name, why)
				return ""
			})
		}
	})

	t.Run("fires a scenario's alerts from the generated rules", func(t *testing.T) {
		const name = "seed004-build-failed"
		objs, _ := play(t, scenario(name))
		want, decided, ok := expectedAlerts(t, name)
		if !ok || len(want) == 0 {
			t.Fatalf("alerts/tests/scenario-%s.yaml expects no alert", name)
		}
		// The committed bundle links the runbooks on main, as the rule
		// files and their tests do (make manifests pins a ref), so the
		// alerts are the promtool test's, runbook_url included.
		poll(t, 90*time.Second, "the operator-generated rules do not fire the scenario's alerts", func() string {
			firing, err := firingAlerts(promURL)
			if err != nil {
				return err.Error()
			}
			return strings.Join(alertDiff(firing, want, decided), "\n")
		})
		removeAndExpectBaseline(t, nil, objs, settle)
	})
}
