package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ocl-exporter/ocl_exporter/internal/wait"
	"github.com/ocl-exporter/ocl_exporter/test/cluster"
)

// tlsFiles is a web config directory: a CA, a serving certificate for
// 127.0.0.1 and a client certificate it signed, and clients that trust it.
type tlsFiles struct {
	ca          *cluster.CA
	dir, config string
	// fresh clients open a connection per request; keepAlive reuses one.
	plain, https, httpsWithCert, keepAlive *http.Client
}

func newTLSFiles(t *testing.T) *tlsFiles {
	t.Helper()
	ca, err := cluster.NewCA("web-config-test-ca")
	if err != nil {
		t.Fatal(err)
	}
	crt, key, err := ca.Issue(nil, []net.IP{net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	clientCrt, clientKey, err := ca.IssueClient("prometheus")
	if err != nil {
		t.Fatal(err)
	}
	f := &tlsFiles{ca: ca, dir: t.TempDir()}
	f.config = filepath.Join(f.dir, "web.yml")
	for name, b := range map[string][]byte{"ca.crt": ca.PEM, "tls.crt": crt, "tls.key": key} {
		if err := os.WriteFile(filepath.Join(f.dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.PEM)
	cert, err := tls.X509KeyPair(clientCrt, clientKey)
	if err != nil {
		t.Fatal(err)
	}
	client := func(keepAlive bool, tc *tls.Config) *http.Client {
		return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: !keepAlive, TLSClientConfig: tc}}
	}
	f.plain = client(false, nil)
	f.https = client(false, &tls.Config{RootCAs: pool})
	f.httpsWithCert = client(false, &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}})
	f.keepAlive = client(true, &tls.Config{RootCAs: pool})
	return f
}

// The web configs of the tests; files are named relative to the config.
const (
	plainConfig      = "http_server_config:\n  headers:\n    X-Frame-Options: deny\n"
	tlsConfig        = "tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n"
	clientAuthConfig = tlsConfig + "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n"
)

// reload writes the web config and sends SIGHUP.
func (f *tlsFiles) reload(t *testing.T, config string) {
	t.Helper()
	f.write(t, config)
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
}

func (f *tlsFiles) write(t *testing.T, config string) {
	t.Helper()
	if err := os.WriteFile(f.config, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
}

// ok GETs /healthz; nil when it answered 200.
func ok(c *http.Client, url string) error {
	resp, err := c.Get(url + "/healthz")
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body) // read whole: the connection is kept alive
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return &statusError{resp.Status}
	}
	return nil
}

type statusError struct{ status string }

func (e *statusError) Error() string { return e.status }

// reloadWait bounds the wait for a reload, which happens some time after
// SIGHUP.
const reloadWait = 30 * time.Second

// TestSIGHUPAddsTLS: a reload that adds TLS to the web config serves TLS,
// on the same port, in the same process; plain http is refused. Before,
// the listener went on serving plain http.
func TestSIGHUPAddsTLS(t *testing.T) {
	f := newTLSFiles(t)
	f.write(t, plainConfig)
	base := startExporter(t, "--example", "--web.config.file="+f.config)
	f.reload(t, tlsConfig)
	secure := "https" + base[len("http"):]
	wait.For(t, reloadWait, "an https request answered after SIGHUP", func() error { return ok(f.https, secure) })
	if err := ok(f.plain, base); err == nil {
		t.Error("plain http is still answered once TLS is served")
	}
}

// TestSIGHUPRemovesTLS: a reload that removes TLS serves plain http; TLS
// handshakes fail. Before, every request failed: the listener spoke TLS
// and its configuration said there was none.
func TestSIGHUPRemovesTLS(t *testing.T) {
	f := newTLSFiles(t)
	f.write(t, tlsConfig)
	secure := startExporterOver(t, "https", f.https, "--example", "--web.config.file="+f.config)
	f.reload(t, plainConfig)
	base := "http" + secure[len("https"):]
	wait.For(t, reloadWait, "a plain http request answered after SIGHUP", func() error { return ok(f.plain, base) })
	if err := ok(f.https, secure); err == nil {
		t.Error("TLS is still served once the web config has none")
	}
}

// TestSIGHUPRequiresClientCertificates: a reload that requires client
// certificates applies to every connection, kept-alive ones included: a
// client without a certificate that had a connection open before is not
// served on it after. Before, new handshakes asked for a certificate but
// an open connection went on being served without one.
func TestSIGHUPRequiresClientCertificates(t *testing.T) {
	f := newTLSFiles(t)
	f.write(t, tlsConfig)
	secure := startExporterOver(t, "https", f.https, "--example", "--web.config.file="+f.config)
	if err := ok(f.keepAlive, secure); err != nil {
		t.Fatal(err)
	}
	f.reload(t, clientAuthConfig)
	wait.For(t, reloadWait, "the kept-alive client without a certificate refused after SIGHUP", func() error {
		if ok(f.keepAlive, secure) == nil {
			return errors.New("still answered")
		}
		return nil
	})
	if err := ok(f.httpsWithCert, secure); err != nil {
		t.Errorf("a client with a certificate the CA signed: %v", err)
	}
	if err := ok(f.https, secure); err == nil {
		t.Error("a new connection without a client certificate is served")
	}
}
