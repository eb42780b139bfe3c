//go:build e2e

package e2e

// The exporter run as the bundle's Deployment runs it: the files its pod
// would mount, its arguments and its web configuration.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ocl-exporter/ocl_exporter/test/cluster"
)

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

// bundleExporter is the exporter run as deploy/'s Deployment runs it.
type bundleExporter struct {
	// addr is its --web.listen-address, which client (the service CA's,
	// for the Service's name) speaks to; portForward its
	// --web.port-forward-address, if the Deployment sets one. Both are
	// free loopback addresses of this machine, in place of the pod's ports.
	addr, portForward string
	client            *http.Client
}

// startBundleExporter runs the exporter as deploy/'s Deployment does (see
// runPod), with the serving certificate the service CA would write into
// the Secret the Service's annotation names, for <service>.<namespace>.svc.
// It listens on loopback; the Service's endpoints point there (no kubelet
// runs).
func startBundleExporter(t *testing.T, dir string, serviceCA *cluster.CA) bundleExporter {
	t.Helper()
	client := tlsClient(serviceCA, servingCertificate(t, serviceCA))
	e, proc := runPod(t, dir, "ocl_exporter-bundle", bundleObject(t, "Deployment", cluster.ExporterNamespace, "ocl-exporter"))
	e.client = client
	if err := cluster.WaitHTTP(proc, client, "https://"+e.addr+"/readyz", "", time.Minute); err != nil {
		t.Fatalf("the exporter as deploy/ runs it: %v", err)
	}
	return e
}

// servingCertificate writes what the service CA would for the bundle's
// Service: a certificate for <service>.<namespace>.svc in the Secret the
// Service's annotation names, deleted when the test ends. It returns that
// name.
func servingCertificate(t *testing.T, serviceCA *cluster.CA) (serverName string) {
	t.Helper()
	ns := cluster.ExporterNamespace
	svc := bundleObject(t, "Service", ns, "ocl-exporter")
	secretName := svc.GetAnnotations()["service.beta.openshift.io/serving-cert-secret-name"]
	if secretName == "" {
		t.Fatal("the Service has no service.beta.openshift.io/serving-cert-secret-name: no serving certificate")
	}
	serverName = svc.GetName() + "." + ns + ".svc"
	crt, key, err := serviceCA.Issue([]string{serverName, serverName + ".cluster.local"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tlsSecret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: ns},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{"tls.crt": crt, "tls.key": key},
	}
	if _, err := env.kube.CS.CoreV1().Secrets(ns).Create(t.Context(), tlsSecret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.kube.CS.CoreV1().Secrets(ns).Delete(context.Background(), secretName, metav1.DeleteOptions{})
	})
	return serverName
}

// tlsClient checks the exporter's serving certificate against the service
// CA, for serverName, as Prometheus does.
func tlsClient(serviceCA *cluster.CA, serverName string) *http.Client {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(serviceCA.PEM)
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: serverName}}}
}

// runPod starts the exporter as a pod of the Deployment dep runs it: its
// arguments and its web configuration, from the files its volumes would
// mount (written under dir/<name>-pod), on a free loopback port instead
// of each container port. It stops with the test; it is not ready yet.
func runPod(t *testing.T, dir, name string, dep *unstructured.Unstructured) (e bundleExporter, proc *cluster.Proc) {
	t.Helper()
	ctx := t.Context()
	ns := dep.GetNamespace()
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
	p := pod{root: filepath.Join(dir, name+"-pod")}
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
	ports, err := cluster.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	e.addr = "127.0.0.1:" + ports[0]
	args := []string{"--kubeconfig", env.cluster.ExporterKubeconfig, "--web.listen-address=" + e.addr}
	for _, a := range c.Args {
		switch {
		case strings.HasPrefix(a, "--web.listen-address"):
		case strings.HasPrefix(a, "--web.port-forward-address="):
			e.portForward = "127.0.0.1:" + ports[1]
			args = append(args, "--web.port-forward-address="+e.portForward)
		default:
			args = append(args, p.relocate(a, mounts...))
		}
	}
	proc, err = cluster.StartProc(dir, name, env.exporterBin, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proc.Stop)
	return e, proc
}

// runtimeConvert decodes an unstructured value into a typed one.
func runtimeConvert(in any, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
