//go:build e2e

package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
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
	for _, f := range files {
		objs, err := cluster.LoadFile(f)
		if err != nil {
			return err
		}
		for _, crd := range objs {
			if err := env.kube.Apply(ctx, crd, false); err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
			if err := env.kube.WaitEstablished(ctx, crd); err != nil {
				return fmt.Errorf("CRD %s not established: %w", crd.GetName(), err)
			}
		}
	}
	return nil
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

// TestUserWorkloadOverlayApplies: every object of the user-workload
// overlay passes the real API server's validation, the monitoring.coreos.com
// ones against the Prometheus Operator's CRDs, strictly (server-side dry
// run: the suite runs with the base applied).
func TestUserWorkloadOverlayApplies(t *testing.T) {
	objs, err := kustomizeBuild(filepath.Join(repoRoot, "deploy", "overlays", "user-workload"))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, u := range objs {
		kinds[u.GetKind()] = true
		if err := env.kube.Apply(t.Context(), u, true); err != nil {
			t.Errorf("deploy/overlays/user-workload %s %s: %v", u.GetKind(), objectName(u), err)
		}
	}
	for _, k := range []string{"ServiceMonitor", "PrometheusRule"} {
		if !kinds[k] {
			t.Errorf("the overlay has no %s", k)
		}
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

// pod is the file system of a pod that does not run: the files its
// volumes would mount, under root, and the rewriting of the absolute paths
// in its configuration to them.
type pod struct{ root string }

func (p pod) path(abs string) string { return filepath.Join(p.root, abs) }

// write puts a file where the pod would see it at abs.
func (p pod) write(abs string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p.path(abs)), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p.path(abs), data, 0o600)
}

// relocate rewrites every absolute path under the mount points in text to
// the file the test wrote for it.
func (p pod) relocate(text string, mounts ...string) string {
	for _, m := range mounts {
		to := p.path(m)
		if strings.HasSuffix(m, "/") {
			to += "/"
		}
		text = strings.ReplaceAll(text, m, to)
	}
	return text
}

// startBundleExporter runs the exporter as deploy/'s Deployment does: its
// arguments, its web configuration from the bundle's ConfigMap and the
// serving certificate the service CA would write into the Secret the
// Service's annotation names, for <service>.<namespace>.svc. It listens on
// loopback; the Service's endpoints point there (no kubelet runs).
func startBundleExporter(t *testing.T, dir string, serviceCA *cluster.CA) (addr string, client *http.Client) {
	t.Helper()
	ctx := t.Context()
	ns := cluster.ExporterNamespace
	svc := bundleObject(t, "Service", ns, "ocl-exporter")
	secretName := svc.GetAnnotations()["service.beta.openshift.io/serving-cert-secret-name"]
	if secretName == "" {
		t.Fatal("the Service has no service.beta.openshift.io/serving-cert-secret-name: no serving certificate")
	}
	serverName := svc.GetName() + "." + ns + ".svc"
	crt, key, err := serviceCA.Issue([]string{serverName, serverName + ".cluster.local"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tlsSecret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: ns},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{"tls.crt": crt, "tls.key": key},
	}
	if _, err := env.kube.CS.CoreV1().Secrets(ns).Create(ctx, tlsSecret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.kube.CS.CoreV1().Secrets(ns).Delete(context.Background(), secretName, metav1.DeleteOptions{})
	})

	dep := bundleObject(t, "Deployment", ns, "ocl-exporter")
	var spec struct {
		Template struct {
			Spec corev1.PodSpec `json:"spec"`
		} `json:"template"`
	}
	if err := runtimeConvert(dep.Object["spec"], &spec); err != nil {
		t.Fatal(err)
	}
	ps := spec.Template.Spec
	if len(ps.Containers) != 1 {
		t.Fatalf("the Deployment has %d containers, the test runs one", len(ps.Containers))
	}
	c := ps.Containers[0]
	p := pod{root: filepath.Join(dir, "exporter-pod")}
	var mounts []string
	for _, vm := range c.VolumeMounts {
		i := slices.IndexFunc(ps.Volumes, func(v corev1.Volume) bool { return v.Name == vm.Name })
		if i < 0 {
			t.Fatalf("volume mount %s names no volume", vm.Name)
		}
		data := map[string][]byte{}
		switch v := ps.Volumes[i]; {
		case v.Secret != nil:
			s, err := env.kube.CS.CoreV1().Secrets(ns).Get(ctx, v.Secret.SecretName, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("volume %s: %v", v.Name, err)
			}
			data = s.Data
		case v.ConfigMap != nil:
			cm, err := env.kube.CS.CoreV1().ConfigMaps(ns).Get(ctx, v.ConfigMap.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("volume %s: %v", v.Name, err)
			}
			for k, v := range cm.Data {
				data[k] = []byte(v)
			}
		default:
			t.Fatalf("volume %s: only Secret and ConfigMap volumes are mounted by the test", v.Name)
		}
		for k, v := range data {
			if err := p.write(filepath.Join(vm.MountPath, k), v); err != nil {
				t.Fatal(err)
			}
		}
		mounts = append(mounts, vm.MountPath+"/")
	}
	// The files mounted may name each other (the web configuration names
	// the certificate): rewrite them all.
	for _, m := range mounts {
		files, _ := filepath.Glob(filepath.Join(p.path(m), "*"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, []byte(p.relocate(string(b), mounts...)), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	addr, err = cluster.FreeAddress()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--kubeconfig", env.cluster.ExporterKubeconfig, "--web.listen-address=" + addr}
	for _, a := range c.Args {
		if !strings.HasPrefix(a, "--web.listen-address") {
			args = append(args, p.relocate(a, mounts...))
		}
	}
	proc, err := cluster.StartProc(dir, "ocl_exporter-bundle", env.exporterBin, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proc.Stop)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(serviceCA.PEM)
	client = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: serverName}}}
	if err := cluster.WaitHTTP(proc, client, "https://"+addr+"/readyz", "", time.Minute); err != nil {
		t.Fatalf("the exporter as deploy/ runs it (%q): %v", args, err)
	}
	return addr, client
}

