package server

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/prometheus/exporter-toolkit/web"
	yaml2 "go.yaml.in/yaml/v2"
	"sigs.k8s.io/yaml"

	"github.com/ocl-exporter/ocl_exporter/regularfile"
)

// WebConfig is one reading of the --web.config.file, at start or on a
// reload. exporter-toolkit reads its file again on every request and TLS
// handshake: a FIFO swapped in at that path hung every request, and a
// link to /dev/zero crashed the process. It is given instead a private
// copy (privateCopy: on Linux an anonymous in-memory file, since the root
// filesystem is read-only in the Deployment), made only once the file was read as a
// regular file of bounded size and validated. A reload makes a new copy
// and the servers that read the old one are replaced (Serving.Reload), so
// a copy never changes under the servers that read it. The certificate,
// key and CA files it names are still read on each handshake, so a
// renewed certificate is served without a reload.
type WebConfig struct {
	source   string
	maxBytes int64
	private  privateCopy // what exporter-toolkit reads, by Path
	// tls and clientAuth are what the copy configures, for the log.
	tls        bool
	clientAuth string
}

// LoadWebConfig reads path, refusing anything but a regular file of at
// most maxBytes, and validates it as exporter-toolkit does.
func LoadWebConfig(path string, maxBytes int64) (*WebConfig, error) {
	return (&WebConfig{source: path, maxBytes: maxBytes}).Reload()
}

// Path is the file to hand exporter-toolkit (web.FlagConfig.WebConfigFile).
func (w *WebConfig) Path() string { return w.private.path() }

// Reload reads the file again into a new copy; w is left as it was.
func (w *WebConfig) Reload() (*WebConfig, error) {
	f, err := regularfile.Open(w.source, w.maxBytes)
	if err != nil {
		return nil, err
	}
	// The size was checked through the descriptor; the limit also stops a
	// file that grows while it is read.
	b, err := io.ReadAll(io.LimitReader(f, w.maxBytes+1))
	_ = f.Close()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", w.source, err)
	}
	if int64(len(b)) > w.maxBytes {
		return nil, fmt.Errorf("%s grew past %d bytes while read", w.source, w.maxBytes)
	}
	out, err := absolutePaths(b, filepath.Dir(w.source))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", w.source, err)
	}
	next := &WebConfig{source: w.source, maxBytes: w.maxBytes}
	if next.private, err = newPrivateCopy(out); err != nil {
		return nil, fmt.Errorf("a private copy of %s: %w", w.source, err)
	}
	if err := web.Validate(next.Path()); err != nil {
		next.Close()
		return nil, fmt.Errorf("%s: %w", w.source, err)
	}
	// Validate parsed it as exporter-toolkit does; this cannot fail.
	var c web.Config
	_ = yaml2.Unmarshal(out, &c)
	next.tls, next.clientAuth = c.TLSConfig.IsEnabled(), c.TLSConfig.ClientAuth
	return next, nil
}

// Close releases the private copy.
func (w *WebConfig) Close() { w.private.close() }

// logAttrs say what the copy configures: TLS or not, and which client
// certificates TLS asks for (exporter-toolkit's default is none).
func (w *WebConfig) logAttrs() []any {
	if !w.tls {
		return []any{"file", w.source, "tls", false}
	}
	return []any{"file", w.source, "tls", true, "client_auth_type", cmp.Or(w.clientAuth, "NoClientCert")}
}

// tlsFiles are the keys of tls_server_config that name files, which
// exporter-toolkit resolves relative to the configuration's directory.
var tlsFiles = []string{"cert_file", "key_file", "client_ca_file"}

// absolutePaths returns the configuration as JSON (which is YAML) with the
// files it names made absolute from dir, so the copy reads what the
// original names.
func absolutePaths(b []byte, dir string) ([]byte, error) {
	var c map[string]any
	if err := yaml.Unmarshal(b, &c); err != nil {
		return nil, err
	}
	if tls, ok := c["tls_server_config"].(map[string]any); ok {
		for _, k := range tlsFiles {
			if p, ok := tls[k].(string); ok && p != "" && !filepath.IsAbs(p) {
				tls[k] = filepath.Join(dir, p)
			}
		}
	}
	return json.Marshal(c)
}
