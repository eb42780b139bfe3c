package source

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// kubeconfigNaming writes a kubeconfig as `oc login` writes it, for the
// API server at server, whose current context's cluster and user name
// files as fields says ("certificate-authority: PATH", "tokenFile: PATH").
func kubeconfigNaming(t *testing.T, server string, cluster, user []string) string {
	t.Helper()
	indent := func(fields []string) string {
		var b strings.Builder
		for _, f := range fields {
			b.WriteString("    " + f + "\n")
		}
		return b.String()
	}
	text := "apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    server: " + server + "\n" + indent(cluster) +
		"  name: api-example-com:6443\ncontexts:\n- context:\n    cluster: api-example-com:6443\n    namespace: default\n" +
		"    user: alice/api-example-com:6443\n  name: default/api-example-com:6443/alice\n" +
		"current-context: default/api-example-com:6443/alice\nusers:\n- name: alice/api-example-com:6443\n  user:\n" + indent(user)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRESTConfigRefusesCredentialFilesThatAreNotRegular: a kubeconfig's
// certificate-authority, client certificate or key, or tokenFile, that is
// a FIFO or /dev/zero is refused at once, as --kubeconfig=/dev/zero is.
// Before, /dev/zero ran the process out of memory and a FIFO hung it past
// --sync-timeout.
func TestRESTConfigRefusesCredentialFilesThatAreNotRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name          string
		cluster, user []string
	}{
		{"certificate-authority", []string{"certificate-authority: /dev/zero"}, []string{"token: sha256~x"}},
		{"tokenFile", nil, []string{"tokenFile: " + fifo}},
		{"tokenFile", nil, []string{"tokenFile: /dev/zero"}},
		{"client-certificate", nil, []string{"client-certificate: " + fifo, "client-key: /dev/zero"}},
	} {
		path := kubeconfigNaming(t, "https://api.example.com:6443", c.cluster, c.user)
		done := make(chan error, 1)
		go func() {
			cfg, err := RESTConfig(path)
			if err == nil {
				_, err = rest.HTTPClientFor(cfg)
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), c.name) || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("%s %v: %v, want it refused as not a regular file", c.name, append(c.cluster, c.user...), err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s %v: still loading after 30s", c.name, append(c.cluster, c.user...))
		}
	}
}

// TestTokenFileIsSentAndReadWithChecks: the tokenFile's token reaches the
// API server, read through the checked reader, not client-go's.
func TestTokenFileIsSentAndReadWithChecks(t *testing.T) {
	got := make(chan string, 1)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- r.Header.Get("Authorization"):
		default:
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"APIVersions","versions":["v1"]}`))
	}))
	defer srv.Close()
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("sha256~rotated\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// clientcmd sends credentials over TLS only.
	cfg, err := RESTConfig(kubeconfigNaming(t, srv.URL, []string{"insecure-skip-tls-verify: true"}, []string{"tokenFile: " + token}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BearerTokenFile != "" || cfg.BearerToken != "" {
		t.Errorf("client-go still reads the token itself: BearerTokenFile %q, BearerToken set %v", cfg.BearerTokenFile, cfg.BearerToken != "")
	}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Get(srv.URL + "/api")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if auth := <-got; auth != "Bearer sha256~rotated" {
		t.Errorf("Authorization %q, want the file's token", auth)
	}
	if _, err := tokenFile("/dev/zero").Token(); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a token file that is /dev/zero: %v", err)
	}
}
