// Package testpki makes a throw-away certificate authority and certificates signed by it, written
// as PEM files, for tests that run brokers and clients over TLS. Keys are ECDSA P-256, quick to
// make; nothing here is fit for production.
package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// CA is a certificate authority whose certificate is at CertFile.
type CA struct {
	Dir      string
	CertFile string
	cert     *x509.Certificate
	key      *ecdsa.PrivateKey
}

// Issued is a certificate signed by a CA, with its files: CertFile holds the certificate, KeyFile
// the private key, and BundleFile both (the key first), as Kafka's ssl.keystore.location with
// ssl.keystore.type=PEM wants them.
type Issued struct {
	CertFile, KeyFile, BundleFile string
	TLS                           tls.Certificate
}

// NewCA makes a CA named name and writes its certificate to dir/name.pem.
func NewCA(dir, name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	ca := &CA{Dir: dir, CertFile: filepath.Join(dir, name+".pem"), cert: cert, key: key}
	return ca, os.WriteFile(ca.CertFile, pemBlock("CERTIFICATE", der), 0o644)
}

// Pool returns a pool holding the CA's certificate.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// Server issues a server certificate for hosts (names or IP addresses).
func (ca *CA) Server(name string, hosts ...string) (*Issued, error) {
	return ca.issue(name, x509.ExtKeyUsageServerAuth, hosts)
}

// Client issues a client certificate whose subject is name.
func (ca *CA) Client(name string) (*Issued, error) {
	return ca.issue(name, x509.ExtKeyUsageClientAuth, nil)
}

func (ca *CA) issue(name string, usage x509.ExtKeyUsage, hosts []string) (*Issued, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	certPEM, keyPEM := pemBlock("CERTIFICATE", der), pemBlock("PRIVATE KEY", keyDER)
	is := &Issued{
		CertFile:   filepath.Join(ca.Dir, name+".crt.pem"),
		KeyFile:    filepath.Join(ca.Dir, name+".key.pem"),
		BundleFile: filepath.Join(ca.Dir, name+".bundle.pem"),
	}
	for file, data := range map[string][]byte{is.CertFile: certPEM, is.KeyFile: keyPEM, is.BundleFile: append(append([]byte{}, keyPEM...), certPEM...)} {
		if err := os.WriteFile(file, data, 0o600); err != nil {
			return nil, err
		}
	}
	is.TLS, err = tls.X509KeyPair(certPEM, keyPEM)
	return is, err
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n
}
