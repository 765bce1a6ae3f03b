package rest

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Worker settings read by FromProperties. The listeners.https.* keys follow Kafka's (its REST server
// reads listeners.https.ssl.*), with PEM files instead of Java keystores.
const (
	// PEM certificate chain and unencrypted PEM private key of an https listener.
	PropCertificateLocation = "listeners.https.ssl.certificate.location"
	PropKeyLocation         = "listeners.https.ssl.key.location"
	// Kafka's alternative (KIP-651): keystore.type=PEM and one PEM file holding the key and the chain.
	PropKeystoreType     = "listeners.https.ssl.keystore.type"
	PropKeystoreLocation = "listeners.https.ssl.keystore.location"
	// PEM CA certificates: verify client certificates, and other workers' when forwarding.
	// listeners.https.ssl.truststore.location with truststore.type=PEM is the same.
	PropCALocation         = "listeners.https.ssl.ca.location"
	PropTruststoreType     = "listeners.https.ssl.truststore.type"
	PropTruststoreLocation = "listeners.https.ssl.truststore.location"
	// none (default), requested or required: whether clients must present a certificate the CAs signed.
	PropClientAuthentication = "listeners.https.ssl.client.authentication"
	PropKeyPassword          = "listeners.https.ssl.key.password"

	PropBasicAuthFile = "rest.auth.basic.file"     // user:$pbkdf2-sha256$...:role lines (see HashPassword)
	PropTokensFile    = "rest.auth.tokens.file"    // name:$sha256$<hex>:role lines (see HashToken)
	PropAnonymousRead = "rest.auth.anonymous.read" // true: GET and HEAD need no credentials (default false)

	PropTopicTracking      = "topic.tracking.enable"      // default true
	PropTopicTrackingReset = "topic.tracking.allow.reset" // default true
)

// PropertyKeys lists the settings FromProperties reads outside the listeners.https. prefix, for the
// worker's list of known settings.
var PropertyKeys = []string{PropBasicAuthFile, PropTokensFile, PropAnonymousRead, PropTopicTracking, PropTopicTrackingReset}

// Setup is the REST server's configuration from worker properties.
type Setup struct {
	// Options are for New.
	Options []Option
	// HTTPS is true when the (first) listener is https.
	HTTPS bool
	// Client is for a Forwarder: it trusts the configured CAs (or the system's) and, when clients
	// must present certificates, presents this worker's.
	Client *http.Client
}

// FromProperties reads the REST server's settings from worker properties: TLS for an https listener
// (the first of "listeners", which is the one a worker serves), authentication and topic tracking.
// Files are loaded now, so that a bad certificate or credentials file fails the worker's start. The
// internal request key is not a setting: pass WithInternalKey(herder's session key) besides.
func FromProperties(props map[string]string) (*Setup, error) {
	get := func(k string) string { return strings.TrimSpace(props[k]) }
	bad := func(k, why string) error { return fmt.Errorf("invalid value %q for %s: %s", props[k], k, why) }
	boolean := func(k string, def bool) (bool, error) {
		switch v := strings.ToLower(get(k)); v {
		case "":
			return def, nil
		case "true", "false":
			return v == "true", nil
		}
		return false, bad(k, "must be true or false")
	}

	st := &Setup{Client: &http.Client{Timeout: DefaultRequestTimeout}}
	if l := strings.TrimSpace(strings.Split(get("listeners"), ",")[0]); l != "" {
		if u, err := url.Parse(l); err == nil && strings.EqualFold(u.Scheme, "https") {
			st.HTTPS = true
		}
	}
	if st.HTTPS {
		cfg, err := tlsFromProperties(get, bad)
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
	if f := get(PropBasicAuthFile); f != "" {
		a, err := NewBasicAuthFile(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", PropBasicAuthFile, err)
		}
		auths = append(auths, a)
	}
	if f := get(PropTokensFile); f != "" {
		a, err := NewTokenFile(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", PropTokensFile, err)
		}
		auths = append(auths, a)
	}
	anon, err := boolean(PropAnonymousRead, false)
	if err != nil {
		return nil, err
	}
	if len(auths) > 0 {
		st.Options = append(st.Options, WithAuth(Authenticators(auths...)), WithAnonymousRead(anon))
	} else if anon {
		return nil, bad(PropAnonymousRead, "needs "+PropBasicAuthFile+" or "+PropTokensFile)
	}

	tracking, err := boolean(PropTopicTracking, true)
	if err != nil {
		return nil, err
	}
	reset, err := boolean(PropTopicTrackingReset, true)
	if err != nil {
		return nil, err
	}
	st.Options = append(st.Options, WithTopicTracking(tracking, reset))
	return st, nil
}

// tlsFromProperties builds the server's TLS config from the listeners.https.ssl.* settings.
func tlsFromProperties(get func(string) string, bad func(k, why string) error) (*tls.Config, error) {
	if get(PropKeyPassword) != "" {
		return nil, bad(PropKeyPassword, "encrypted private keys are not supported: give an unencrypted PEM key with file permissions that protect it")
	}
	certFile, keyFile := get(PropCertificateLocation), get(PropKeyLocation)
	if ks := get(PropKeystoreLocation); ks != "" {
		if !strings.EqualFold(get(PropKeystoreType), "PEM") {
			return nil, bad(PropKeystoreType, "Java keystores are not supported: set it to PEM with a PEM file holding the key and the certificate chain, or set "+
				PropCertificateLocation+" and "+PropKeyLocation)
		}
		if certFile != "" || keyFile != "" {
			return nil, fmt.Errorf("set either %s or %s and %s, not both", PropKeystoreLocation, PropCertificateLocation, PropKeyLocation)
		}
		certFile, keyFile = ks, ks
	}
	if certFile == "" || keyFile == "" {
		return nil, errors.New("an https listener needs " + PropCertificateLocation + " and " + PropKeyLocation +
			" (PEM files), or " + PropKeystoreType + "=PEM with " + PropKeystoreLocation)
	}
	kp := &keyPair{certFile: certFile, keyFile: keyFile}
	if err := kp.load(); err != nil {
		return nil, err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: kp.getCertificate}

	caKey, ca := PropCALocation, get(PropCALocation)
	if ts := get(PropTruststoreLocation); ts != "" {
		if !strings.EqualFold(get(PropTruststoreType), "PEM") {
			return nil, bad(PropTruststoreType, "Java truststores are not supported: set it to PEM, or set "+PropCALocation)
		}
		if ca != "" {
			return nil, fmt.Errorf("set either %s or %s, not both", PropTruststoreLocation, PropCALocation)
		}
		caKey, ca = PropTruststoreLocation, ts
	}
	if ca != "" {
		pool, err := loadCertPool(ca)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", caKey, err)
		}
		cfg.ClientCAs = pool
	}
	switch strings.ToLower(get(PropClientAuthentication)) {
	case "", "none":
	case "requested":
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	case "required":
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	default:
		return nil, bad(PropClientAuthentication, "must be none, requested or required")
	}
	if cfg.ClientAuth != tls.NoClientCert && cfg.ClientCAs == nil {
		return nil, fmt.Errorf("%s=%s needs %s (the CAs that sign client certificates)", PropClientAuthentication, get(PropClientAuthentication), PropCALocation)
	}
	return cfg, nil
}
