//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ocl-exporter/ocl_exporter/deploy"
	"github.com/ocl-exporter/ocl_exporter/diagnose"
	"github.com/ocl-exporter/ocl_exporter/test/cluster"
)

// binaryName is the exporter's name on the image's PATH.
const binaryName = "ocl_exporter"

// bundleDeployment returns the namespace, name and service account of the
// Deployment the on-call path reaches, as deploy/ applied it.
func bundleDeployment(t *testing.T) (namespace, name, serviceAccount string) {
	t.Helper()
	o, err := deploy.BundleOnCall()
	if err != nil {
		t.Fatal(err)
	}
	namespace, name = o.Namespace, o.Deployment
	i := slices.IndexFunc(env.bundle, func(u *unstructured.Unstructured) bool {
		return u.GetKind() == "Deployment" && u.GetNamespace() == namespace && u.GetName() == name
	})
	if i < 0 {
		t.Fatalf("deploy/ applied no Deployment %s/%s", namespace, name)
	}
	serviceAccount, _, _ = unstructured.NestedString(env.bundle[i].Object, "spec", "template", "spec", "serviceAccountName")
	if serviceAccount == "" {
		t.Fatalf("Deployment %s/%s names no serviceAccountName", namespace, name)
	}
	return namespace, name, serviceAccount
}

// serviceAccountToken is what the kubelet mounts into a pod of the
// service account: a token from a TokenRequest.
func serviceAccountToken(t *testing.T, namespace, name string) string {
	t.Helper()
	expiry := int64(3600)
	tr, err := env.kube.CS.CoreV1().ServiceAccounts(namespace).CreateToken(t.Context(), name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest for %s/%s: %v", namespace, name, err)
	}
	return tr.Status.Token
}

// inPod runs the exporter binary as its container runs it in the bundle's
// pod (and as `oc exec` would, which no documented step does: it is the
// service account's power):
// found by name on PATH, as the image's non-root user, on a read-only root
// file system, without HOME or a kubeconfig, with the service account's
// token, CA and namespace where the kubelet mounts them and the API
// server's address in KUBERNETES_SERVICE_HOST and _PORT (client-go's
// in-cluster configuration). A private mount namespace (unshare, as root)
// holds the mounts, so nothing on the machine changes.
func inPod(t *testing.T, token string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	src := t.TempDir()
	for name, b := range map[string][]byte{"token": []byte(token), "ca.crt": env.cluster.CAPEM, "namespace": []byte("ocl-exporter")} {
		if err := os.WriteFile(filepath.Join(src, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	host, port, ok := strings.Cut(strings.TrimPrefix(env.cluster.URL, "https://"), ":")
	if !ok {
		t.Fatalf("API server URL %s has no port", env.cluster.URL)
	}
	const setup = `set -e
mount -t tmpfs -o mode=755 tmpfs /run
mkdir -p /run/secrets/kubernetes.io/serviceaccount /run/image/usr/bin
cp "$0"/token "$0"/ca.crt "$0"/namespace /run/secrets/kubernetes.io/serviceaccount/
cp "$1" /run/image/usr/bin/` + binaryName + `
chmod -R a+rX /run/secrets /run/image
mount --bind / /
mount -o remount,bind,ro /
cd /
shift 1
exec setpriv --reuid 65532 --regid 65532 --clear-groups env -i PATH=/run/image/usr/bin \
	KUBERNETES_SERVICE_HOST="$HOST" KUBERNETES_SERVICE_PORT="$PORT" "$@"`
	cmd := exec.CommandContext(t.Context(), "unshare", append([]string{"--mount", "--propagation", "private", "sh", "-c", setup, src, env.exporterBin, binaryName},
		append(args, "--log.level=warn")...)...)
	cmd.Env = []string{"HOST=" + host, "PORT=" + port, "PATH=" + os.Getenv("PATH")}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("unshare (a private mount namespace needs root): %v\n%s", err, errOut.String())
	}
	return out.String(), errOut.String(), code
}

// TestDiagnoseInThePod: the binary in deploy/'s pod, with client-go's
// in-cluster configuration, runs diagnose with exactly deploy/'s RBAC
// (the Deployment's service account's own token) and reports what the
// exporter's identity reports; capture runs there too, to standard output
// (the root file system is read-only), and reads back as the live
// cluster. A service account without deploy/'s RBAC cannot: the
// permissions, not the setup, make it work.
func TestDiagnoseInThePod(t *testing.T) {
	namespace, _, sa := bundleDeployment(t)
	play(t, scenario("seed004-build-failed"))
	token := serviceAccountToken(t, namespace, sa)
	kubeconfig := "--kubeconfig=" + env.cluster.ExporterKubeconfig

	for _, args := range [][]string{{"diagnose"}, {"diagnose", "--pool", "layered"}} {
		args = append(args, "-o", "json", diagnoseAt)
		got, stderr, code := inPod(t, token, args...)
		want, wantCode := runBinary(t, append(args, kubeconfig)...)
		if code != wantCode || code == 2 {
			t.Errorf("%v in the pod exits %d, as the exporter's kubeconfig %d (2: could not diagnose):\n%s", args, code, wantCode, stderr)
		}
		if d := cmp.Diff(withoutSince(t, want), withoutSince(t, got)); d != "" {
			t.Errorf("%v in the pod differs from the exporter's identity's (-kubeconfig +pod):\n%s", args, d)
		}
		if stderr != "" {
			t.Errorf("%v in the pod warns:\n%s", args, stderr)
		}
		checkAccessPassed(t, got)
	}

	snap, stderr, code := inPod(t, token, "capture", "--output=-")
	if code != 0 {
		t.Fatalf("capture --output=- in the pod exits %d:\n%s", code, stderr)
	}
	file := filepath.Join(t.TempDir(), "capture.yaml")
	if err := os.WriteFile(file, []byte(snap), 0o600); err != nil {
		t.Fatal(err)
	}
	live, _ := runBinary(t, "diagnose", kubeconfig, "-o", "json", diagnoseAt)
	captured, _ := runBinary(t, "diagnose", "--snapshot="+file, "-o", "json", diagnoseAt)
	if d := cmp.Diff(live, captured); d != "" {
		t.Errorf("diagnose of the pod's capture differs from diagnose live (-live +capture):\n%s", d)
	}

	// The control: the same pod with a service account deploy/ grants
	// nothing.
	const other = "ocl-exporter-test-unbound"
	mustCreate(t, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ServiceAccount",
		"metadata": map[string]any{"name": other, "namespace": namespace}}})
	out, _, code := inPod(t, serviceAccountToken(t, namespace, other), "diagnose", "-o", "json", diagnoseAt)
	if code != 2 {
		t.Errorf("diagnose as %s/%s, which deploy/ grants nothing, exits %d, want 2 (could not diagnose):\n%s", namespace, other, code, out)
	}
}

