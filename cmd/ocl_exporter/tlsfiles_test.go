package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ocl-exporter/ocl_exporter/internal/wait"
	"github.com/ocl-exporter/ocl_exporter/test/cluster"
)

// servedSerial is the serial number of the certificate a new TLS
// handshake with the exporter presents, or an error.
func (f *tlsFiles) servedSerial(addr string) (string, error) {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(f.ca.PEM)
	d := &net.Dialer{Timeout: 5 * time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	if err != nil {
		return "", err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.String(), nil
}

// TestTLSFilesAreReadAsRegularFiles: the certificate and key the web
// config names are read again when they change (a renewal is served
// without a reload), but only as regular files of bounded size. Before, a
// cert_file swapped for a FIFO hung every handshake (each holding its
// connection slot), and one swapped for a link to /dev/zero killed the
// process out of memory; now the last good certificate is served.
func TestTLSFilesAreReadAsRegularFiles(t *testing.T) {
	f := newTLSFiles(t)
	f.write(t, tlsConfig)
	var log cluster.SyncBuffer
	secure := startExporterLogging(t, "https", f.https, &log, "--example", "--web.config.file="+f.config)
	addr := secure[len("https://"):]
	first, err := f.servedSerial(addr)
	if err != nil {
		t.Fatal(err)
	}

	crt, key, err := f.ca.Issue(nil, []net.IP{net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	// As the kubelet updates a Secret volume: new files, then the names.
	for name, b := range map[string][]byte{"tls.key": key, "tls.crt": crt} {
		if err := os.WriteFile(filepath.Join(f.dir, name+".new"), b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(f.dir, name+".new"), filepath.Join(f.dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	var renewed string
	wait.For(t, reloadWait, "the renewed certificate served", func() error {
		if renewed, err = f.servedSerial(addr); err == nil && renewed == first {
			return fmt.Errorf("serial %s served, the first one", first)
		}
		return err
	})

	cert := filepath.Join(f.dir, "tls.crt")
	for _, swap := range []struct {
		name, want string
		make       func() error
	}{
		{"a FIFO", "a FIFO, not a regular file", func() error { return syscall.Mkfifo(cert, 0o600) }},
		{"a link to /dev/zero", "a character device, not a regular file", func() error { return os.Symlink("/dev/zero", cert) }},
	} {
		_ = os.Remove(cert)
		if err := swap.make(); err != nil {
			t.Fatal(err)
		}
		refusals := strings.Count(log.String(), refused)
		// Handshakes go on, with the last good certificate, until one
		// made the exporter look at the swapped file, and after.
		tries := 0
		wait.For(t, reloadWait, "cert_file swapped for "+swap.name+": a handshake after the exporter refused it", func() error {
			got, err := f.servedSerial(addr)
			if err != nil {
				t.Fatalf("cert_file swapped for %s: a new handshake: %v", swap.name, err)
			}
			if got != renewed {
				t.Fatalf("cert_file swapped for %s: serial %s served, want the last good one, %s", swap.name, got, renewed)
			}
			if tries > 0 || strings.Count(log.String(), refused) > refusals {
				tries++
			}
			if tries < 2 {
				return fmt.Errorf("%d handshakes since the refusal; the log:\n%s", tries, log.String())
			}
			return nil
		})
		if !strings.Contains(log.String(), swap.want) {
			t.Errorf("cert_file swapped for %s: the log does not say %q:\n%s", swap.name, swap.want, log.String())
		}
	}
}

// refused is what the exporter logs when a TLS file is not read again.
const refused = "the web config's TLS file was not read again"
