package config

import (
	"net"
	"net/url"
	"strings"
)

// REST is the REST server's settings. Package rest loads the files they name (certificates,
// credentials) when the worker starts.
type REST struct {
	Listeners          []*url.URL // listeners (http://:8083); rest.host.name/rest.port when listeners is absent
	AdvertisedHost     string     // rest.advertised.host.name
	AdvertisedPort     int        // rest.advertised.port
	AdvertisedListener string     // rest.advertised.listener (the listener's scheme)

	// TLS is the https listener's certificate and client authentication; nil unless the first
	// listener, the one a worker serves, is https (an http listener ignores the TLS keys, as in
	// Kafka).
	TLS *RESTTLS

	BasicAuthFile string // rest.auth.basic.file: user:$pbkdf2-sha256$...:role lines
	TokensFile    string // rest.auth.tokens.file: name:$sha256$<hex>:role lines
	AnonymousRead bool   // rest.auth.anonymous.read (false): GET and HEAD need no credentials
}

// RESTTLS is an https listener's TLS settings: the listeners.https.ssl.* keys of Kafka, with PEM
// files instead of Java keystores.
type RESTTLS struct {
	CertFile, KeyFile string // PEM certificate chain and unencrypted PEM key (one file for a PEM keystore)
	// CAFile holds the PEM CA certificates that verify client certificates, and other workers'
	// when forwarding; "" for the system's. CAKey is the setting that named it, for errors.
	CAFile, CAKey string
	// ClientAuth is listeners.https.ssl.client.authentication: none, requested or required.
	ClientAuth string
}

// The REST server's TLS keys.
const (
	KeyCertificateLocation  = "listeners.https.ssl.certificate.location"
	KeyKeyLocation          = "listeners.https.ssl.key.location"
	KeyKeystoreType         = "listeners.https.ssl.keystore.type"     // KIP-651: PEM, with one file holding the key and the chain
	KeyKeystoreLocation     = "listeners.https.ssl.keystore.location" // that file
	KeyCALocation           = "listeners.https.ssl.ca.location"
	KeyTruststoreType       = "listeners.https.ssl.truststore.type"
	KeyTruststoreLocation   = "listeners.https.ssl.truststore.location" // with truststore.type=PEM, the same as ca.location
	KeyClientAuthentication = "listeners.https.ssl.client.authentication"
	KeyKeyPassword          = "listeners.https.ssl.key.password"
	KeyBasicAuthFile        = "rest.auth.basic.file"
	KeyTokensFile           = "rest.auth.tokens.file"
	KeyAnonymousRead        = "rest.auth.anonymous.read"
)

// restKeys are the REST server's keys.
var restKeys = []Key{
	{Name: "listeners", Doc: "REST listener"},
	{Name: "rest.host.name", Doc: "REST host when listeners is absent"},
	{Name: "rest.port", Default: "8083", Doc: "REST port when listeners is absent"},
	{Name: "rest.advertised.host.name", Doc: "host other workers reach this one at"},
	{Name: "rest.advertised.port", Default: "0", Doc: "port other workers reach this one at (0: the listener's)"},
	{Name: "rest.advertised.listener", Doc: "scheme other workers reach this one with"},
	{Name: KeyCertificateLocation, Doc: "PEM certificate chain of an https listener"},
	{Name: KeyKeyLocation, Doc: "PEM private key of an https listener"},
	{Name: KeyKeystoreType, Doc: "PEM (Java keystores are refused)"},
	{Name: KeyKeystoreLocation, Doc: "one PEM file with the key and the chain"},
	{Name: KeyCALocation, Doc: "PEM CAs of client certificates"},
	{Name: KeyTruststoreType, Doc: "PEM (Java truststores are refused)"},
	{Name: KeyTruststoreLocation, Doc: "PEM CAs of client certificates"},
	{Name: KeyClientAuthentication, Default: "none", Doc: "none, requested or required"},
	{Name: KeyKeyPassword, Doc: "refused: encrypted keys are not supported"},
	{Name: "listeners.https.", Ignored: "an https listener reads only the listeners.https.ssl.* keys the README lists"},
	{Name: KeyBasicAuthFile, Doc: "HTTP basic users"},
	{Name: KeyTokensFile, Doc: "bearer tokens"},
	{Name: KeyAnonymousRead, Default: "false", Doc: "let unauthenticated clients read"},
	{Name: "access.control.allow.origin", Ignored: "the REST server sends no CORS headers"},
	{Name: "access.control.allow.methods", Ignored: "the REST server sends no CORS headers"},
	{Name: "admin.listeners", Ignored: "the admin endpoints (/admin/loggers) are served on listeners"},
}

