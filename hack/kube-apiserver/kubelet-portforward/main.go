// Command kubelet-portforward is the kubelet's port-forward endpoint, for
// the e2e suite, which runs no kubelet: served by the kubelet's own code
// (k8s.io/kubelet/pkg/cri/streaming/portforward), it is what the API
// server's pods/portforward proxies to when a test's Node names it as its
// kubelet. It connects each forwarded port of any pod to an address of
// this machine, as CRI-O connects to localhost:PORT in the pod's network
// namespace; a port it was not given is refused, as a closed port is.
//
//	kubelet-portforward -listen 127.0.0.1:10250 -port 29101=127.0.0.1:40123 -port 29100=127.0.0.1:40124
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"flag"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/remotecommand"
	"k8s.io/kubelet/pkg/cri/streaming/portforward"
)

// ports maps a pod's port to the address it reaches here.
type ports map[int32]string

func (p ports) String() string { return fmt.Sprint(map[int32]string(p)) }

func (p ports) Set(s string) error {
	port, addr, ok := strings.Cut(s, "=")
	n, err := strconv.ParseInt(port, 10, 32)
	if !ok || err != nil {
		return fmt.Errorf("%q: want PORT=HOST:PORT", s)
	}
	p[int32(n)] = addr
	return nil
}

// PortForward copies between the stream and the pod's port, as CRI-O's
// PortForwardContainer does.
func (p ports) PortForward(ctx context.Context, pod string, _ types.UID, port int32, stream io.ReadWriteCloser) error {
	defer stream.Close()
	addr, ok := p[port]
	if !ok {
		return fmt.Errorf("failed to connect to localhost:%d inside the network namespace of %s: connection refused", port, pod)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	done := make(chan error, 2)
	go func() { _, err := io.Copy(conn, stream); done <- err }()
	go func() { _, err := io.Copy(stream, conn); done <- err }()
	select {
	case err = <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	return err
}

func main() {
	p := ports{}
	listen := flag.String("listen", "127.0.0.1:10250", "the address the API server reaches as the node's kubelet")
	flag.Var(p, "port", "PORT=HOST:PORT: the pod's PORT reaches HOST:PORT here; repeatable")
	flag.Parse()
	cert, err := selfSigned()
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	// The path the API server's pods/portforward proxies to
	// (pkg/registry/core/pod/strategy.go, PortForwardLocation).
	mux.HandleFunc("/portForward/{namespace}/{pod}", func(w http.ResponseWriter, r *http.Request) {
		log.Printf("port-forward to %s/%s", r.PathValue("namespace"), r.PathValue("pod"))
		portforward.ServePortForward(w, r, p, r.PathValue("pod"), "", &portforward.V4Options{},
			4*time.Hour, remotecommand.DefaultStreamCreationTimeout, []string{portforward.ProtocolV1Name})
	})
	srv := &http.Server{Addr: *listen, Handler: mux, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}, ReadHeaderTimeout: time.Minute}
	log.Printf("serving port-forwards on %s: %v", *listen, p)
	log.Fatal(srv.ListenAndServeTLS("", ""))
}

// selfSigned is a serving certificate for this run: the API server does
// not check a kubelet's without --kubelet-certificate-authority.
func selfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubelet-portforward"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
