package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// TestPortForwardAddressServesStatusAlone: --web.port-forward-address
// serves /status, as the text diagnose prints, without the credentials the
// web config asks on the listen address, and nothing else: the on-call
// path reads it through oc port-forward, whose RBAC is the only gate.
func TestPortForwardAddressServesStatusAlone(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("secret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(t.TempDir(), "web.yml")
	if err := os.WriteFile(config, []byte("basic_auth_users:\n  prometheus: "+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pf := "http://" + freeAddress(t)
	base := startExporterOver(t, "http", &http.Client{Transport: basicAuth{}}, "--example", "--web.config.file="+config,
		"--web.port-forward-address="+strings.TrimPrefix(pf, "http://"))
	if code, _ := get(t, base+"/status"); code != http.StatusUnauthorized {
		t.Errorf("/status on the listen address without credentials: %d, want 401", code)
	}
	code, body := get(t, pf+"/status?pool=layered")
	if code != http.StatusOK || !strings.Contains(body, "Pool layered: stage 2 MachineOSBuild failed") || strings.Contains(body, "Pool infra") {
		t.Errorf("/status?pool=layered on the port-forward address: %d\n%s", code, body)
	}
	for _, path := range []string{"/metrics", "/", "/healthz", "/debug/pprof/", "/status/x"} {
		if code, _ := get(t, pf+path); code != http.StatusNotFound {
			t.Errorf("%s on the port-forward address: %d, want 404", path, code)
		}
	}
	resp, err := http.Post(pf+"/status", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /status on the port-forward address: %d, want 405", resp.StatusCode)
	}
}

// basicAuth is the scraper's client: it sends the web config's
// credentials.
type basicAuth struct{}

func (basicAuth) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.SetBasicAuth("prometheus", "secret")
	return http.DefaultTransport.RoundTrip(r)
}