func parseREST(p *parser) REST {
	r := REST{
		Listeners:          parseListeners(p),
		AdvertisedHost:     p.str("rest.advertised.host.name"),
		AdvertisedPort:     p.intRange("rest.advertised.port", 0, 65535),
		AdvertisedListener: p.str("rest.advertised.listener"),
		BasicAuthFile:      p.str(KeyBasicAuthFile),
		TokensFile:         p.str(KeyTokensFile),
		AnonymousRead:      p.bool(KeyAnonymousRead),
	}
	if r.AnonymousRead && r.BasicAuthFile == "" && r.TokensFile == "" {
		p.fail(KeyAnonymousRead, p.props[KeyAnonymousRead], "needs "+KeyBasicAuthFile+" or "+KeyTokensFile)
	}
	if strings.EqualFold(r.Listeners[0].Scheme, "https") {
		r.TLS = parseRESTTLS(p)
	}
	return r
}

func parseListeners(p *parser) []*url.URL {
	raw := p.list("listeners")
	if len(raw) == 0 {
		raw = []string{"http://" + net.JoinHostPort(p.str("rest.host.name"), p.str("rest.port"))}
	}
	var out []*url.URL
	for _, l := range raw {
		u, err := url.Parse(l)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Port() == "" {
			p.fail("listeners", l, "expected a URL like http://:8083 or https://host:8443")
			continue
		}
		out = append(out, u)
	}
	if len(out) == 0 {
		out = []*url.URL{{Scheme: "http", Host: ":8083"}}
	}
	return out
}

// parseRESTTLS reads an https listener's listeners.https.ssl.* keys.
func parseRESTTLS(p *parser) *RESTTLS {
	t := &RESTTLS{CertFile: p.str(KeyCertificateLocation), KeyFile: p.str(KeyKeyLocation), CAKey: KeyCALocation, CAFile: p.str(KeyCALocation)}
	if p.str(KeyKeyPassword) != "" {
		p.fail(KeyKeyPassword, p.props[KeyKeyPassword], "encrypted private keys are not supported: give an unencrypted PEM key with file permissions that protect it")
	}
	if ks := p.str(KeyKeystoreLocation); ks != "" {
		switch {
		case !strings.EqualFold(p.str(KeyKeystoreType), "PEM"):
			p.fail(KeyKeystoreType, p.props[KeyKeystoreType], "Java keystores are not supported: set it to PEM with a PEM file holding the key and the certificate chain, or set "+
				KeyCertificateLocation+" and "+KeyKeyLocation)
		case t.CertFile != "" || t.KeyFile != "":
			p.failf("set either %s or %s and %s, not both", KeyKeystoreLocation, KeyCertificateLocation, KeyKeyLocation)
		}
		t.CertFile, t.KeyFile = ks, ks
	}
	if t.CertFile == "" || t.KeyFile == "" {
		p.failf("an https listener needs %s and %s (PEM files), or %s=PEM with %s", KeyCertificateLocation, KeyKeyLocation, KeyKeystoreType, KeyKeystoreLocation)
	}
	if ts := p.str(KeyTruststoreLocation); ts != "" {
		switch {
		case !strings.EqualFold(p.str(KeyTruststoreType), "PEM"):
			p.fail(KeyTruststoreType, p.props[KeyTruststoreType], "Java truststores are not supported: set it to PEM, or set "+KeyCALocation)
		case t.CAFile != "":
			p.failf("set either %s or %s, not both", KeyTruststoreLocation, KeyCALocation)
		}
		t.CAKey, t.CAFile = KeyTruststoreLocation, ts
	}
	switch t.ClientAuth = strings.ToLower(p.str(KeyClientAuthentication)); t.ClientAuth {
	case "none", "requested", "required":
	case "":
		t.ClientAuth = "none"
	default:
		p.fail(KeyClientAuthentication, p.props[KeyClientAuthentication], "must be none, requested or required")
	}
	if t.ClientAuth != "none" && t.CAFile == "" {
		p.failf("%s=%s needs %s (the CAs that sign client certificates)", KeyClientAuthentication, p.str(KeyClientAuthentication), KeyCALocation)
	}
	return t
}