// runtimeConvert decodes an unstructured value into a typed one.
func runtimeConvert(in any, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// podFQDN names the exporter's pod in its EndpointSlice. The API server
// refuses loopback IPs in Endpoints and EndpointSlices, and only dotted
// names in FQDN slices, none of which resolves to loopback here; so the
// Prometheus configuration maps this one name to 127.0.0.1 (runGenerated),
// as a hosts file entry would. The .invalid domain never resolves
// elsewhere.
const podFQDN = "ocl-exporter-0.e2e.invalid"

// publishEndpoints writes what the EndpointSlice controller would for the
// Service with its pod at podFQDN and the exporter's port, with the
// Service's port names. No controller runs here.
func publishEndpoints(t *testing.T, addr string) {
	t.Helper()
	_, portStr, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portStr)
	svc := bundleObject(t, "Service", cluster.ExporterNamespace, "ocl-exporter")
	var spec corev1.ServiceSpec
	if err := runtimeConvert(svc.Object["spec"], &spec); err != nil {
		t.Fatal(err)
	}
	var ports []any
	for _, sp := range spec.Ports {
		ports = append(ports, map[string]any{"name": sp.Name, "port": int64(port), "protocol": "TCP"})
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
		"metadata": map[string]any{"name": svc.GetName() + "-e2e", "namespace": svc.GetNamespace(),
			"labels": map[string]any{"kubernetes.io/service-name": svc.GetName()}},
		"addressType": "FQDN",
		"endpoints":   []any{map[string]any{"addresses": []any{podFQDN}, "conditions": map[string]any{"ready": true}}},
		"ports":       ports,
	}}
	if err := env.kube.Create(t.Context(), u); err != nil {
		t.Fatalf("EndpointSlice for the exporter at %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = env.kube.Remove(context.Background(), u) })
}

// platformPrometheus creates the platform monitoring stack's Prometheus
// resource as cluster-monitoring-operator does (jsonnet/components/
// prometheus.libsonnet): every ServiceMonitor and PrometheusRule of the
// namespaces labelled openshift.io/cluster-monitoring=true, the service CA
// bundle mounted from a ConfigMap. The intervals are the test's, the
// version is the Prometheus the suite runs, and the service discovery
// reads EndpointSlices (see publishEndpoints).
func platformPrometheus(t *testing.T, serviceCA *cluster.CA) {
	t.Helper()
	ctx := t.Context()
	nsSelector := map[string]any{"matchLabels": map[string]any{clusterMonitoringLabel: "true"}}
	objs := []*unstructured.Unstructured{
		{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
			"metadata": map[string]any{"name": monitoringNamespace, "labels": map[string]any{clusterMonitoringLabel: "true"}}}},
		{Object: map[string]any{"apiVersion": "v1", "kind": "ServiceAccount",
			"metadata": map[string]any{"name": prometheusSA, "namespace": monitoringNamespace}}},
		{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": serviceCABundle, "namespace": monitoringNamespace},
			"data":     map[string]any{"service-ca.crt": string(serviceCA.PEM)}}},
		{Object: map[string]any{"apiVersion": "monitoring.coreos.com/v1", "kind": "Prometheus",
			"metadata": map[string]any{"name": prometheusName, "namespace": monitoringNamespace},
			"spec": map[string]any{
				"version":                         "v" + operatorPrometheus,
				"serviceAccountName":              prometheusSA,
				"configMaps":                      []any{serviceCABundle},
				"serviceMonitorSelector":          map[string]any{},
				"serviceMonitorNamespaceSelector": nsSelector,
				"podMonitorNamespaceSelector":     nsSelector,
				"probeNamespaceSelector":          nsSelector,
				"ruleSelector":                    map[string]any{},
				"ruleNamespaceSelector":           nsSelector,
				"serviceDiscoveryRole":            "EndpointSlice",
				"scrapeInterval":                  "5s",
				"evaluationInterval":              "1s",
			}}},
	}
	for _, u := range objs {
		if err := env.kube.Create(ctx, u); err != nil && (u.GetKind() != "Namespace" || !apierrors.IsAlreadyExists(err)) {
			t.Fatalf("%s %s: %v", u.GetKind(), objectName(u), err)
		}
		if u.GetKind() != "Namespace" { // no namespace controller would finalize it
			t.Cleanup(func() { _ = env.kube.Remove(context.Background(), u) })
		}
	}
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

