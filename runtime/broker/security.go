package broker

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// SASLUser is a user the broker accepts with a SASL mechanism.
type SASLUser struct {
	// Mechanism is PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512; empty means all three.
	Mechanism string
	User      string
	Password  string
}

// Mechanisms are the SASL mechanisms the embedded broker supports.
var Mechanisms = []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}

// ParseSASLUser reads "user:password[:mechanism]", the form of the broker command's --sasl-user
// flag and of each line of its --sasl-users-file.
func ParseSASLUser(s string) (SASLUser, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" {
		return SASLUser{}, fmt.Errorf("SASL user %q: want user:password or user:password:mechanism", redact(s))
	}
	u := SASLUser{User: parts[0], Password: parts[1]}
	if len(parts) == 3 {
		u.Mechanism = strings.ToUpper(parts[2])
		if !contains(Mechanisms, u.Mechanism) {
			return SASLUser{}, fmt.Errorf("SASL user %q: mechanism %q: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", u.User, parts[2])
		}
	}
	return u, nil
}

func redact(s string) string {
	if i := strings.IndexByte(s, ':'); i >= 0 {
		return s[:i] + ":***"
	}
	return s
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// securityOpts are the kfake options for Config.SASLUsers and Config.TLS, and the options of the
// broker's own start-up client, which must get through them.
//
// That client authenticates as an internal SCRAM user whose random password never leaves the
// process, and, when the listener requires client certificates, with a throw-away certificate
// added to the trusted client CAs: nobody else holds its key.
func securityOpts(cfg Config) (client []kgo.Opt, opts []kfake.Opt, err error) {
	if len(cfg.SASLUsers) > 0 {
		opts = append(opts, kfake.EnableSASL())
		for _, u := range cfg.SASLUsers {
			mechs := Mechanisms
			if u.Mechanism != "" {
				mechs = []string{u.Mechanism}
			}
			for _, m := range mechs {
				opts = append(opts, kfake.Superuser(m, u.User, u.Password))
			}
		}
		pass := randomHex(32)
		opts = append(opts, kfake.Superuser("SCRAM-SHA-512", internalUser, pass))
		client = append(client, kgo.SASL(scram.Auth{User: internalUser, Pass: pass}.AsSha512Mechanism()))
	}
	if cfg.TLS != nil {
		srv := cfg.TLS.Clone()
		clientTLS := &tls.Config{InsecureSkipVerify: true} // it dials its own listener over loopback
		if srv.ClientAuth >= tls.VerifyClientCertIfGiven {
			cert, err := selfSigned()
			if err != nil {
				return nil, nil, fmt.Errorf("embedded broker: making its start-up client's certificate: %w", err)
			}
			pool := x509.NewCertPool()
			if srv.ClientCAs != nil {
				pool = srv.ClientCAs.Clone()
			}
			pool.AddCert(cert.Leaf)
			srv.ClientCAs = pool
			clientTLS.Certificates = []tls.Certificate{cert}
		}
		opts = append(opts, kfake.TLS(srv))
		client = append(client, kgo.DialTLSConfig(clientTLS))
	}
	return client, opts, nil
}

// internalUser is the SASL user of the broker's own start-up client.
const internalUser = "wasmconnect-broker-internal"

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// selfSigned makes a client certificate that is its own CA, valid for a day.
func selfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: internalUser},
		NotBefore:             time.Now().Add(-time.Minute),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

// saslFile is where kfake keeps its SASL users in a data directory, PLAIN passwords in clear.
const saslFile = "sasl.json"

// forgetSASL removes the SASL users an earlier run saved in dataDir. kfake would load them over
// the users it is started with, so a changed password would not take, a removed user would stay,
// and the broker's own start-up client (a new random password each run) would be locked out.
// The users given at start are the only ones; they are not kept on disk between runs.
func forgetSASL(dataDir string) error {
	if dataDir == "" {
		return nil
	}
	if err := os.Remove(filepath.Join(dataDir, saslFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("embedded broker: removing the SASL users of the last run: %w", err)
	}
	return nil
}
