package server

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestWebConfigCopyNamesTheSameFiles: the private copy lives elsewhere, so
// the files the configuration names relative to its own directory are
// made absolute; the rest is kept as written.
func TestWebConfigCopyNamesTheSameFiles(t *testing.T) {
	in := `tls_server_config:
  cert_file: tls/tls.crt
  key_file: /etc/abs/tls.key
  client_ca_file: ca.crt
  min_version: TLS12
basic_auth_users:
  alice: $2y$10$abc
rate_limit:
  burst: 10
  interval: 1s
`
	out, err := absolutePaths([]byte(in), "/etc/ocl-exporter/web")
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"tls_server_config": map[string]any{
			"cert_file": "/etc/ocl-exporter/web/tls/tls.crt", "key_file": "/etc/abs/tls.key",
			"client_ca_file": "/etc/ocl-exporter/web/ca.crt", "min_version": "TLS12",
		},
		"basic_auth_users": map[string]any{"alice": "$2y$10$abc"},
		"rate_limit":       map[string]any{"burst": float64(10), "interval": "1s"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}