// checkAccessPassed wants diagnose's check that every watched resource
// could be read to have passed in a JSON report.
func checkAccessPassed(t *testing.T, report string) {
	t.Helper()
	var r diagnose.Report
	if err := json.Unmarshal([]byte(report), &r); err != nil {
		t.Fatalf("%v:\n%s", err, report)
	}
	i := slices.IndexFunc(r.Cluster, func(c diagnose.Check) bool { return c.ID == diagnose.CheckExporterAccess })
	if i < 0 || r.Cluster[i].Status != diagnose.Passed {
		t.Errorf("diagnose in the pod: check %s did not pass: %s", diagnose.CheckExporterAccess, report)
	}
}

// TestStatusReaderOpensThePage: the bundle's ClusterRole
// ocl-exporter-status-reader, bound as docs/diagnose.md binds it, lets a
// person's token through --auth.kubernetes to /status and /metrics; the
// platform Prometheus, which the bundle lets scrape, still may not see
// the page.
func TestStatusReaderOpensThePage(t *testing.T) {
	const role = "ocl-exporter-status-reader"
	if _, err := env.kube.CS.RbacV1().ClusterRoles().Get(t.Context(), role, metav1.GetOptions{}); err != nil {
		t.Fatalf("deploy/ applied no ClusterRole %s: %v", role, err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role + ":" + cluster.NobodyUser},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: cluster.NobodyUser}},
	}
	if _, err := env.kube.CS.RbacV1().ClusterRoleBindings().Create(t.Context(), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.kube.CS.RbacV1().ClusterRoleBindings().Delete(t.Context(), binding.Name, metav1.DeleteOptions{})
	})
	e, err := startExporter(env.dir, env.exporterBin, "ocl_exporter-status", env.cluster.ExporterKubeconfig, "",
		"--auth.kubernetes", "--auth.kubernetes.cache-ttl=1s")
	if err != nil {
		t.Fatal(err)
	}
	defer e.Stop()
	get := func(path, token string) int {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, e.url+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, path := range []string{"/status", "/metrics"} {
		// RBAC reaches the API server's authorizer shortly after the
		// binding is created: poll for the grant.
		deadline, code := time.Now().Add(time.Minute), 0
		for code = get(path, env.cluster.NobodyToken); code != http.StatusOK && time.Now().Before(deadline); code = get(path, env.cluster.NobodyToken) {
			time.Sleep(500 * time.Millisecond)
		}
		if code != http.StatusOK {
			t.Errorf("GET %s as %s, bound to %s: %d, want 200\nexporter log:\n%s", path, cluster.NobodyUser, role, code, e.Tail(20))
		}
	}
	if code := get("/status", env.cluster.ScraperToken); code != http.StatusForbidden {
		t.Errorf("GET /status as %s: %d, want 403", cluster.ScraperUser, code)
	}
}
