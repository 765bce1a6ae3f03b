package kafkaclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// tlsConfig builds the TLS settings of an SSL or SASL_SSL client from the ssl.* keys. Stores are
// read as PEM (ssl.truststore.type=PEM / ssl.keystore.type=PEM, or a location whose file is PEM
// while the type is left at Kafka's default): JKS and PKCS12 stores are refused with the command
// that converts them, as the worker uses no library that reads them.
func (b *builder) tlsConfig() *tls.Config {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	nerr := len(b.errs)

	roots := b.truststore()
	cfg.RootCAs = roots
	if cert := b.keystore(); cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	b.versions(cfg)
	b.ciphers(cfg)
	if alg, ok := b.value("ssl.endpoint.identification.algorithm"); ok {
		switch strings.ToLower(alg) {
		case "https":
		case "":
			// Kafka's way to turn off host name checks; the chain is still verified.
			cfg.InsecureSkipVerify = true
			cfg.VerifyConnection = func(cs tls.ConnectionState) error { return verifyChain(cs, roots) }
		default:
			b.fail("ssl.endpoint.identification.algorithm", "want https, or empty to skip the host name check")
		}
	}
	if len(b.errs) > nerr {
		return nil
	}
	return cfg
}

func verifyChain(cs tls.ConnectionState, roots *x509.CertPool) error {
	if len(cs.PeerCertificates) == 0 {
		return fmt.Errorf("the broker sent no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
	return err
}

// truststore returns the CAs of ssl.truststore.location or ssl.truststore.certificates; nil (the
// system's) without either.
func (b *builder) truststore() *x509.CertPool {
	typ, _ := b.value("ssl.truststore.type")
	loc, hasLoc := b.value("ssl.truststore.location")
	inline, hasInline := b.value("ssl.truststore.certificates")
	_, hasPass := b.value("ssl.truststore.password")
	if !hasLoc && !hasInline {
		return nil
	}
	key, data := b.storeData("ssl.truststore", typ, loc, hasLoc, inline, hasInline)
	if data == nil {
		return nil
	}
	if hasPass {
		b.warn("ssl.truststore.password", "ignored: a PEM trust store has no password")
	}
	pool := x509.NewCertPool()
	n := 0
	for rest := data; ; {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			b.fail(key, "a certificate does not parse: "+err.Error())
			return nil
		}
		pool.AddCert(c)
		n++
	}
	if n == 0 {
		b.fail(key, "no PEM certificate (-----BEGIN CERTIFICATE-----) found")
		return nil
	}
	return pool
}

// keystore returns the client certificate of ssl.keystore.location (a PEM file with the private
// key and the certificate chain) or of ssl.keystore.key and ssl.keystore.certificate.chain.
func (b *builder) keystore() *tls.Certificate {
	typ, _ := b.value("ssl.keystore.type")
	loc, hasLoc := b.value("ssl.keystore.location")
	key, hasKey := b.value("ssl.keystore.key")
	chain, hasChain := b.value("ssl.keystore.certificate.chain")
	b.value("ssl.keystore.password") // Kafka's for JKS/PKCS12; a PEM keystore uses ssl.key.password
	keyPass, hasKeyPass := b.value("ssl.key.password")
	var data []byte
	var which string
	switch {
	case hasLoc:
		which, data = b.storeData("ssl.keystore", typ, loc, true, "", false)
	case hasKey || hasChain:
		if !hasKey || !hasChain {
			b.errs = append(b.errs, fmt.Errorf("ssl.keystore.key and ssl.keystore.certificate.chain go together: set both or neither"))
			return nil
		}
		which, data = "ssl.keystore.key", []byte(key+"\n"+chain)
	default:
		return nil
	}
	if data == nil {
		return nil
	}
	if bytes.Contains(data, []byte("ENCRYPTED")) {
		msg := "the private key is encrypted, which this worker cannot read; decrypt it (openssl pkcs8 -in key.pem -out key-plain.pem) and protect the file instead"
		if hasKeyPass && keyPass != "" {
			b.fail("ssl.key.password", msg)
		} else {
			b.fail(which, msg)
		}
		return nil
	}
	cert, err := tls.X509KeyPair(data, data)
	if err != nil {
		b.fail(which, "want a PEM private key and certificate chain: "+err.Error())
		return nil
	}
	return &cert
}

// storeData returns a store's PEM bytes, and the key to name in errors about them; nil data after
// an error. prefix is ssl.truststore or ssl.keystore.
func (b *builder) storeData(prefix, typ, loc string, hasLoc bool, inline string, hasInline bool) (string, []byte) {
	typ = strings.ToUpper(typ)
	if hasInline {
		return prefix + ".certificates", []byte(inline)
	}
	key := prefix + ".location"
	data, err := os.ReadFile(loc)
	if err != nil {
		b.fail(key, err.Error())
		return key, nil
	}
	isPEM := bytes.Contains(data, []byte("-----BEGIN "))
	switch {
	case typ == "PEM" && isPEM, typ == "" && isPEM:
		return key, data
	case typ == "PEM":
		b.fail(key, "ssl.*.type=PEM but the file holds no PEM block")
	case typ == "" || typ == "JKS" || typ == "PKCS12":
		if typ == "" {
			typ = "JKS (Kafka's default type)"
		}
		convert := "keytool -exportcert -rfc -alias <alias> -keystore " + loc + " > ca.pem"
		if prefix == "ssl.keystore" {
			convert = "openssl pkcs12 -in store.p12 -nodes -out client.pem (after keytool -importkeystore -srcstoretype JKS -deststoretype PKCS12 for JKS)"
		}
		b.fail(key, fmt.Sprintf("a %s store cannot be read: give PEM files with %s.type=PEM; convert with %s", typ, prefix, convert))
	default:
		b.fail(prefix+".type", "want PEM (JKS and PKCS12 stores must be converted to PEM)")
	}
	return key, nil
}

var tlsVersions = map[string]uint16{"TLSv1.2": tls.VersionTLS12, "TLSv1.3": tls.VersionTLS13}

// versions applies ssl.enabled.protocols (and ssl.protocol when that is unset).
func (b *builder) versions(cfg *tls.Config) {
	proto, hasProto := b.value("ssl.protocol")
	if hasProto && proto != "TLS" && tlsVersions[proto] == 0 {
		b.fail("ssl.protocol", "want TLSv1.2, TLSv1.3 or TLS")
		return
	}
	list, ok := b.value("ssl.enabled.protocols")
	if !ok {
		if proto == "TLSv1.2" {
			cfg.MaxVersion = tls.VersionTLS12
		}
		return
	}
	var lo, hi uint16
	for _, p := range strings.Split(list, ",") {
		v := tlsVersions[strings.TrimSpace(p)]
		if v == 0 {
			b.fail("ssl.enabled.protocols", fmt.Sprintf("%q is not supported: want TLSv1.2 and/or TLSv1.3", strings.TrimSpace(p)))
			return
		}
		if lo == 0 || v < lo {
			lo = v
		}
		hi = max(hi, v)
	}
	cfg.MinVersion, cfg.MaxVersion = lo, hi
}

// ciphers applies ssl.cipher.suites, whose IANA names Go uses too (for TLS 1.2; Go chooses the
// TLS 1.3 suites itself).
func (b *builder) ciphers(cfg *tls.Config) {
	list, ok := b.value("ssl.cipher.suites")
	if !ok || list == "" {
		return
	}
	byName := map[string]uint16{}
	for _, c := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		byName[c.Name] = c.ID
	}
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if strings.HasPrefix(n, "TLS_AES_") || strings.HasPrefix(n, "TLS_CHACHA20_") {
			continue // TLS 1.3 suites are not configurable in Go
		}
		id, ok := byName[n]
		if !ok {
			b.fail("ssl.cipher.suites", fmt.Sprintf("unknown cipher suite %q", n))
			return
		}
		cfg.CipherSuites = append(cfg.CipherSuites, id)
	}
}

