package kafkaclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// FailFast returns a context derived from ctx and an option for a start-up client: the context
// is cancelled, with an error naming the setting at fault as its cause (context.Cause), at the
// first failure that retrying cannot cure: the broker refused the SASL credentials, or the TLS
// handshake failed. franz-go retries both like a lost connection, so without this a worker with a
// wrong password would wait for its timeout and then say only that Kafka is unreachable.
//
// Call cancel when done, as with context.WithCancel.
func FailFast(ctx context.Context, auth Auth) (_ context.Context, _ kgo.Opt, cancel func()) {
	ctx, cancelCause := context.WithCancelCause(ctx)
	h := &failFast{auth: auth, cancel: cancelCause}
	return ctx, kgo.WithHooks(h), func() { cancelCause(nil) }
}

type failFast struct {
	auth   Auth
	cancel context.CancelCauseFunc
}

// OnBrokerE2E sees a SASLAuthenticate the broker answered by closing the connection (what kfake
// does with a wrong password), and TLS alerts read after the handshake (a refused client
// certificate, with TLS 1.3).
func (f *failFast) OnBrokerE2E(meta kgo.BrokerMetadata, key int16, e2e kgo.BrokerE2E) {
	err := e2e.Err()
	if err == nil {
		return
	}
	if key == int16(kmsg.SASLAuthenticate) && f.auth.Mechanism != "" {
		f.cancel(f.saslErr(meta, err))
		return
	}
	if cause := f.tlsErr(meta, err); cause != nil {
		f.cancel(cause)
	}
}

// OnBrokerConnect sees the errors of a dial and of the connection's set-up (ApiVersions, SASL):
// a SASL error code from the broker (what Apache Kafka answers), and TLS handshake failures.
func (f *failFast) OnBrokerConnect(meta kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if err == nil {
		return
	}
	if errors.Is(err, kerr.SaslAuthenticationFailed) || errors.Is(err, kerr.IllegalSaslState) || errors.Is(err, kerr.UnsupportedSaslMechanism) {
		f.cancel(f.saslErr(meta, err))
		return
	}
	if cause := f.tlsErr(meta, err); cause != nil {
		f.cancel(cause)
	}
}

func (f *failFast) saslErr(meta kgo.BrokerMetadata, err error) error {
	a := f.auth
	return fmt.Errorf("sasl.mechanism %s: authentication failed for user %q at broker %s; check the credentials in %s, and that the listener takes SASL (security.protocol) (%v)",
		a.Mechanism, a.User, addr(meta), a.JAASKey, err)
}

// tlsErr says which ssl.* setting a TLS failure points to; nil for other errors.
func (f *failFast) tlsErr(meta kgo.BrokerMetadata, err error) error {
	var (
		unknownCA x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		header    tls.RecordHeaderError
	)
	var noTLS *NoTLSError
	switch {
	case errors.As(err, &noTLS):
		return noTLS
	case errors.As(err, &unknownCA):
		return fmt.Errorf("TLS to broker %s: its certificate is not signed by a CA in ssl.truststore.location/ssl.truststore.certificates (or the system's, without either): %v", addr(meta), err)
	case errors.As(err, &hostname):
		return fmt.Errorf("TLS to broker %s: its certificate is not for that host name (set ssl.endpoint.identification.algorithm= to skip the check): %v", addr(meta), err)
	case errors.As(err, &invalid):
		return fmt.Errorf("TLS to broker %s: its certificate is not valid: %v", addr(meta), err)
	case errors.As(err, &header):
		return fmt.Errorf("TLS to broker %s: the broker does not speak TLS; check security.protocol: %v", addr(meta), err)
	case strings.Contains(err.Error(), "remote error: tls:"):
		return fmt.Errorf("TLS to broker %s: the broker refused the handshake, often for a missing or untrusted client certificate (ssl.keystore.location, or ssl.keystore.key and ssl.keystore.certificate.chain): %v", addr(meta), err)
	}
	return nil
}

// Cause returns the failure FailFast saw on ctx, if any, else err: a request that failed because
// FailFast cancelled its context reports why.
func Cause(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
		return cause
	}
	return err
}

func addr(meta kgo.BrokerMetadata) string {
	return net.JoinHostPort(meta.Host, fmt.Sprint(meta.Port))
}
