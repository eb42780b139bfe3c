//go:build e2e

package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// The exporter's identity, as deploy/ names it: the token file maps a token
// to this user, and RBAC binds ServiceAccount subjects by user name.
const (
	exporterNamespace = "ocl-exporter"
	exporterUser      = "system:serviceaccount:" + exporterNamespace + ":ocl-exporter"
)

// cluster is an etcd and a kube-apiserver on loopback, with their
// certificates, token file and logs in one temporary directory.
type cluster struct {
	dir       string
	bin       string // kube-apiserver
	args      []string
	url       string
	caPEM     []byte
	etcd      *proc
	apiserver *proc
	// kubeconfigs of the admin (system:masters) and of the exporter's
	// ServiceAccount identity.
	adminKubeconfig, exporterKubeconfig string
	admin                               *rest.Config
}

func startCluster(dir, etcdBin, apiserverBin string) (*cluster, error) {
	c := &cluster{dir: dir, bin: apiserverBin}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	etcdURL := "http://127.0.0.1:" + ports[0]
	peerURL := "http://127.0.0.1:" + ports[1]
	c.etcd, err = start(dir, "etcd", etcdBin,
		"--data-dir", filepath.Join(dir, "etcd"), "--name", "e2e",
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "e2e="+peerURL)
	if err != nil {
		return nil, err
	}
	if err := waitHTTP(c.etcd, http.DefaultClient, etcdURL+"/health", "", time.Minute); err != nil {
		return c, err
	}

	adminToken, exporterToken := randomHex(), randomHex()
	if err := c.writePKI(); err != nil {
		return c, err
	}
	tokens := fmt.Sprintf("%s,admin,admin,system:masters\n%s,%s,ocl-exporter,\"system:serviceaccounts,system:serviceaccounts:%s\"\n",
		adminToken, exporterToken, exporterUser, exporterNamespace)
	if err := os.WriteFile(filepath.Join(dir, "tokens.csv"), []byte(tokens), 0o600); err != nil {
		return c, err
	}
	c.url = "https://127.0.0.1:" + ports[2]
	c.args = []string{
		"--etcd-servers", etcdURL,
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--secure-port", ports[2],
		"--cert-dir", filepath.Join(dir, "apiserver"),
		"--tls-cert-file", filepath.Join(dir, "serving.crt"), "--tls-private-key-file", filepath.Join(dir, "serving.key"),
		"--token-auth-file", filepath.Join(dir, "tokens.csv"),
		"--authorization-mode", "RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--service-account-key-file", filepath.Join(dir, "sa.pub"),
		"--service-account-signing-key-file", filepath.Join(dir, "sa.key"),
		"--service-cluster-ip-range", "10.0.0.0/24",
		// No controller manager or kubelet runs: objects stay as the
		// fixtures write them. ServiceAccount would require the build
		// pods' service account, Priority their priority classes; the
		// others rewrite nodes and pods.
		"--disable-admission-plugins", "ServiceAccount,Priority,TaintNodesByCondition,DefaultTolerationSeconds,RuntimeClass",
		"--enable-priority-and-fairness=false",
		"--endpoint-reconciler-type", "none",
	}
	if err := c.startAPIServer(); err != nil {
		return c, err
	}
	c.admin = &rest.Config{Host: c.url, BearerToken: adminToken, TLSClientConfig: rest.TLSClientConfig{CAData: c.caPEM}, QPS: 200, Burst: 400,
		WarningHandler: rest.NoWarnings{}} // the fixtures keep the deprecated master role label
	c.adminKubeconfig = filepath.Join(dir, "admin.kubeconfig")
	c.exporterKubeconfig = filepath.Join(dir, "exporter.kubeconfig")
	if err := c.writeKubeconfig(c.adminKubeconfig, "admin", adminToken); err != nil {
		return c, err
	}
	return c, c.writeKubeconfig(c.exporterKubeconfig, exporterUser, exporterToken)
}

// startAPIServer starts kube-apiserver with the cluster's flags, on the same
// port every time, and waits for /readyz.
func (c *cluster) startAPIServer() error {
	var err error
	c.apiserver, err = start(c.dir, "kube-apiserver", c.bin, c.args...)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.caPEM)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 5 * time.Second}
	// /readyz is open to anonymous users by the bootstrap RBAC.
	return waitHTTP(c.apiserver, client, c.url+"/readyz", "", 3*time.Minute)
}

func (c *cluster) stopAPIServer() { c.apiserver.stop() }

func (c *cluster) stop() {
	if c.apiserver != nil {
		c.apiserver.stop()
	}
	if c.etcd != nil {
		c.etcd.stop()
	}
}

func (c *cluster) writeKubeconfig(path, user, token string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["e2e"] = &clientcmdapi.Cluster{Server: c.url, CertificateAuthorityData: c.caPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: user}
	cfg.CurrentContext = "e2e"
	return clientcmd.WriteToFile(*cfg, path)
}

// writePKI writes a CA, the API server's serving certificate for 127.0.0.1
// signed by it, and the service account signing key pair.
func (c *cluster) writePKI() error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ocl-exporter-e2e-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	if ca, err = x509.ParseCertificate(caDER); err != nil {
		return err
	}
	c.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	serving := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kube-apiserver"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	servingDER, err := x509.CreateCertificate(rand.Reader, serving, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	saPub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return err
	}
	files := map[string]*pem.Block{
		"serving.crt": {Type: "CERTIFICATE", Bytes: servingDER},
		"sa.pub":      {Type: "PUBLIC KEY", Bytes: saPub},
	}
	for name, k := range map[string]*ecdsa.PrivateKey{"serving.key": key, "sa.key": saKey} {
		der, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			return err
		}
		files[name] = &pem.Block{Type: "EC PRIVATE KEY", Bytes: der}
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(c.dir, name), pem.EncodeToMemory(b), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// waitHTTP polls url until it answers 200, the process exits or the time is
// up; errors carry the end of the process's log.
func waitHTTP(p *proc, client *http.Client, url, token string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last string
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited before %s answered:\n%s", p.name, url, p.tail(40))
		case <-ctx.Done():
			return fmt.Errorf("%s did not answer %s within %s (last: %s):\n%s", p.name, url, timeout, last, p.tail(40))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// freePorts asks the kernel for n free loopback ports.
func freePorts(n int) ([]string, error) {
	var out []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		out = append(out, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	}
	return out, nil
}

func randomHex() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// freeAddress is a free 127.0.0.1:port for a server the test starts.
func freeAddress() (string, error) {
	p, err := freePorts(1)
	if err != nil {
		return "", err
	}
	return "127.0.0.1:" + strings.Join(p, ""), nil
}
