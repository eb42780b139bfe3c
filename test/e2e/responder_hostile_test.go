//go:build e2e

package e2e

// What a person bound to ocl-exporter-responder tries to get more than
// the report with: a Secret's data, a token, a command in the exporter's
// pod. Each attempt must fail, or show nothing of p.secrets.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ocl-exporter/ocl_exporter/test/cluster"
)

func tryEverythingElse(t *testing.T, p *onCallPod) {
	t.Run("the API refuses", func(t *testing.T) { apiRefuses(t, p) })
	t.Run("the forwarded ports show no secret", func(t *testing.T) { forwardedPortsShowNoSecret(t, p) })
	t.Run("the binary shows no secret", func(t *testing.T) { binaryShowsNoSecret(t, p) })
}

// apiRefuses: every way through the API to a Secret's data, a token of
// the exporter's service account, or a command as it, is forbidden to the
// responder.
func apiRefuses(t *testing.T, p *onCallPod) {
	ctx := t.Context()
	cfg, err := clientcmd.BuildConfigFromFlags("", env.cluster.ResponderKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	ns, mco, sa := p.path.Namespace, "openshift-machine-config-operator", "ocl-exporter"
	core := cs.CoreV1().RESTClient()
	subresource := func(method, namespace, name, sub string) error {
		return core.Verb(method).Namespace(namespace).Resource("pods").Name(name).SubResource(sub).
			Param("command", "cat").Param("command", "/var/run/secrets/kubernetes.io/serviceaccount/token").
			Param("stdout", "true").Do(ctx).Error()
	}
	impersonating := rest.CopyConfig(cfg)
	impersonating.Impersonate.UserName = cluster.ExporterUser
	asExporter := kubernetes.NewForConfigOrDie(impersonating)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "e2e-as-the-exporter", Namespace: ns},
		Spec: corev1.PodSpec{ServiceAccountName: sa, Containers: []corev1.Container{{Name: "c", Image: "registry.example.com/shell"}}}}
	for _, a := range []struct {
		what string
		do   func() error
	}{
		{"list the MCO namespace's Secrets", func() error { _, err := cs.CoreV1().Secrets(mco).List(ctx, metav1.ListOptions{}); return err }},
		{"get one", func() error {
			_, err := cs.CoreV1().Secrets(mco).Get(ctx, "global-pull-secret-copy", metav1.GetOptions{})
			return err
		}},
		{"watch them", func() error { _, err := cs.CoreV1().Secrets(mco).Watch(ctx, metav1.ListOptions{}); return err }},
		{"list the exporter's namespace's Secrets", func() error { _, err := cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{}); return err }},
		{"get its serving key", func() error {
			_, err := cs.CoreV1().Secrets(ns).Get(ctx, "ocl-exporter-tls", metav1.GetOptions{})
			return err
		}},
		{"list every Secret", func() error { _, err := cs.CoreV1().Secrets("").List(ctx, metav1.ListOptions{}); return err }},
		{"a token of the exporter's service account", func() error {
			_, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
			return err
		}},
		{"exec in the exporter's pod", func() error { return subresource("POST", ns, p.pod, "exec") }},
		{"exec in it by WebSocket (GET)", func() error { return subresource("GET", ns, p.pod, "exec") }},
		{"attach to it", func() error { return subresource("POST", ns, p.pod, "attach") }},
		{"attach to it by WebSocket (GET)", func() error { return subresource("GET", ns, p.pod, "attach") }},
		{"an ephemeral container in it", func() error {
			_, err := cs.CoreV1().Pods(ns).Patch(ctx, p.pod, types.StrategicMergePatchType,
				[]byte(`{"spec":{"ephemeralContainers":[{"name":"debug","image":"registry.example.com/shell"}]}}`), metav1.PatchOptions{}, "ephemeralcontainers")
			return err
		}},
		{"its log", func() error { return cs.CoreV1().Pods(ns).GetLogs(p.pod, &corev1.PodLogOptions{}).Do(ctx).Error() }},
		{"a pod as its service account", func() error { _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); return err }},
		{"another command for the Deployment", func() error {
			_, err := cs.AppsV1().Deployments(ns).Patch(ctx, p.path.Deployment, types.JSONPatchType,
				[]byte(`[{"op":"add","path":"/spec/template/spec/containers/0/args/-","value":"--web.enable-pprof"}]`), metav1.PatchOptions{})
			return err
		}},
		{"delete its pod", func() error { return cs.CoreV1().Pods(ns).Delete(ctx, p.pod, metav1.DeleteOptions{}) }},
		{"a RoleBinding to more", func() error {
			_, err := cs.RbacV1().RoleBindings(ns).Create(ctx, bindingTo("admin", cluster.ResponderUser, ns), metav1.CreateOptions{})
			return err
		}},
		{"a port-forward into the MCO namespace", func() error {
			return core.Post().Namespace(mco).Resource("pods").Name("machine-os-builder-0").SubResource("portforward").Do(ctx).Error()
		}},
		{"the service proxy to the exporter", func() error {
			return core.Get().Namespace(ns).Resource("services").Name("https:ocl-exporter:29100").SubResource("proxy").Suffix("status").Do(ctx).Error()
		}},
		{"impersonating the exporter's service account", func() error {
			_, err := asExporter.CoreV1().Secrets(mco).List(ctx, metav1.ListOptions{})
			return err
		}},
	} {
		if err := a.do(); !apierrors.IsForbidden(err) {
			t.Errorf("as %s, %s: %v, want forbidden", cluster.ResponderUser, a.what, err)
		}
	}
}

