package rest

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// WithTLS serves HTTPS with the PEM certificate chain in certFile and the PEM private key in keyFile
// (unencrypted; RSA, ECDSA or Ed25519). The files are read again when they change (checked at most once
// a second), so a renewed certificate is used without a restart. TLS 1.2 is the minimum. Start,
// ListenAndServe and Serve fail if the files cannot be loaded.
func WithTLS(certFile, keyFile string) Option {
	return func(s *Server) {
		kp := &keyPair{certFile: certFile, keyFile: keyFile}
		s.tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: kp.getCertificate}
		s.tlsCheck = kp.load
	}
}

// WithTLSConfig serves HTTPS with cfg, which must provide a certificate (Certificates or
// GetCertificate). NewSetup builds one from the listeners.https.ssl.* settings, with client
// certificate checks when asked.
func WithTLSConfig(cfg *tls.Config) Option {
	return func(s *Server) {
		s.tlsConfig, s.tlsCheck = cfg, nil
		if cfg != nil && len(cfg.Certificates) == 0 && cfg.GetCertificate == nil && cfg.GetConfigForClient == nil {
			s.tlsCheck = func() error { return errors.New("rest: the TLS config has no certificate") }
		}
	}
}

// keyPair is a certificate and key read from PEM files, read again when they change.
type keyPair struct {
	certFile, keyFile string

	mu       sync.Mutex
	checked  time.Time
	certMod  time.Time
	keyMod   time.Time
	cert     *tls.Certificate
	loadedOK bool
}

// load reads the files now.
func (k *keyPair) load() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.loadLocked()
}

func (k *keyPair) loadLocked() error {
	cfi, err := os.Stat(k.certFile)
	if err != nil {
		return fmt.Errorf("rest: TLS certificate: %w", err)
	}
	kfi, err := os.Stat(k.keyFile)
	if err != nil {
		return fmt.Errorf("rest: TLS key: %w", err)
	}
	k.checked = time.Now()
	if k.loadedOK && cfi.ModTime().Equal(k.certMod) && kfi.ModTime().Equal(k.keyMod) {
		return nil
	}
	cert, err := tls.LoadX509KeyPair(k.certFile, k.keyFile)
	if err != nil {
		return fmt.Errorf("rest: TLS certificate %s and key %s: %w", k.certFile, k.keyFile, err)
	}
	k.cert, k.certMod, k.keyMod, k.loadedOK = &cert, cfi.ModTime(), kfi.ModTime(), true
	return nil
}

// getCertificate returns the current certificate, reloading the files if they changed. A reload that
// fails keeps the previous certificate (a renewal writes two files, which may be seen half-written).
func (k *keyPair) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.cert == nil || time.Since(k.checked) >= reloadInterval {
		if err := k.loadLocked(); err != nil && k.cert == nil {
			return nil, err
		}
	}
	return k.cert, nil
}

// loadCertPool reads the PEM certificates of file into a pool.
func loadCertPool(file string) (*x509.CertPool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s holds no PEM certificate", file)
	}
	return pool, nil
}
