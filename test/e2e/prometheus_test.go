//go:build e2e

package e2e

// The platform Prometheus the operator configures: the exporter's
// endpoints, the generated configuration run, and its HTTP API read.

import (
	"context"
	"encoding/json"
	"fmt"
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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/ocl-exporter/ocl_exporter/test/cluster"
)

// podDomain holds the pods' names in their EndpointSlices. The API server
// refuses loopback IPs in Endpoints and EndpointSlices, and only dotted
// names in FQDN slices, none of which resolves to loopback here; so the
// Prometheus configuration maps the names of this domain to 127.0.0.1
// (runGenerated), as a hosts file entry would. The .invalid domain never
// resolves elsewhere.
const podDomain = "e2e.invalid"

// podFQDN names the exporter's pod in its EndpointSlice.
const podFQDN = "ocl-exporter-0." + podDomain

// publishEndpoints writes what the EndpointSlice controller would for the
// Service with its pod at podFQDN and the exporter's port. No controller
// runs here.
func publishEndpoints(t *testing.T, addr string) {
	t.Helper()
	u := endpointSlice(t, "e2e", podFQDN, addr, nil, true)
	if err := env.kube.Create(t.Context(), u); err != nil {
		t.Fatalf("EndpointSlice for the exporter at %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = env.kube.Remove(context.Background(), u) })
}

// endpointSlice is the EndpointSlice <service>-<suffix> the controller
// writes for one pod of the bundle's Service: the pod at fqdn, with the
// port of addr under the Service's port names, the pod (when given) as
// its target, ready or not.
func endpointSlice(t *testing.T, suffix, fqdn, addr string, pod *corev1.Pod, ready bool) *unstructured.Unstructured {
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
	endpoint := map[string]any{"addresses": []any{fqdn}, "conditions": map[string]any{"ready": ready}}
	if pod != nil {
		endpoint["targetRef"] = map[string]any{"kind": "Pod", "name": pod.Name, "namespace": pod.Namespace, "uid": string(pod.UID)}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
		"metadata": map[string]any{"name": svc.GetName() + "-" + suffix, "namespace": svc.GetNamespace(),
			"labels": map[string]any{"kubernetes.io/service-name": svc.GetName()}},
		"addressType": "FQDN",
		"endpoints":   []any{endpoint},
		"ports":       ports,
	}}
}

// platformPrometheus creates the platform monitoring stack's Prometheus
// resource as cluster-monitoring-operator does (jsonnet/components/
// prometheus.libsonnet): every ServiceMonitor and PrometheusRule of the
// namespaces labelled openshift.io/cluster-monitoring=true, the service CA
// bundle mounted from a ConfigMap. The version is the Prometheus the suite
// runs, and the service discovery reads EndpointSlices (see
// publishEndpoints); the intervals are the test's, 5s and 1s, unless spec
// sets them: its fields replace the resource's.
func platformPrometheus(t *testing.T, serviceCA *cluster.CA, spec map[string]any) {
	t.Helper()
	ctx := t.Context()
	nsSelector := map[string]any{"matchLabels": map[string]any{clusterMonitoringLabel: "true"}}
	prometheus := map[string]any{
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
	}
	maps.Copy(prometheus, spec)
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
			"spec":     prometheus}},
	}
	for _, u := range objs {
		if err := env.kube.Create(ctx, u); err != nil && (u.GetKind() != "Namespace" || !apierrors.IsAlreadyExists(err)) {
			t.Fatalf("%s %s: %v", u.GetKind(), objectName(u), err)
		}
		if u.GetKind() != "Namespace" { // no namespace controller would finalize it
			t.Cleanup(func() { _ = env.kube.Remove(context.Background(), u) })
		}
	}
	t.Cleanup(collectGenerated)
}

// collectGenerated deletes what the operator wrote for the Prometheus (its
// configuration and rule files, its StatefulSet), as the garbage collector
// would once the resource is gone: the next test's operator must not find
// this test's configuration. The operator has stopped by then (started
// later, it stops first).
func collectGenerated() {
	ctx := context.Background()
	for _, gvr := range []schema.GroupVersionResource{
		{Version: "v1", Resource: "secrets"}, {Version: "v1", Resource: "configmaps"},
		{Group: "apps", Version: "v1", Resource: "statefulsets"},
	} {
		ri := env.kube.Dyn.Resource(gvr).Namespace(monitoringNamespace)
		l, err := ri.List(ctx, metav1.ListOptions{})
		if err != nil {
			continue
		}
		for _, o := range l.Items {
			if slices.ContainsFunc(o.GetOwnerReferences(), func(r metav1.OwnerReference) bool { return r.Kind == "Prometheus" && r.Name == prometheusName }) {
				_ = ri.Delete(ctx, o.GetName(), metav1.DeleteOptions{})
			}
		}
	}
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
	return startGenerated(t, dir, g, generatedOptions{}).url
}

// generatedOptions is what a test changes in what startGenerated runs.
type generatedOptions struct {
	// rules copies an operator rule file into the pod's rule directory;
	// unset, with every for: at 0s (rewriteRules).
	rules func(from, to string) error
	// config edits the configuration, last.
	config func(cfg map[string]any)
	// args are flags added to the command line.
	args []string
}

// startGenerated is runGenerated with o's changes; the Prometheus it
// returns may be stopped and started again on the same storage.
func startGenerated(t *testing.T, dir string, g generated, o generatedOptions) *prometheusProc {
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
	if o.rules == nil {
		o.rules = func(from, to string) error { return rewriteRules(from, to, map[string]rule{}) }
	}
	if err := os.MkdirAll(p.path(rulesMount+"prometheus-"+prometheusName+"-rulefiles-0"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range g.rules {
		raw := filepath.Join(dir, "generated-"+name)
		if err := os.WriteFile(raw, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := o.rules(raw, p.path(rulesMount+"prometheus-"+prometheusName+"-rulefiles-0/"+name)); err != nil {
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
				"regex":         `[a-z0-9.-]+\.` + regexp.QuoteMeta(podDomain) + `:(\d+)`,
				"target_label":  "__address__",
				"replacement":   "127.0.0.1:$1",
			})
		}
	}
	if o.config != nil {
		o.config(cfg)
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
	prom := &prometheusProc{dir: dir, url: "http://" + addr, args: append([]string{"--config.file", configFile,
		"--storage.tsdb.path", filepath.Join(dir, "prometheus-generated-data"), "--web.listen-address", addr}, o.args...)}
	t.Cleanup(prom.stop)
	if err := prom.start(); err != nil {
		t.Fatal(err)
	}
	return prom
}

// prometheusProc is the suite's Prometheus 3.5 run with a command line a
// test may stop and start again, on the same storage.
type prometheusProc struct {
	dir, url string
	args     []string
	proc     *cluster.Proc
}

// start runs Prometheus and waits until it is ready.
func (p *prometheusProc) start() error {
	proc, err := cluster.StartProc(p.dir, "prometheus-generated", tools["E2E_OPERATOR_PROMETHEUS"], p.args...)
	if err != nil {
		return err
	}
	p.proc = proc
	return cluster.WaitHTTP(proc, http.DefaultClient, p.url+"/-/ready", "", time.Minute)
}

// stop asks Prometheus to terminate, as the kubelet does, and waits.
func (p *prometheusProc) stop() {
	if p.proc != nil {
		p.proc.Stop()
	}
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
