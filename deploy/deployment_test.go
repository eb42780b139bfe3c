package deploy_test

// The Deployment and the scrape path through it: ServiceMonitor, Service,
// flags, web config and serving certificate.

import (
	"net"
	"path"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/exporter-toolkit/web"
	"go.yaml.in/yaml/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

func container(t *testing.T, d *appsv1.Deployment) *corev1.Container {
	t.Helper()
	if n := len(d.Spec.Template.Spec.Containers); n != 1 {
		t.Fatalf("Deployment has %d containers, want 1", n)
	}
	return &d.Spec.Template.Spec.Containers[0]
}

// flags reads the container's --name=value arguments (and bare --name as
// "true").
func flags(t *testing.T, c *corev1.Container) map[string]string {
	t.Helper()
	f := map[string]string{}
	for _, a := range c.Args {
		name, value, ok := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !strings.HasPrefix(a, "--") {
			t.Fatalf("argument %q: write flags as --name=value", a)
		}
		if !ok {
			value = "true"
		}
		f[name] = value
	}
	return f
}

func telemetryPath(t *testing.T, d *appsv1.Deployment) string {
	if p := flags(t, container(t, d))["web.telemetry-path"]; p != "" {
		return p
	}
	return "/metrics"
}

// mountOf finds the volume mounted at the directory holding file.
func mountOf(t *testing.T, d *appsv1.Deployment, file string) *corev1.Volume {
	t.Helper()
	c := container(t, d)
	for _, m := range c.VolumeMounts {
		if path.Dir(file) == path.Clean(m.MountPath) {
			for i, v := range d.Spec.Template.Spec.Volumes {
				if v.Name == m.Name {
					return &d.Spec.Template.Spec.Volumes[i]
				}
			}
		}
	}
	t.Fatalf("no volume is mounted at %s", path.Dir(file))
	return nil
}

func TestDeploymentIsHardened(t *testing.T) {
	d := build(t, ".").deployments[0]
	pod := d.Spec.Template.Spec
	c := container(t, d)
	if pod.ServiceAccountName != exporterSA || d.Namespace != namespace {
		t.Errorf("Deployment %s/%s runs as %q", d.Namespace, d.Name, pod.ServiceAccountName)
	}
	psc, sc := pod.SecurityContext, c.SecurityContext
	if psc == nil || sc == nil {
		t.Fatal("pod and container need a securityContext")
	}
	if psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Error("runAsNonRoot must be true")
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Error("readOnlyRootFilesystem must be true")
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Error("allowPrivilegeEscalation must be false")
	}
	if sc.Privileged != nil && *sc.Privileged {
		t.Error("privileged")
	}
	if sc.Capabilities == nil || !reflect.DeepEqual(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) != 0 {
		t.Errorf("capabilities %+v, want drop [ALL] and nothing added", sc.Capabilities)
	}
	for _, s := range []*corev1.SeccompProfile{psc.SeccompProfile, sc.SeccompProfile} {
		if s == nil || s.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("seccompProfile %+v, want RuntimeDefault", s)
		}
	}
	if pod.HostNetwork || pod.HostPID || pod.HostIPC {
		t.Error("no host namespaces")
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := c.Resources.Requests[r]; !ok || q.IsZero() {
			t.Errorf("no %s request", r)
		}
	}
	limit, ok := c.Resources.Limits[corev1.ResourceMemory]
	if !ok || limit.Cmp(c.Resources.Requests[corev1.ResourceMemory]) < 0 {
		t.Errorf("memory limit %v must be set and at least the request", limit)
	}
	var gomemlimit *corev1.EnvVar
	for i, e := range c.Env {
		if e.Name == "GOMEMLIMIT" {
			gomemlimit = &c.Env[i]
		}
	}
	if gomemlimit == nil || gomemlimit.ValueFrom == nil || gomemlimit.ValueFrom.ResourceFieldRef == nil {
		t.Fatal("GOMEMLIMIT must come from the memory limit through the downward API")
	}
	ref := gomemlimit.ValueFrom.ResourceFieldRef
	// The divisor must be 1: GOMEMLIMIT reads a bare number as bytes.
	if ref.Resource != "limits.memory" || (ref.ContainerName != "" && ref.ContainerName != c.Name) || (!ref.Divisor.IsZero() && ref.Divisor.Value() != 1) {
		t.Errorf("GOMEMLIMIT from %+v, want limits.memory of %s in bytes", ref, c.Name)
	}
	for probe, want := range map[*corev1.Probe]string{c.LivenessProbe: "/healthz", c.ReadinessProbe: "/readyz"} {
		if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Path != want {
			t.Errorf("want an HTTP probe on %s, got %+v", want, probe)
			continue
		}
		if probe.HTTPGet.Port.String() != c.Ports[0].Name || probe.HTTPGet.Scheme != corev1.URISchemeHTTPS {
			t.Errorf("probe %s on %s %s, want HTTPS on %s", want, probe.HTTPGet.Scheme, probe.HTTPGet.Port.String(), c.Ports[0].Name)
		}
	}
}

