package cluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// writePKI writes a CA, the API server's serving certificate for 127.0.0.1
// signed by it, and the service account signing key pair.
func (c *Cluster) writePKI() error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ocl-exporter-test-ca"},
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
	c.CAPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})

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
		if err := os.WriteFile(filepath.Join(c.Dir, name), pem.EncodeToMemory(b), 0o600); err != nil {
			return err
		}
	}
	return nil
}

func randomHex() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