// forwardedPortsShowNoSecret: through the responder's own port-forward,
// every path and method on both of the pod's ports, without a token and
// with the responder's, answers nothing of p.secrets; the port-forward
// address serves /status alone, and the TLS port wants a role the
// responder does not have.
func forwardedPortsShowNoSecret(t *testing.T, p *onCallPod) {
	local, err := cluster.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	metrics := metricsPort(t)
	fwd := p.shell(ctx, env.cluster.ResponderKubeconfig, fmt.Sprintf("exec oc -n %s port-forward deploy/%s %s:%s %s:%s",
		p.path.Namespace, p.path.Deployment, local[0], p.path.Port, local[1], metrics))
	var fwdOut cluster.SyncBuffer
	fwd.Stdout, fwd.Stderr = &fwdOut, &fwdOut
	if err := fwd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = fwd.Wait() }()
	waitListening(t, "127.0.0.1:"+local[0])
	token := tokenOf(t, env.cluster.ResponderKubeconfig)
	plain := "http://127.0.0.1:" + local[0]
	secure := "https://127.0.0.1:" + local[1]
	tlsClient := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: p.exporter.client.Transport.(*http.Transport).TLSClientConfig.Clone()}}
	paths := []string{"/status", "/status?pool=layered", "/status?pool=../../secrets", "/status?pool=global-pull-secret-copy",
		"/metrics", "/", "/healthz", "/readyz", "/debug/pprof/", "/debug/pprof/goroutine?debug=2", "/status/../metrics",
		"//status", "/api/v1/namespaces/openshift-machine-config-operator/secrets", "/var/run/secrets/kubernetes.io/serviceaccount/token"}
	for _, accept := range []string{"", "text/html", "application/json"} {
		for _, path := range paths {
			for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete} {
				if got, want := p.probe(t, http.DefaultClient, method, plain+path, accept, ""), portForwardAnswer(method, path); got != want {
					t.Errorf("%s %s on the port-forward address: %d, want %d", method, path, got, want)
				}
				if method != http.MethodGet {
					continue
				}
				for _, bearer := range []string{"", token} {
					if got, want := p.probe(t, tlsClient, method, secure+path, accept, bearer), tlsAnswer(path, bearer); got != want {
						t.Errorf("GET %s on the TLS port as %s (token %v): %d, want %d", path, cluster.ResponderUser, bearer != "", got, want)
					}
				}
			}
		}
	}
	if !strings.Contains(fwdOut.String(), "Forwarding from 127.0.0.1:"+local[0]) {
		t.Errorf("the port-forward did not run as %s:\n%s", cluster.ResponderUser, fwdOut.String())
	}
}

// portForwardAnswer is the status the port-forward address answers with:
// /status alone, to GET and HEAD (the client follows the mux's redirect
// of an unclean path to the clean one).
func portForwardAnswer(method, target string) int {
	switch p, _, _ := strings.Cut(target, "?"); {
	case path.Clean(p) != "/status":
		if method != http.MethodGet {
			return http.StatusMethodNotAllowed
		}
		return http.StatusNotFound
	case method != http.MethodGet:
		return http.StatusMethodNotAllowed
	}
	return http.StatusOK
}

// tlsAnswer is the status the TLS port answers a GET of target with, to
// the responder: the probes are public, everything else needs a token
// (401) allowed to get the path, which the responder's is not (403), but
// under /api/, which every authenticated user may get (the API server's
// discovery roles), where nothing is served (404).
func tlsAnswer(target, bearer string) int {
	switch {
	case target == "/healthz" || target == "/readyz":
		return http.StatusOK
	case bearer == "":
		return http.StatusUnauthorized
	case strings.HasPrefix(target, "/api/"):
		return http.StatusNotFound
	}
	return http.StatusForbidden
}

