package server

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/ocl-exporter/ocl_exporter/test/cluster"
)

// writeServingCert writes tls.crt and tls.key for 127.0.0.1 into dir and
// returns the CA's PEM.
func writeServingCert(t *testing.T, dir string) []byte {
	t.Helper()
	ca, err := cluster.NewCA("web-config-test-ca")
	if err != nil {
		t.Fatal(err)
	}
	crt, key, err := ca.Issue(nil, []net.IP{net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"tls.crt": crt, "tls.key": key} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return ca.PEM
}

// TestWebConfigCopyNamesTheSameFiles: the private copy lives elsewhere, so
// the files the configuration names relative to its own directory are
// named by copies of them; the rest is kept as written.
func TestWebConfigCopyNamesTheSameFiles(t *testing.T) {
	dir := t.TempDir()
	caPEM := writeServingCert(t, dir)
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte("secret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	in := `tls_server_config:
  cert_file: tls.crt
  key_file: ` + filepath.Join(dir, "tls.key") + `
  client_ca_file: ca.crt
  client_auth_type: RequireAndVerifyClientCert
  min_version: TLS12
basic_auth_users:
  alice: ` + string(hash) + `
rate_limit:
  burst: 10
  interval: 1s
`
	path := filepath.Join(dir, "web.yml")
	if err := os.WriteFile(path, []byte(in), 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := LoadWebConfig(path, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	b, err := os.ReadFile(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	tls := got["tls_server_config"].(map[string]any)
	for key, file := range map[string]string{"cert_file": "tls.crt", "key_file": "tls.key", "client_ca_file": "ca.crt"} {
		copied, err := os.ReadFile(tls[key].(string))
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		original, _ := os.ReadFile(filepath.Join(dir, file))
		if string(copied) != string(original) {
			t.Errorf("%s names %s, which does not hold %s", key, tls[key], file)
		}
		delete(tls, key)
	}
	want := map[string]any{
		"tls_server_config": map[string]any{"client_auth_type": "RequireAndVerifyClientCert", "min_version": "TLS12"},
		"basic_auth_users":  map[string]any{"alice": string(hash)},
		"rate_limit":        map[string]any{"burst": float64(10), "interval": "1s"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

// TestWebConfigRefusesDuplicateKeys: exporter-toolkit refuses a key
// written twice ("already set"); the copy it is handed must not quietly
// keep the last one. Before, basic_auth_users (or tls_server_config)
// written again empty was re-encoded last-key-wins and served /metrics
// without credentials (or plain http).
func TestWebConfigRefusesDuplicateKeys(t *testing.T) {
	for name, c := range map[string]struct{ in, want string }{
		"basic_auth_users": {"basic_auth_users:\n  alice: $2y$10$abc\nbasic_auth_users:\n", "basic_auth_users already set"},
		"tls_server_config": {"tls_server_config:\n  cert_file: /etc/tls.crt\n  key_file: /etc/tls.key\n" +
			"tls_server_config: {}\n", "tls_server_config already set"},
		"cert_file":  {"tls_server_config:\n  cert_file: /etc/a.crt\n  cert_file: /etc/b.crt\n  key_file: /etc/tls.key\n", "cert_file already set"},
		"a user":     {"basic_auth_users:\n  alice: $2y$10$abc\n  alice: $2y$10$def\n", `key "alice" already set`},
		"http2":      {"http_server_config:\n  http2: false\nhttp_server_config:\n  http2: true\n", "http_server_config already set"},
		"rate_limit": {"rate_limit:\n  burst: 1\n  interval: 1s\nrate_limit: {}\n", "rate_limit already set"},
	} {
		path := filepath.Join(t.TempDir(), "web.yml")
		if err := os.WriteFile(path, []byte(c.in), 0o600); err != nil {
			t.Fatal(err)
		}
		w, err := LoadWebConfig(path, 1<<20, nil)
		if err == nil {
			w.Close()
			t.Errorf("%s written twice: loaded, want refused", name)
			continue
		}
		if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s written twice: %v: want the file and %q named", name, err, c.want)
		}
	}
}

// TestRelativeWebConfigNamesFilesBesideIt: a relative --web.config.file
// with a relative cert_file reads the certificate beside the
// configuration, as exporter-toolkit does; before, it was looked for in
// the private copy's directory (/proc/self/fd) and the exporter refused
// to start.
func TestRelativeWebConfigNamesFilesBesideIt(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.Mkdir("web", 0o700); err != nil {
		t.Fatal(err)
	}
	writeServingCert(t, filepath.Join(dir, "web"))
	if err := os.WriteFile(filepath.Join("web", "web.yml"), []byte("tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := LoadWebConfig(filepath.Join("web", "web.yml"), 1<<20, nil)
	if err != nil {
		t.Fatalf("--web.config.file=web/web.yml naming tls.crt beside it: %v", err)
	}
	defer w.Close()
	if !w.tls {
		t.Error("the copy serves no TLS")
	}
}
