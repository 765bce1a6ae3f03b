package rest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/runtime/config"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 (usable by servers and clients) and its
// key as PEM files, and returns their paths and the certificate.
func selfSigned(t *testing.T, dir, cn string) (certFile, keyFile string, cert *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{"localhost"},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ = x509.ParseCertificate(der)
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, cn+".crt"), filepath.Join(dir, cn+".key")
	writeFile(t, certFile, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	writeFile(t, keyFile, string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})))
	return certFile, keyFile, cert
}

func clientTrusting(certs ...*x509.Certificate) *http.Client {
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

func startServer(t *testing.T, opts ...Option) (*Server, string) {
	t.Helper()
	opts = append([]Option{WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}, opts...)
	s := New(newFake(), opts...)
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, s.Addr().String()
}

func get(t *testing.T, c *http.Client, url string) (*http.Response, string, error) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b), nil
}

func TestTLS(t *testing.T) {
	old := reloadInterval
	reloadInterval = 0
	defer func() { reloadInterval = old }()

	dir := t.TempDir()
	certFile, keyFile, cert := selfSigned(t, dir, "one")
	s, addr := startServer(t, WithTLS(certFile, keyFile))
	if !s.TLS() {
		t.Error("TLS() is false")
	}
	resp, body, err := get(t, clientTrusting(cert), "https://"+addr+"/")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.TLS == nil || !strings.Contains(body, `"version":"3.9.0"`) {
		t.Errorf("GET / over TLS: %d %s", resp.StatusCode, body)
	}
	if resp.TLS.Version < tls.VersionTLS12 {
		t.Errorf("TLS version %x", resp.TLS.Version)
	}
	// Plain HTTP to the TLS port is refused.
	if resp, _, err := get(t, &http.Client{Timeout: 5 * time.Second}, "http://"+addr+"/"); err == nil && resp.StatusCode != 400 {
		t.Errorf("plain HTTP answered %d", resp.StatusCode)
	}
	// A client that does not trust the certificate fails.
	if _, _, err := get(t, clientTrusting(), "https://"+addr+"/"); err == nil {
		t.Error("untrusted certificate accepted")
	}

	// A renewed certificate is served without a restart.
	c2, k2, cert2 := selfSigned(t, dir, "two")
	for _, p := range [][2]string{{c2, certFile}, {k2, keyFile}} {
		b, _ := os.ReadFile(p[0])
		writeFile(t, p[1], string(b))
		touch(t, p[1])
	}
	resp, _, err = get(t, &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: poolOf(cert2)}}}, "https://"+addr+"/")
	if err != nil {
		t.Fatalf("after renewal: %v", err)
	}
	if cn := resp.TLS.PeerCertificates[0].Subject.CommonName; cn != "two" {
		t.Errorf("served %s after renewal", cn)
	}
}

func poolOf(c *x509.Certificate) *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(c)
	return p
}

func TestTLSBadFiles(t *testing.T) {
	dir := t.TempDir()
	certFile, _, _ := selfSigned(t, dir, "one")
	_, otherKey, _ := selfSigned(t, dir, "other")
	for name, opt := range map[string]Option{
		"missing":    WithTLS(filepath.Join(dir, "nope.crt"), filepath.Join(dir, "nope.key")),
		"mismatched": WithTLS(certFile, otherKey),
		"no cert":    WithTLSConfig(&tls.Config{}),
	} {
		s := New(newFake(), opt)
		if err := s.Start("127.0.0.1:0"); err == nil {
			s.Close()
			t.Errorf("%s: Start succeeded", name)
		}
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		if err := s.Serve(ln); err == nil {
			t.Errorf("%s: Serve succeeded", name)
		}
	}
}

func TestSetupTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, cert := selfSigned(t, dir, "worker")
	bundle := filepath.Join(dir, "bundle.pem")
	cb, _ := os.ReadFile(certFile)
	kb, _ := os.ReadFile(keyFile)
	writeFile(t, bundle, string(kb)+string(cb))

	for name, tc := range map[string]*config.RESTTLS{
		"cert and key": {CertFile: certFile, KeyFile: keyFile, ClientAuth: "none"},
		"PEM keystore": {CertFile: bundle, KeyFile: bundle, CAFile: certFile, CAKey: config.KeyTruststoreLocation, ClientAuth: "none"},
	} {
		t.Run(name, func(t *testing.T) {
			st, err := NewSetup(config.REST{TLS: tc})
			if err != nil {
				t.Fatal(err)
			}
			if !st.HTTPS {
				t.Fatal("HTTPS false")
			}
			_, addr := startServer(t, st.Options...)
			resp, _, err := get(t, clientTrusting(cert), "https://"+addr+"/connectors")
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("GET: %v %v", resp, err)
			}
		})
	}

	// Client certificates required: a client without one is refused; the Setup's client (which
	// forwarders use) presents the worker's certificate and trusts the CA.
	st, err := NewSetup(config.REST{TLS: &config.RESTTLS{CertFile: certFile, KeyFile: keyFile, CAFile: certFile, CAKey: config.KeyCALocation, ClientAuth: "required"}})
	if err != nil {
		t.Fatal(err)
	}
	_, addr := startServer(t, st.Options...)
	if _, _, err := get(t, clientTrusting(cert), "https://"+addr+"/"); err == nil {
		t.Error("client without a certificate accepted")
	}
	resp, _, err := get(t, st.Client, "https://"+addr+"/")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("mutual TLS: %v %v", resp, err)
	}
	if len(resp.TLS.PeerCertificates) == 0 {
		t.Error("no server certificate")
	}
	// And a Forwarder over it.
	ctx := context.WithValue(context.Background(), requestKey{}, httptestRequest("GET", "/connectors"))
	err = (&Forwarder{Client: st.Client}).Forward(ctx, "https://"+addr+"/")
	if fr, ok := err.(*ForwardedResponse); !ok || fr.Status != 200 {
		t.Errorf("forward over mutual TLS: %v", err)
	}
}

func httptestRequest(method, target string) *http.Request {
	r, _ := http.NewRequest(method, "http://x"+target, nil)
	return r
}

// The files the settings name are loaded by NewSetup; a bad one names the setting. (The errors
// that need no file are config.Parse's: config.TestParseRESTErrors.)
func TestSetupErrors(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, _ := selfSigned(t, dir, "w")
	bf, tf := credFiles(t)
	for _, tc := range []struct {
		name string
		rest config.REST
		want string
	}{
		{"missing key file", config.REST{TLS: &config.RESTTLS{CertFile: certFile, KeyFile: filepath.Join(dir, "nope")}}, "TLS key"},
		{"bad CA", config.REST{TLS: &config.RESTTLS{CertFile: certFile, KeyFile: keyFile, CAFile: keyFile, CAKey: config.KeyCALocation}}, config.KeyCALocation + ": " + keyFile + " holds no PEM certificate"},
		{"missing users file", config.REST{BasicAuthFile: filepath.Join(dir, "nope")}, config.KeyBasicAuthFile},
		{"bad tokens file", config.REST{TokensFile: bf}, config.KeyTokensFile},
	} {
		if _, err := NewSetup(tc.rest); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	// Without TLS settings the listener is http.
	st, err := NewSetup(config.REST{})
	if err != nil || st.HTTPS {
		t.Errorf("http listener: %+v %v", st, err)
	}

	// Authentication, and topic tracking beside it.
	st, err = NewSetup(config.REST{BasicAuthFile: bf, TokensFile: tf, AnonymousRead: true})
	if err != nil {
		t.Fatal(err)
	}
	hs := newHarness(t, append(st.Options, WithTopicTracking(true, false))...)
	hs.expect("GET", "/connectors", "", 200, `["snk","src"]`)
	if r := hs.send("DELETE", "/connectors/src", "", nil); r.code != 401 {
		t.Errorf("unauthenticated delete: %d", r.code)
	}
	if r := hs.send("DELETE", "/connectors/src", "", bearer(adminToken)); r.code != 204 {
		t.Errorf("token delete: %d", r.code)
	}
	if r := hs.send("PUT", "/connectors/snk/topics/reset", "", basic("alice", "alice-pw")); r.code != 403 || !strings.Contains(r.body, "Topic tracking reset is disabled.") {
		t.Errorf("reset: %d %s", r.code, r.body)
	}
}