// probe sends one request and fails the test if the answer holds a
// secret; it returns the status code (0 when the request failed).
func (p *onCallPod) probe(t *testing.T, c *http.Client, method, url, accept, bearer string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if leaked := p.leaked([]byte(fmt.Sprint(resp.Header) + string(b))); len(leaked) > 0 {
		t.Errorf("%s %s (Accept %q, token %v) answered %v", method, url, accept, bearer != "", leaked)
	}
	return resp.StatusCode
}

// binaryShowsNoSecret runs every command of the binary as the responder,
// with the flags that choose what it reads and writes: nothing it prints
// holds a secret, and review sends no token but the responder's own.
func binaryShowsNoSecret(t *testing.T, p *onCallPod) {
	kubeconfig := "--kubeconfig=" + env.cluster.ResponderKubeconfig
	var runs [][]string
	for _, ns := range []string{"openshift-machine-config-operator", p.path.Namespace, "kube-system"} {
		for _, o := range []string{"text", "json", "markdown"} {
			runs = append(runs, []string{"diagnose", kubeconfig, "--mco.namespace=" + ns, "-o", o, "--sync-timeout=20s"})
		}
		runs = append(runs, []string{"diagnose", kubeconfig, "--mco.namespace=" + ns, "--pool=layered"},
			[]string{"capture", kubeconfig, "--mco.namespace=" + ns, "--output=-", "--sync-timeout=20s"})
	}
	for _, args := range runs {
		stdout, stderr, code := runAs(t, args...)
		if leaked := p.leaked([]byte(stdout + stderr)); len(leaked) > 0 {
			t.Errorf("%v as %s printed %v", args, cluster.ResponderUser, leaked)
		}
		// Secrets are forbidden, and so is all but the pods of the
		// exporter's namespace: nothing to diagnose or capture elsewhere.
		if !strings.Contains(stdout+stderr, "forbidden") || (code != 2 && !slices.Contains(args, "--mco.namespace="+p.path.Namespace)) {
			t.Errorf("%v as %s: exit %d, want it to name what is forbidden (exit 2 but in %s):\n%s\n%s",
				args, cluster.ResponderUser, code, p.path.Namespace, stdout, stderr)
		}
	}

	// The exporter itself, as the responder.
	addr, err := cluster.FreeAddress()
	if err != nil {
		t.Fatal(err)
	}
	e, err := startExporter(t.TempDir(), env.exporterBin, "ocl_exporter-as-responder", env.cluster.ResponderKubeconfig, addr, "--web.enable-pprof")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/metrics", "/status", "/status?pool=layered", "/debug/pprof/goroutine?debug=2", "/readyz"} {
		for _, accept := range []string{"", "application/json"} {
			if code := p.probe(t, http.DefaultClient, http.MethodGet, "http://"+addr+path, accept, ""); code != http.StatusOK {
				t.Errorf("the exporter as %s: GET %s: %d", cluster.ResponderUser, path, code)
			}
		}
	}
	e.Stop()

	// review sends the token of the kubeconfig to --prometheus: the
	// responder's own.
	var mu sync.Mutex
	sent := map[string]bool{}
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sent[r.Header.Get("Authorization")] = true
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status":"success","data":{"resultType":"matrix","result":[]}}`)
	}))
	defer prom.Close()
	stdout, stderr, _ := runAs(t, "review", kubeconfig, "--prometheus="+prom.URL, "--allow-plaintext-token", "--from=1h", "-o", "json")
	if leaked := p.leaked([]byte(stdout + stderr)); len(leaked) > 0 {
		t.Errorf("review as %s printed %v", cluster.ResponderUser, leaked)
	}
	mu.Lock()
	defer mu.Unlock()
	for auth := range sent {
		if auth != "Bearer "+tokenOf(t, env.cluster.ResponderKubeconfig) {
			t.Errorf("review as %s sent %q to --prometheus, not the responder's own token", cluster.ResponderUser, auth)
		}
	}
	if len(sent) == 0 {
		t.Errorf("review as %s asked --prometheus nothing:\n%s", cluster.ResponderUser, stderr)
	}
}

// tokenOf is the bearer token of a kubeconfig's user.
func tokenOf(t *testing.T, kubeconfig string) string {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil || cfg.BearerToken == "" {
		t.Fatalf("%s: no token: %v", kubeconfig, err)
	}
	return cfg.BearerToken
}

// httpGet GETs url with headers.
func httpGet(t *testing.T, url string, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// bindingTo is a RoleBinding of the ClusterRole role to user in ns.
func bindingTo(role, user, ns string) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-" + role + ":" + user, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
}
