package rest

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"time"

	"github.com/wasmconnect/wasmconnect/runtime/config"
)

// Setup is the REST server's configuration from a worker's settings.
type Setup struct {
	// Options are for New.
	Options []Option
	// HTTPS is true when the (first) listener is https.
	HTTPS bool
	// Client is for a Forwarder: it trusts the configured CAs (or the system's) and, when clients
	// must present certificates, presents this worker's.
	Client *http.Client
}

// NewSetup loads what the REST settings name: the https listener's certificate and CAs, and the
// credentials files, so that a bad file fails the worker's start with the setting named. The
// settings themselves were checked by config.Parse. Topic tracking and the internal request key
// are not here: pass WithTopicTracking and WithInternalKey(herder's session key) besides.
func NewSetup(r config.REST) (*Setup, error) {
	st := &Setup{Client: &http.Client{Timeout: DefaultRequestTimeout}, HTTPS: r.TLS != nil}
	if r.TLS != nil {
		cfg, err := serverTLS(r.TLS)
		if err != nil {
			return nil, err
		}
		st.Options = append(st.Options, WithTLSConfig(cfg))
		client := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: cfg.ClientCAs}
		if cfg.ClientAuth != tls.NoClientCert {
			client.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
				return cfg.GetCertificate(nil)
			}
		}
		st.Client.Transport = &http.Transport{
			TLSClientConfig:     client,
			Proxy:               http.ProxyFromEnvironment,
			IdleConnTimeout:     90 * time.Second,
			TLSHandshakeTimeout: 10 * time.Second,
		}
	}

	var auths []Authenticator
	if f := r.BasicAuthFile; f != "" {
		a, err := NewBasicAuthFile(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", config.KeyBasicAuthFile, err)
		}
		auths = append(auths, a)
	}
	if f := r.TokensFile; f != "" {
		a, err := NewTokenFile(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", config.KeyTokensFile, err)
		}
		auths = append(auths, a)
	}
	if len(auths) > 0 {
		st.Options = append(st.Options, WithAuth(Authenticators(auths...)), WithAnonymousRead(r.AnonymousRead))
	}
	return st, nil
}

// serverTLS builds the server's TLS config from an https listener's settings.
func serverTLS(t *config.RESTTLS) (*tls.Config, error) {
	kp := &keyPair{certFile: t.CertFile, keyFile: t.KeyFile}
	if err := kp.load(); err != nil {
		return nil, err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: kp.getCertificate}
	if t.CAFile != "" {
		pool, err := loadCertPool(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.CAKey, err)
		}
		cfg.ClientCAs = pool
	}
	switch t.ClientAuth {
	case "requested":
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	case "required":
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}
