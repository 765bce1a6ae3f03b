package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/wasmconnect/wasmconnect/runtime/broker"
)

func runBroker(ctx context.Context, args []string) error {
	fs := newFlags("broker")
	listen := fs.String("listen", "127.0.0.1:9092", "host:port to listen on (a concrete address: it is advertised to clients)")
	dataDir := fs.String("data-dir", "", "directory to persist topics and groups to (empty: memory only)")
	var users saslUsers
	fs.Var(&users, "sasl-user", "user:password[:mechanism] clients must authenticate as (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512; all three when omitted); repeatable")
	usersFile := fs.String("sasl-users-file", "", "file of user:password[:mechanism] lines, as --sasl-user (keeps passwords off the command line)")
	tlsCert := fs.String("tls-cert", "", "PEM certificate (chain) of the broker: the listener speaks TLS only")
	tlsKey := fs.String("tls-key", "", "PEM private key of --tls-cert")
	clientCA := fs.String("tls-client-ca", "", "PEM CA certificates: clients must present a certificate signed by one (mutual TLS)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *usersFile != "" {
		if err := users.readFile(*usersFile); err != nil {
			return err
		}
	}
	tlsCfg, err := brokerTLS(*tlsCert, *tlsKey, *clientCA)
	if err != nil {
		return err
	}
	log := newLogger("text")
	b, err := broker.Start(broker.Config{Listen: *listen, DataDir: *dataDir, Logger: log, SASLUsers: users, TLS: tlsCfg})
	if err != nil {
		return err
	}
	defer b.Close()
	fmt.Printf("broker listening on %s (cluster id %s, security.protocol %s)\n", b.Addr(), b.ClusterID(), protocol(len(users) > 0, tlsCfg != nil))
	<-ctx.Done()
	log.Info("broker stopping")
	return nil
}

// protocol is the security.protocol clients of the broker need.
func protocol(sasl, tls bool) string {
	switch {
	case sasl && tls:
		return "SASL_SSL"
	case sasl:
		return "SASL_PLAINTEXT"
	case tls:
		return "SSL"
	}
	return "PLAINTEXT"
}

// saslUsers is the repeatable --sasl-user flag.
type saslUsers []broker.SASLUser

var _ flag.Value = (*saslUsers)(nil)

func (u *saslUsers) String() string {
	names := make([]string, len(*u))
	for i, x := range *u {
		names[i] = x.User
	}
	return strings.Join(names, ",")
}

func (u *saslUsers) Set(s string) error {
	x, err := broker.ParseSASLUser(s)
	if err != nil {
		return err
	}
	*u = append(*u, x)
	return nil
}

func (u *saslUsers) readFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--sasl-users-file: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := u.Set(line); err != nil {
			return fmt.Errorf("--sasl-users-file %s line %d: %w", path, n, err)
		}
	}
	return nil
}

// brokerTLS is the listener's TLS configuration from the --tls-* flags; nil without them.
func brokerTLS(certFile, keyFile, clientCAFile string) (*tls.Config, error) {
	if certFile == "" && keyFile == "" {
		if clientCAFile != "" {
			return nil, fmt.Errorf("--tls-client-ca needs --tls-cert and --tls-key: client certificates are checked over TLS")
		}
		return nil, nil
	}
	if certFile == "" || keyFile == "" {
		return nil, fmt.Errorf("--tls-cert and --tls-key go together: set both")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert %s / --tls-key %s: %w", certFile, keyFile, err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if clientCAFile != "" {
		pem, err := os.ReadFile(clientCAFile)
		if err != nil {
			return nil, fmt.Errorf("--tls-client-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-client-ca %s: no PEM certificate found", clientCAFile)
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}
