package server

import (
	"cmp"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"reflect"

	config_util "github.com/prometheus/common/config"
	"github.com/prometheus/exporter-toolkit/web"
	yaml2 "go.yaml.in/yaml/v2"
	"sigs.k8s.io/yaml"

	"github.com/ocl-exporter/ocl_exporter/regularfile"
)

// WebConfig is one reading of the --web.config.file, at start or on a
// reload. exporter-toolkit reads its file again on every request and TLS
// handshake, and the certificate, key and CA files it names on every
// handshake: a FIFO swapped in at one of those paths hung every
// handshake, and a link to /dev/zero crashed the process. It is given
// instead a private copy (privateCopy: on Linux an anonymous in-memory
// file, since the root filesystem is read-only in the Deployment) that
// names private copies of those files (tlsFile), each made only once the
// file was read as a regular file of bounded size. A reload makes a new
// copy and the servers that read the old one are replaced
// (Serving.Reload), so a copy never changes under the servers that read
// it. The TLS files are read again, with the same checks, when they
// change (refreshTLSFiles, on a new connection): a renewed certificate is
// served without a reload, and one replaced by a FIFO leaves the last
// good one served.
type WebConfig struct {
	source   string // absolute: relative files are resolved from its directory
	maxBytes int64
	logger   *slog.Logger
	private  privateCopy // what exporter-toolkit reads, by Path
	files    []*tlsFile  // what the copy's cert_file, key_file and client_ca_file name
	// tls and clientAuth are what the copy configures, for the log.
	tls        bool
	clientAuth string
}

// LoadWebConfig reads path, refusing anything but a regular file of at
// most maxBytes, and validates it as exporter-toolkit does. The same
// checks and bound apply to the files it names.
func LoadWebConfig(path string, maxBytes int64, logger *slog.Logger) (*WebConfig, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return (&WebConfig{source: abs, maxBytes: maxBytes, logger: logger}).Reload()
}

// Path is the file to hand exporter-toolkit (web.FlagConfig.WebConfigFile).
func (w *WebConfig) Path() string { return w.private.path() }

// Reload reads the file again into a new copy; w is left as it was.
func (w *WebConfig) Reload() (*WebConfig, error) {
	b, err := regularfile.ReadFile(w.source, w.maxBytes)
	if err != nil {
		return nil, err
	}
	// exporter-toolkit parses strictly: a key written twice, or one it
	// does not know, is refused, where the copy's re-encoding below would
	// keep the last one.
	want, err := parseWebConfig(b, filepath.Dir(w.source))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", w.source, err)
	}
	next := &WebConfig{source: w.source, maxBytes: w.maxBytes, logger: w.logger}
	if err := next.copyOf(b); err != nil {
		next.Close()
		return nil, fmt.Errorf("%s: %w", w.source, err)
	}
	if err := web.Validate(next.Path()); err != nil {
		next.Close()
		return nil, fmt.Errorf("%s: %w", w.source, err)
	}
	if err := next.serves(want); err != nil {
		next.Close()
		return nil, fmt.Errorf("%s: %w", w.source, err)
	}
	next.tls, next.clientAuth = want.TLSConfig.IsEnabled(), want.TLSConfig.ClientAuth
	return next, nil
}

// parseWebConfig parses a web config as exporter-toolkit does (strict
// YAML), files resolved from dir; its defaults are left out, the same on
// both sides of serves' comparison.
func parseWebConfig(b []byte, dir string) (*web.Config, error) {
	c := &web.Config{}
	if err := yaml2.UnmarshalStrict(b, c); err != nil {
		return nil, err
	}
	c.TLSConfig.SetDirectory(dir)
	return c, nil
}

// serves checks that the copy configures exactly what the file says, the
// TLS files aside, which it names by their copies.
func (w *WebConfig) serves(want *web.Config) error {
	b, err := regularfile.ReadFile(w.Path(), w.maxBytes*2)
	if err != nil {
		return err
	}
	got, err := parseWebConfig(b, filepath.Dir(w.Path()))
	if err != nil {
		return fmt.Errorf("the private copy: %w", err)
	}
	for _, f := range w.files {
		for _, p := range []*string{&got.TLSConfig.TLSCertPath, &got.TLSConfig.TLSKeyPath, &got.TLSConfig.ClientCAs} {
			if *p == f.copy.path() {
				*p = f.source
			}
		}
	}
	if !reflect.DeepEqual(want, got) {
		return fmt.Errorf("the private copy configures %+v, not what the file says, %+v", got, want)
	}
	return nil
}

// Close releases the private copies.
func (w *WebConfig) Close() {
	w.private.close()
	for _, f := range w.files {
		f.copy.close()
	}
}

// logAttrs say what the copy configures: TLS or not, and which client
// certificates TLS asks for (exporter-toolkit's default is none).
func (w *WebConfig) logAttrs() []any {
	if !w.tls {
		return []any{"file", w.source, "tls", false}
	}
	return []any{"file", w.source, "tls", true, "client_auth_type", cmp.Or(w.clientAuth, "NoClientCert")}
}

// tlsFileKeys are the keys of tls_server_config that name files, which
// exporter-toolkit resolves relative to the configuration's directory.
var tlsFileKeys = []string{"cert_file", "key_file", "client_ca_file"}

// copyOf makes w's private copy of the configuration b, as JSON (which
// is YAML), with each file it names replaced by a private copy of that
// file.
func (w *WebConfig) copyOf(b []byte) error {
	var c map[string]any
	if err := yaml.Unmarshal(b, &c); err != nil {
		return err
	}
	if tls, ok := c["tls_server_config"].(map[string]any); ok {
		for _, k := range tlsFileKeys {
			p, ok := tls[k].(string)
			if !ok || p == "" {
				continue
			}
			f, err := newTLSFile(k, config_util.JoinDir(filepath.Dir(w.source), p), w.maxBytes)
			if err != nil {
				return err
			}
			w.files = append(w.files, f)
			tls[k] = f.copy.path()
		}
	}
	out, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if w.private, err = newPrivateCopy(out); err != nil {
		return fmt.Errorf("a private copy: %w", err)
	}
	return nil
}

// refreshTLSFiles reads again the TLS files that changed since they were
// last read; exporter-toolkit reads their copies on the next handshake.
func (w *WebConfig) refreshTLSFiles() {
	for _, f := range w.files {
		f.refresh(w.logger)
	}
}
