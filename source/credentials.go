package source

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/transport"

	"github.com/ocl-exporter/ocl_exporter/regularfile"
)

// MaxCredentialBytes bounds a certificate, key, CA or token file a
// kubeconfig names.
const MaxCredentialBytes = 1 << 20

// tokenPeriod is how long a token read from a file is used before the
// file is read again, as client-go's own file token source: the kubelet
// rotates a projected service account token well before it expires.
const tokenPeriod = time.Minute

// loadKubeconfig builds the configuration of the kubeconfig's current
// context once the files it names passed the checks.
func loadKubeconfig(rules *clientcmd.ClientConfigLoadingRules) (*rest.Config, error) {
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
	raw, err := loader.RawConfig()
	if err != nil {
		return nil, err
	}
	if ctx, ok := raw.Contexts[raw.CurrentContext]; ok {
		var files [][2]string
		if c, ok := raw.Clusters[ctx.Cluster]; ok {
			files = append(files, [2]string{"certificate-authority", c.CertificateAuthority})
		}
		if u, ok := raw.AuthInfos[ctx.AuthInfo]; ok {
			files = append(files, [2]string{"client-certificate", u.ClientCertificate}, [2]string{"client-key", u.ClientKey},
				[2]string{"tokenFile", u.TokenFile})
		}
		for _, f := range files {
			if f[1] == "" {
				continue
			}
			if err := regularfile.Check(f[1], MaxCredentialBytes); err != nil {
				return nil, fmt.Errorf("%s: %w", f[0], err)
			}
		}
	}
	return loader.ClientConfig()
}

// ReadCredentialFiles reads the CA, client certificate and key cfg names
// into cfg, and has the bearer token file read, each time client-go would
// read it, with the same checks: client-go reads them by path, with no
// bound, when it builds a client and every minute for the token.
func ReadCredentialFiles(cfg *rest.Config) error {
	for _, f := range []struct {
		name string
		path *string
		data *[]byte
	}{
		{"certificate-authority", &cfg.CAFile, &cfg.CAData},
		{"client-certificate", &cfg.CertFile, &cfg.CertData},
		{"client-key", &cfg.KeyFile, &cfg.KeyData},
	} {
		if *f.path == "" || len(*f.data) > 0 {
			continue
		}
		b, err := regularfile.ReadFile(*f.path, MaxCredentialBytes)
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		*f.data, *f.path = b, ""
	}
	if cfg.BearerTokenFile != "" {
		ts := transport.NewCachedTokenSource(tokenFile(cfg.BearerTokenFile))
		wrap := cfg.WrapTransport
		cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
			if wrap != nil {
				rt = wrap(rt)
			}
			return transport.ResettableTokenSourceWrapTransport(ts)(rt)
		}
		cfg.BearerToken, cfg.BearerTokenFile = "", ""
	}
	return nil
}

// tokenFile reads a bearer token from a file, as a regular file of
// bounded size.
type tokenFile string

func (f tokenFile) Token() (*oauth2.Token, error) {
	b, err := regularfile.ReadFile(string(f), MaxCredentialBytes)
	if err != nil {
		return nil, fmt.Errorf("the bearer token: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return nil, fmt.Errorf("the bearer token: %s is empty", f)
	}
	return &oauth2.Token{AccessToken: tok, TokenType: "Bearer", Expiry: time.Now().Add(tokenPeriod)}, nil
}