// The Prometheus pod's mounts the operator's StatefulSet declares: what the
// generated configuration's file paths point into.
const (
	saMount         = "/var/run/secrets/kubernetes.io/serviceaccount/"
	configMapsMount = "/etc/prometheus/configmaps/"
	rulesMount      = "/etc/prometheus/rules/"
	certsMount      = "/etc/prometheus/certs/"
)

// runGenerated starts the real Prometheus (the version the resource names)
// with the operator's
// configuration and rule files, changing only what a pod provides and no
// process here has: the files of its mounts (service account token from a
// TokenRequest, the API server's CA, the ConfigMaps of spec.configMaps,
// the TLS assets), $(POD_NAME) and $(SHARD) as the config reloader
// expands them, the
// Kubernetes service discovery's in-cluster API server address, which
// becomes a kubeconfig for the same token, and the pod's address (podFQDN
// to 127.0.0.1, a last relabeling step of the jobs that discover
// targets: what DNS would do in a cluster). Every alerting rule's for: is
// 0s, as in startMonitoring: the test sees what fires once it has waited.
func runGenerated(t *testing.T, dir string, g generated) (promURL string) {
	t.Helper()
	ctx := t.Context()
	p := pod{root: filepath.Join(dir, "prometheus-pod")}
	expiry := int64(3600)
	tr, err := env.kube.CS.CoreV1().ServiceAccounts(monitoringNamespace).CreateToken(ctx, prometheusSA,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest for %s/%s: %v", monitoringNamespace, prometheusSA, err)
	}
	files := map[string][]byte{
		saMount + "token":     []byte(tr.Status.Token),
		saMount + "ca.crt":    env.cluster.CAPEM,
		saMount + "namespace": []byte(monitoringNamespace),
	}
	cm, err := env.kube.CS.CoreV1().ConfigMaps(monitoringNamespace).Get(ctx, serviceCABundle, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range cm.Data {
		files[configMapsMount+serviceCABundle+"/"+k] = []byte(v)
	}
	rules := map[string]rule{}
	if err := os.MkdirAll(p.path(rulesMount+"prometheus-"+prometheusName+"-rulefiles-0"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range g.rules {
		raw := filepath.Join(dir, "generated-"+name)
		if err := os.WriteFile(raw, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := rewriteRules(raw, p.path(rulesMount+"prometheus-"+prometheusName+"-rulefiles-0/"+name), rules); err != nil {
			t.Fatalf("operator rule file %s: %v", name, err)
		}
	}
	for k, v := range g.tlsAssets {
		files[certsMount+k] = v
	}
	for path, data := range files {
		if err := p.write(path, data); err != nil {
			t.Fatal(err)
		}
	}

	kubeconfig := filepath.Join(dir, "prometheus-sd.kubeconfig")
	kc := clientcmdapi.NewConfig()
	kc.Clusters["e2e"] = &clientcmdapi.Cluster{Server: env.cluster.URL, CertificateAuthority: p.path(saMount + "ca.crt")}
	kc.AuthInfos["sa"] = &clientcmdapi.AuthInfo{TokenFile: p.path(saMount + "token")}
	kc.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "sa"}
	kc.CurrentContext = "e2e"
	if err := clientcmd.WriteToFile(*kc, kubeconfig); err != nil {
		t.Fatal(err)
	}

	// The config reloader's expansion of the pod's environment.
	text := strings.NewReplacer("$(POD_NAME)", "prometheus-"+prometheusName+"-0", "$(SHARD)", "0").Replace(g.config)
	text = p.relocate(text, saMount, configMapsMount, rulesMount, certsMount)
	var cfg map[string]any
	if err := sigsyaml.Unmarshal([]byte(text), &cfg); err != nil {
		t.Fatalf("the operator's configuration: %v", err)
	}
	scrapes, _ := cfg["scrape_configs"].([]any)
	for _, s := range scrapes {
		job := s.(map[string]any)
		sds, _ := job["kubernetes_sd_configs"].([]any)
		for _, sd := range sds {
			sd.(map[string]any)["kubeconfig_file"] = kubeconfig
		}
		if len(sds) > 0 {
			relabel, _ := job["relabel_configs"].([]any)
			job["relabel_configs"] = append(relabel, map[string]any{
				"source_labels": []any{"__address__"},
				"regex":         regexp.QuoteMeta(podFQDN) + ":(\\d+)",
				"target_label":  "__address__",
				"replacement":   "127.0.0.1:$1",
			})
		}
	}
	out, err := sigsyaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	configFile := filepath.Join(dir, "prometheus-generated.yaml")
	if err := os.WriteFile(configFile, out, 0o600); err != nil {
		t.Fatal(err)
	}
	bin := tools["E2E_OPERATOR_PROMETHEUS"]
	if out, err := exec.Command(bin, "--version").CombinedOutput(); err != nil || !strings.Contains(string(out), "version "+operatorPrometheus+" ") {
		t.Fatalf("%s --version: %v, want %s (hack/prometheus's):\n%s", bin, err, operatorPrometheus, out)
	}
	addr, err := cluster.FreeAddress()
	if err != nil {
		t.Fatal(err)
	}
	proc, err := cluster.StartProc(dir, "prometheus-generated", bin,
		"--config.file", configFile, "--storage.tsdb.path", filepath.Join(dir, "prometheus-generated-data"), "--web.listen-address", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proc.Stop)
	promURL = "http://" + addr
	if err := cluster.WaitHTTP(proc, http.DefaultClient, promURL+"/-/ready", "", time.Minute); err != nil {
		t.Fatal(err)
	}
	return promURL
}

// target is a scrape target as /api/v1/targets reports it.
type target struct {
	ScrapePool string            `json:"scrapePool"`
	Health     string            `json:"health"`
	LastError  string            `json:"lastError"`
	Labels     map[string]string `json:"labels"`
}

func promGet(promURL, path string, query url.Values, into any) error {
	resp, err := http.Get(promURL + path + "?" + query.Encode())
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var body struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
		Error  string          `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return err
	}
	if body.Status != "success" {
		return fmt.Errorf("%s: %s", path, body.Error)
	}
	return json.Unmarshal(body.Data, into)
}

// targets are the active targets by scrape pool.
func targets(promURL string) (map[string][]target, error) {
	var data struct {
		ActiveTargets []target `json:"activeTargets"`
	}
	if err := promGet(promURL, "/api/v1/targets", url.Values{"state": {"active"}}, &data); err != nil {
		return nil, err
	}
	out := map[string][]target{}
	for _, tg := range data.ActiveTargets {
		out[tg.ScrapePool] = append(out[tg.ScrapePool], tg)
	}
	return out, nil
}

// scrapeCheck is the check the bundle must pass: the scrape pool of the
// ServiceMonitor has exactly one target, and its last scrape succeeded.
// It returns why not, or "" when it passes.
func scrapeCheck(pools map[string][]target, serviceMonitor string) string {
	pool := "serviceMonitor/" + serviceMonitor + "/0"
	ts := pools[pool]
	switch {
	case len(ts) == 0:
		return pool + ": no target discovered"
	case len(ts) > 1:
		return fmt.Sprintf("%s: %d targets, want the one exporter", pool, len(ts))
	case ts[0].Health != "up":
		return fmt.Sprintf("%s: target %s is %s: %s", pool, ts[0].Labels["instance"], ts[0].Health, ts[0].LastError)
	}
	return ""
}

// query runs an instant query and returns the labels and value of each
// resulting series.
func query(promURL, q string) ([]map[string]string, []float64, error) {
	var data struct {
		Result []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		} `json:"result"`
	}
	if err := promGet(promURL, "/api/v1/query", url.Values{"query": {q}}, &data); err != nil {
		return nil, nil, err
	}
	var ls []map[string]string
	var vs []float64
	for _, r := range data.Result {
		v, _ := strconv.ParseFloat(fmt.Sprint(r.Value[1]), 64)
		ls, vs = append(ls, r.Metric), append(vs, v)
	}
	return ls, vs, nil
}

// firingAlerts are the alerts the Prometheus evaluates as firing, keyed as
// the webhook keys them.
func firingAlerts(promURL string) (map[string]alert, error) {
	var data struct {
		Alerts []struct {
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
			State       string            `json:"state"`
		} `json:"alerts"`
	}
	if err := promGet(promURL, "/api/v1/alerts", nil, &data); err != nil {
		return nil, err
	}
	out := map[string]alert{}
	for _, a := range data.Alerts {
		if a.State == "firing" {
			out[seriesKey("ALERTS", a.Labels)] = alert{Status: "firing", Labels: a.Labels, Annotations: a.Annotations}
		}
	}
	return out, nil
}

// poll calls check until it returns "" or the timeout, then fails with its
// last answer.
func poll(t *testing.T, timeout time.Duration, what string, check func() string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	for {
		last := check()
		if last == "" {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s, after %s:\n%s", what, timeout, last)
		case <-time.After(time.Second):
		}
	}
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

	addr, _ := startBundleExporter(t, dir, serviceCA)
	publishEndpoints(t, addr)
	platformPrometheus(t, serviceCA)
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
		// The bundle links the runbooks at the tag or commit make bundle
		// ran at, the rule files and their tests main's.
		pinned := regexp.MustCompile(`/blob/[^/]+/runbooks/`)
		poll(t, 90*time.Second, "the operator-generated rules do not fire the scenario's alerts", func() string {
			firing, err := firingAlerts(promURL)
			if err != nil {
				return err.Error()
			}
			for _, a := range firing {
				u := a.Annotations["runbook_url"]
				if !pinned.MatchString(u) || strings.Contains(u, "/blob/main/") {
					return fmt.Sprintf("%s: runbook_url %q is not pinned to a tag or commit", a.Labels["alertname"], u)
				}
				a.Annotations["runbook_url"] = pinned.ReplaceAllString(u, "/blob/main/runbooks/")
			}
			return strings.Join(alertDiff(firing, want, decided), "\n")
		})
		removeAndExpectBaseline(t, nil, objs, settle)
	})
}
