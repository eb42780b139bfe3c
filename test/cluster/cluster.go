// Package cluster runs an etcd and a kube-apiserver on loopback for the
// integration suite (test/e2e) and the scale run (test/scale): certificates,
// tokens, kubeconfigs, and the CRDs the exporter reads.
package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// The exporter's identity, as deploy/ names it: the token file maps a token
// to this user, and RBAC binds ServiceAccount subjects by user name.
const (
	ExporterNamespace = "ocl-exporter"
	ExporterUser      = "system:serviceaccount:" + ExporterNamespace + ":ocl-exporter"
	// ScraperUser is the platform Prometheus, which deploy/ allows to get
	// the metrics path; NobodyUser has no permission at all.
	ScraperUser = "system:serviceaccount:openshift-monitoring:prometheus-k8s"
	NobodyUser  = "nobody"
	// ReaderUser is a person with no role of their own; tests bind one
	// (a cluster-reader without Secrets) to them.
	ReaderUser = "alice"
	// ResponderUser is the person on call: the test of the on-call path
	// binds deploy/'s Role ocl-exporter-responder to them, and nothing
	// else ever is.
	ResponderUser = "bob"
)

// Cluster is an etcd and a kube-apiserver on loopback, with their
// certificates, token file and logs in one directory.
type Cluster struct {
	Dir       string
	URL       string
	CAPEM     []byte
	Etcd      *Proc
	APIServer *Proc
	// Kubeconfigs of the admin (system:masters), of the exporter's
	// ServiceAccount identity, of ReaderUser, ResponderUser and NobodyUser,
	// each a token login as `oc login` writes it.
	AdminKubeconfig, ExporterKubeconfig, ReaderKubeconfig string
	ResponderKubeconfig, NobodyKubeconfig                 string
	AdminToken                                            string
	Admin                                                 *rest.Config
	// Bearer tokens of ScraperUser and NobodyUser, for scrapes.
	ScraperToken, NobodyToken string

	bin  string // kube-apiserver
	args []string
}

// Start starts etcd and kube-apiserver, with extraArgs appended to the
// latter's flags, and waits until both answer.
func Start(dir, etcdBin, apiserverBin string, extraArgs ...string) (*Cluster, error) {
	c := &Cluster{Dir: dir, bin: apiserverBin}
	ports, err := FreePorts(3)
	if err != nil {
		return nil, err
	}
	etcdURL := "http://127.0.0.1:" + ports[0]
	peerURL := "http://127.0.0.1:" + ports[1]
	c.Etcd, err = StartProc(dir, "etcd", etcdBin,
		"--data-dir", filepath.Join(dir, "etcd"), "--name", "e2e",
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "e2e="+peerURL)
	if err != nil {
		return nil, err
	}
	if err := WaitHTTP(c.Etcd, http.DefaultClient, etcdURL+"/health", "", time.Minute); err != nil {
		return c, err
	}

	exporterToken := randomHex()
	c.AdminToken = randomHex()
	if err := c.writePKI(); err != nil {
		return c, err
	}
	c.ScraperToken, c.NobodyToken = randomHex(), randomHex()
	readerToken, responderToken := randomHex(), randomHex()
	tokens := fmt.Sprintf("%s,admin,admin,system:masters\n%s,%s,ocl-exporter,\"system:serviceaccounts,system:serviceaccounts:%s\"\n"+
		"%s,%s,prometheus-k8s,\"system:serviceaccounts,system:serviceaccounts:openshift-monitoring\"\n%s,%s,nobody\n%s,%s,reader\n%s,%s,responder\n",
		c.AdminToken, exporterToken, ExporterUser, ExporterNamespace, c.ScraperToken, ScraperUser, c.NobodyToken, NobodyUser, readerToken, ReaderUser,
		responderToken, ResponderUser)
	if err := os.WriteFile(filepath.Join(dir, "tokens.csv"), []byte(tokens), 0o600); err != nil {
		return c, err
	}
	c.URL = "https://127.0.0.1:" + ports[2]
	c.args = append([]string{
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
	}, extraArgs...)
	if err := c.StartAPIServer(); err != nil {
		return c, err
	}
	c.Admin = &rest.Config{Host: c.URL, BearerToken: c.AdminToken, TLSClientConfig: rest.TLSClientConfig{CAData: c.CAPEM}, QPS: 200, Burst: 400,
		WarningHandler: rest.NoWarnings{}} // the fixtures keep the deprecated master role label
	c.AdminKubeconfig = filepath.Join(dir, "admin.kubeconfig")
	c.ExporterKubeconfig = filepath.Join(dir, "exporter.kubeconfig")
	c.ReaderKubeconfig = filepath.Join(dir, "reader.kubeconfig")
	if err := c.writeKubeconfig(c.AdminKubeconfig, "admin", c.AdminToken); err != nil {
		return c, err
	}
	c.ResponderKubeconfig = filepath.Join(dir, "responder.kubeconfig")
	c.NobodyKubeconfig = filepath.Join(dir, "nobody.kubeconfig")
	for path, user := range map[string][2]string{
		c.ReaderKubeconfig: {ReaderUser, readerToken}, c.ResponderKubeconfig: {ResponderUser, responderToken}, c.NobodyKubeconfig: {NobodyUser, c.NobodyToken},
	} {
		if err := c.writeKubeconfig(path, user[0], user[1]); err != nil {
			return c, err
		}
	}
	return c, c.writeKubeconfig(c.ExporterKubeconfig, ExporterUser, exporterToken)
}

// HTTPClient trusts the API server's certificate, for short requests.
func (c *Cluster) HTTPClient() *http.Client {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.CAPEM)
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 5 * time.Second}
}

// StartAPIServer starts kube-apiserver with the cluster's flags, on the same
// port every time, and waits for /readyz.
func (c *Cluster) StartAPIServer() error {
	var err error
	c.APIServer, err = StartProc(c.Dir, "kube-apiserver", c.bin, c.args...)
	if err != nil {
		return err
	}
	// /readyz is open to anonymous users by the bootstrap RBAC.
	return WaitHTTP(c.APIServer, c.HTTPClient(), c.URL+"/readyz", "", 3*time.Minute)
}

// StopAPIServer stops kube-apiserver, leaving etcd running.
func (c *Cluster) StopAPIServer() { c.APIServer.Stop() }

// Stop stops both servers.
func (c *Cluster) Stop() {
	if c.APIServer != nil {
		c.APIServer.Stop()
	}
	if c.Etcd != nil {
		c.Etcd.Stop()
	}
}

func (c *Cluster) writeKubeconfig(path, user, token string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["e2e"] = &clientcmdapi.Cluster{Server: c.URL, CertificateAuthorityData: c.CAPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: user}
	cfg.CurrentContext = "e2e"
	return clientcmd.WriteToFile(*cfg, path)
}