// TestScrapeConfigurationFitsTogether follows a scrape: ServiceMonitor ->
// Service -> container port and flags -> web config -> serving certificate.
func TestScrapeConfigurationFitsTogether(t *testing.T) {
	b := build(t, ".")
	d, svc, sm := b.deployments[0], b.services[0], b.serviceMonitors[0]
	c := container(t, d)
	f := flags(t, c)
	if f["auth.kubernetes"] != "true" {
		t.Error("the Deployment must run with --auth.kubernetes")
	}
	if len(c.Ports) != 1 {
		t.Fatalf("want one container port, got %+v", c.Ports)
	}
	port := c.Ports[0]
	_, listenPort, err := net.SplitHostPort(f["web.listen-address"])
	if err != nil || listenPort != strconv.Itoa(int(port.ContainerPort)) {
		t.Errorf("--web.listen-address=%q does not listen on containerPort %d", f["web.listen-address"], port.ContainerPort)
	}

	// Service -> Pod
	for k, v := range svc.Spec.Selector {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("Service selector %s=%s does not select the pod (labels %v)", k, v, d.Spec.Template.Labels)
		}
	}
	if svc.Namespace != d.Namespace || len(svc.Spec.Ports) != 1 {
		t.Fatalf("Service %s/%s ports %+v", svc.Namespace, svc.Name, svc.Spec.Ports)
	}
	sp := svc.Spec.Ports[0]
	if sp.Name != "https-metrics" || sp.TargetPort.String() != port.Name {
		t.Errorf("Service port %s -> %s, want https-metrics -> the container port %s", sp.Name, sp.TargetPort.String(), port.Name)
	}

	// ServiceMonitor -> Service
	if sm.Namespace != svc.Namespace || len(sm.Spec.NamespaceSelector.MatchNames) != 0 || sm.Spec.NamespaceSelector.Any {
		t.Errorf("ServiceMonitor %s should select Services in its own namespace %s", sm.Name, svc.Namespace)
	}
	for k, v := range sm.Spec.Selector.MatchLabels {
		if svc.Labels[k] != v {
			t.Errorf("ServiceMonitor selector %s=%s does not select the Service (labels %v)", k, v, svc.Labels)
		}
	}
	if len(sm.Spec.Endpoints) != 1 {
		t.Fatalf("want one ServiceMonitor endpoint, got %d", len(sm.Spec.Endpoints))
	}
	ep := sm.Spec.Endpoints[0]
	if ep.Port != sp.Name || ep.Scheme != "https" || ep.Path != telemetryPath(t, d) {
		t.Errorf("ServiceMonitor scrapes %s://:%s%s, want https://:%s%s", ep.Scheme, ep.Port, ep.Path, sp.Name, telemetryPath(t, d))
	}
	if ep.TLSConfig == nil || ep.TLSConfig.ServerName == nil || *ep.TLSConfig.ServerName != svc.Name+"."+svc.Namespace+".svc" {
		t.Errorf("ServiceMonitor tlsConfig serverName must be %s.%s.svc, the name in the service CA's certificate", svc.Name, svc.Namespace)
	}
	if ep.TLSConfig != nil && ep.TLSConfig.InsecureSkipVerify != nil && *ep.TLSConfig.InsecureSkipVerify {
		t.Error("insecureSkipVerify")
	}
	//nolint:staticcheck // SA1019: the platform Prometheus reads its own token file; OpenShift's components scrape this way.
	if ep.BearerTokenFile == "" || ep.TLSConfig == nil || ep.TLSConfig.CAFile != "/etc/prometheus/configmaps/serving-certs-ca-bundle/service-ca.crt" {
		t.Errorf("the platform Prometheus authenticates with its token file and checks the service CA bundle: %+v", ep)
	}

	// Flags -> web config -> serving certificate Secret
	webConfigFile := f["web.config.file"]
	vol := mountOf(t, d, webConfigFile)
	if vol.ConfigMap == nil {
		t.Fatalf("%s is not on a ConfigMap volume", webConfigFile)
	}
	cm, ok := b.configMaps[d.Namespace+"/"+vol.ConfigMap.Name]
	if !ok {
		t.Fatalf("ConfigMap %s (web config) is not in the bundle", vol.ConfigMap.Name)
	}
	raw, ok := cm.Data[path.Base(webConfigFile)]
	if !ok {
		t.Fatalf("ConfigMap %s has no key %s", cm.Name, path.Base(webConfigFile))
	}
	var wc web.Config
	if err := yaml.UnmarshalStrict([]byte(raw), &wc); err != nil {
		t.Fatalf("web config: %v", err)
	}
	secret := svc.Annotations["service.beta.openshift.io/serving-cert-secret-name"]
	if secret == "" {
		t.Fatal("the Service needs the service.beta.openshift.io/serving-cert-secret-name annotation")
	}
	for file, key := range map[string]string{wc.TLSConfig.TLSCertPath: "tls.crt", wc.TLSConfig.TLSKeyPath: "tls.key"} {
		v := mountOf(t, d, file)
		if v.Secret == nil || v.Secret.SecretName != secret || path.Base(file) != key {
			t.Errorf("web config reads %s, want %s of the serving-cert Secret %s", file, key, secret)
		}
	}
}

func TestNamespaceIsScrapedByPlatformMonitoring(t *testing.T) {
	ns := build(t, ".").namespaces[0]
	if ns.Name != namespace || ns.Labels["openshift.io/cluster-monitoring"] != "true" {
		t.Errorf("Namespace %s labels %v", ns.Name, ns.Labels)
	}
}
