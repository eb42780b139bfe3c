package server

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/prometheus/exporter-toolkit/web"
	"sigs.k8s.io/yaml"

	"github.com/ocl-exporter/ocl_exporter/regularfile"
)

// WebConfig is the --web.config.file as read at start and on each Reload.
// exporter-toolkit reads its file again on every request and TLS
// handshake: a FIFO swapped in at that path hung every request, and a
// link to /dev/zero crashed the process. It is given instead a private
// copy (privateCopy: on Linux an anonymous in-memory file, since the root
// filesystem is read-only in the Deployment) that changes only when
// Reload has read the file as a regular file of bounded size and
// validated it. The
// certificate, key and CA files it names are still read on each
// handshake, so a renewed certificate is served without a reload.
type WebConfig struct {
	source   string
	maxBytes int64
	private  privateCopy // what exporter-toolkit reads, by Path
	mu       sync.Mutex  // one Reload at a time
}

// LoadWebConfig reads path, refusing anything but a regular file of at
// most maxBytes, and validates it as exporter-toolkit does.
func LoadWebConfig(path string, maxBytes int64) (*WebConfig, error) {
	w := &WebConfig{source: path, maxBytes: maxBytes, private: newPrivateCopy()}
	if err := w.Reload(); err != nil {
		return nil, err
	}
	return w, nil
}

// Path is the file to hand exporter-toolkit (web.FlagConfig.WebConfigFile).
func (w *WebConfig) Path() string { return w.private.path() }

// Reload reads the file again; on any error the previous configuration
// stays in force.
func (w *WebConfig) Reload() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	f, err := regularfile.Open(w.source, w.maxBytes)
	if err != nil {
		return err
	}
	// The size was checked through the descriptor; the limit also stops a
	// file that grows while it is read.
	b, err := io.ReadAll(io.LimitReader(f, w.maxBytes+1))
	_ = f.Close()
	if err != nil {
		return fmt.Errorf("reading %s: %w", w.source, err)
	}
	if int64(len(b)) > w.maxBytes {
		return fmt.Errorf("%s grew past %d bytes while read", w.source, w.maxBytes)
	}
	out, err := absolutePaths(b, filepath.Dir(w.source))
	if err != nil {
		return fmt.Errorf("%s: %w", w.source, err)
	}
	if err := w.private.replace(out, web.Validate); err != nil {
		return fmt.Errorf("%s: %w", w.source, err)
	}
	return nil
}

// Close releases the private copy.
func (w *WebConfig) Close() { w.private.close() }

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

// ReloadOn reloads w whenever sig delivers, logging the outcome, until sig
// is closed. Without a web config it logs that there is nothing to reload.
func ReloadOn(sig <-chan os.Signal, w *WebConfig, logger *slog.Logger) {
	for range sig {
		if w == nil {
			logger.Info("SIGHUP: no --web.config.file to reload; ignored")
			continue
		}
		if err := w.Reload(); err != nil {
			logger.Error("SIGHUP: the web config was not reloaded; the previous one stays in force", "err", err)
			continue
		}
		logger.Info("SIGHUP: reloaded the web config", "file", w.source)
	}
}