// dialTimeout is socket.connection.setup.timeout.ms (franz-go's 10 s by default), which a custom
// dialer must apply itself.
func (b *builder) dialTimeout() time.Duration {
	if n, err := strconv.Atoi(strings.TrimSpace(b.s["socket.connection.setup.timeout.ms"].Value)); err == nil && n > 0 {
		return time.Duration(n) * time.Millisecond
	}
	return 10 * time.Second
}

// tlsDialer dials a broker and does the TLS handshake with cfg, as franz-go's DialTLSConfig does
// (the server name is the broker's host), but tells a broker that took the connection and then
// did not do TLS (a plaintext listener waits for the rest of what it reads as a request, or
// closes the connection) from one that is unreachable: a *NoTLSError, which FailFast reports.
func tlsDialer(cfg *tls.Config, timeout time.Duration) func(ctx context.Context, network, host string) (net.Conn, error) {
	return func(ctx context.Context, network, host string) (net.Conn, error) {
		raw, err := (&net.Dialer{Timeout: timeout}).DialContext(ctx, network, host)
		if err != nil {
			return nil, err
		}
		c := cfg.Clone()
		if c.ServerName == "" {
			if h, _, err := net.SplitHostPort(host); err == nil {
				c.ServerName = h
			}
		}
		conn := tls.Client(raw, c)
		hctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		if err := conn.HandshakeContext(hctx); err != nil {
			raw.Close()
			if hctx.Err() != nil || errors.Is(err, io.EOF) {
				return nil, &NoTLSError{Addr: host, Err: err}
			}
			return nil, err
		}
		return conn, nil
	}
}

// NoTLSError is a broker that accepted the connection but did not complete a TLS handshake.
type NoTLSError struct {
	Addr string
	Err  error
}

func (e *NoTLSError) Error() string {
	return fmt.Sprintf("TLS to broker %s: the broker took the connection but did not do the TLS handshake (%v); is its listener TLS? check security.protocol", e.Addr, e.Err)
}

func (e *NoTLSError) Unwrap() error { return e.Err }
