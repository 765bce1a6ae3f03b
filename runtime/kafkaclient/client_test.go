package kafkaclient

import (
	"context"
	"crypto/tls"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/wasmconnect/wasmconnect/runtime/broker"
	"github.com/wasmconnect/wasmconnect/runtime/config"
	"github.com/wasmconnect/wasmconnect/runtime/kafkaclient/testpki"
)

// secureBroker starts an embedded broker with TLS (client certificates required when mutual) and,
// when users are given, SASL; it returns its address and the CA that signed every certificate.
func secureBroker(t *testing.T, mutual bool, users ...broker.SASLUser) (string, *testpki.CA) {
	return secureBrokerFor(t, []string{"127.0.0.1", "localhost"}, mutual, users...)
}

// secureBrokerFor is secureBroker with a broker certificate for hosts.
func secureBrokerFor(t *testing.T, hosts []string, mutual bool, users ...broker.SASLUser) (string, *testpki.CA) {
	t.Helper()
	ca, err := testpki.NewCA(t.TempDir(), "test-ca")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ca.Server("broker", hosts...)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{srv.TLS}}
	if mutual {
		cfg.ClientAuth, cfg.ClientCAs = tls.RequireAndVerifyClientCert, ca.Pool()
	}
	b, err := broker.Start(broker.Config{TLS: cfg, SASLUsers: users})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b.Addr(), ca
}

// probe builds a client from props and asks the broker for metadata, failing fast as start-up does.
func probe(t *testing.T, props map[string]string) error {
	t.Helper()
	return probeAs(t, Internal, props)
}

// probeAs is probe with a client of the role.
func probeAs(t *testing.T, role Role, props map[string]string) error {
	t.Helper()
	c, err := Build(ForWorker(config.ParseKafka(props), role), role)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ctx, watch, stop := FailFast(ctx, c.Auth)
	defer stop()
	cl, err := kgo.NewClient(append(c.Opts, watch)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).BrokerMetadata(ctx); err != nil {
		return Cause(ctx, err)
	}
	return nil
}

func TestSASLSSLWithScram(t *testing.T) {
	addr, ca := secureBroker(t, false, broker.SASLUser{Mechanism: "SCRAM-SHA-512", User: "connect", Password: "connect-secret"})
	props := map[string]string{
		"bootstrap.servers":       addr,
		"security.protocol":       "SASL_SSL",
		"sasl.mechanism":          "SCRAM-SHA-512",
		"sasl.jaas.config":        `org.apache.kafka.common.security.scram.ScramLoginModule required username="connect" password="connect-secret";`,
		"ssl.truststore.type":     "PEM",
		"ssl.truststore.location": ca.CertFile,
	}
	if err := probe(t, props); err != nil {
		t.Fatalf("right credentials: %v", err)
	}

	props["sasl.jaas.config"] = `org.apache.kafka.common.security.scram.ScramLoginModule required username="connect" password="wrong";`
	start := time.Now()
	err := probe(t, props)
	if err == nil || !strings.Contains(err.Error(), "sasl.mechanism SCRAM-SHA-512: authentication failed for user \"connect\"") ||
		!strings.Contains(err.Error(), "sasl.jaas.config") {
		t.Fatalf("wrong password: %v, want an error naming the mechanism, the user and sasl.jaas.config", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("wrong password reported after %v, want within 5s", took)
	}
	if strings.Contains(err.Error(), "wrong") {
		t.Errorf("the error shows the password: %v", err)
	}

	// A client without TLS gets nowhere either; the error says to check security.protocol
	// rather than hanging.
	props["security.protocol"] = "SASL_PLAINTEXT"
	props["sasl.jaas.config"] = `org.apache.kafka.common.security.scram.ScramLoginModule required username="connect" password="connect-secret";`
	delete(props, "ssl.truststore.type")
	delete(props, "ssl.truststore.location")
	if err := probe(t, props); err == nil {
		t.Fatal("plaintext to a TLS listener succeeded")
	}
}

func TestMutualTLS(t *testing.T) {
	addr, ca := secureBroker(t, true)
	client, err := ca.Client("connect")
	if err != nil {
		t.Fatal(err)
	}
	props := map[string]string{
		"bootstrap.servers":       addr,
		"security.protocol":       "SSL",
		"ssl.truststore.type":     "PEM",
		"ssl.truststore.location": ca.CertFile,
		"ssl.keystore.type":       "PEM",
		"ssl.keystore.location":   client.BundleFile,
	}
	if err := probe(t, props); err != nil {
		t.Fatalf("with a client certificate: %v", err)
	}
	// Inline PEM, as Kafka's ssl.keystore.key and ssl.keystore.certificate.chain take it.
	key, _ := os.ReadFile(client.KeyFile)
	chain, _ := os.ReadFile(client.CertFile)
	delete(props, "ssl.keystore.location")
	props["ssl.keystore.key"], props["ssl.keystore.certificate.chain"] = string(key), string(chain)
	if err := probe(t, props); err != nil {
		t.Fatalf("with an inline client certificate: %v", err)
	}

	delete(props, "ssl.keystore.key")
	delete(props, "ssl.keystore.certificate.chain")
	start := time.Now()
	if err := probe(t, props); err == nil || !strings.Contains(err.Error(), "client certificate") {
		t.Fatalf("without a client certificate: %v, want an error about the client certificate", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("missing client certificate reported after %v, want within 5s", took)
	}

	other, err := testpki.NewCA(t.TempDir(), "other-ca")
	if err != nil {
		t.Fatal(err)
	}
	props["ssl.truststore.location"] = other.CertFile
	props["ssl.keystore.location"] = client.BundleFile
	if err := probe(t, props); err == nil || !strings.Contains(err.Error(), "ssl.truststore.location") {
		t.Fatalf("untrusted broker certificate: %v, want an error naming ssl.truststore.location", err)
	}
}

func TestSecuritySettingErrors(t *testing.T) {
	dir := t.TempDir()
	jks := filepath.Join(dir, "kafka.client.truststore.jks")
	os.WriteFile(jks, []byte{0xfe, 0xed, 0xfe, 0xed, 0, 0, 0, 2}, 0o644)
	for _, tc := range []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{"security.protocol": "TLS"}, `invalid value "TLS" for security.protocol`},
		{map[string]string{"security.protocol": "SASL_SSL"}, "GSSAPI (Kerberos), is not supported"},
		{map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-256"}, "needs sasl.jaas.config"},
		{map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
			"sasl.jaas.config": `org.apache.kafka.common.security.scram.ScramLoginModule required username="a" password="secret";`}, "login module org.apache.kafka.common.security.scram.ScramLoginModule does not do sasl.mechanism=PLAIN"},
		{map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
			"sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="a" password="secret"`}, "sasl.jaas.config: entry for"},
		{map[string]string{"security.protocol": "SSL", "ssl.truststore.location": jks, "ssl.truststore.password": "changeit"},
			"a JKS (Kafka's default type) store cannot be read: give PEM files with ssl.truststore.type=PEM"},
		{map[string]string{"security.protocol": "SSL", "ssl.truststore.location": jks, "ssl.truststore.type": "PKCS12"}, "a PKCS12 store cannot be read"},
		{map[string]string{"security.protocol": "SSL", "ssl.keystore.key": "x"}, "ssl.keystore.key and ssl.keystore.certificate.chain go together"},
		{map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER",
			"sasl.jaas.config": `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;`}, "set sasl.oauthbearer.token.endpoint.url=file:///path/to/token"},
	} {
		_, err := Build(ForWorker(config.ParseKafka(tc.props), Internal), Internal)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error with %q", tc.props, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%v: the error shows the password: %v", tc.props, err)
		}
	}
}

func TestOAuthBearerTokenFile(t *testing.T) {
	tok := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tok, []byte("eyJhbGciOiJub25lIn0.e30.\n"), 0o600)
	b := &builder{s: ForWorker(config.ParseKafka(map[string]string{
		"security.protocol":                   "SASL_SSL",
		"sasl.mechanism":                      "OAUTHBEARER",
		"sasl.jaas.config":                    `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required extension_cluster="lkc-1";`,
		"sasl.oauthbearer.token.endpoint.url": "file://" + tok,
		"sasl.login.callback.handler.class":   "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
	}), Internal), used: map[string]bool{}, c: &Client{}}
	b.c.Auth.Protocol = "SASL_SSL"
	m := b.sasl()
	if m == nil || len(b.errs) > 0 {
		t.Fatalf("no mechanism: %v", b.errs)
	}
	_, first, err := m.Authenticate(context.Background(), "127.0.0.1:9092")
	if err != nil {
		t.Fatal(err)
	}
	if len(b.c.Warnings) > 0 {
		t.Errorf("warnings about Kafka's own OAUTHBEARER settings: %q", b.c.Warnings)
	}
	if s := string(first); !strings.Contains(s, "auth=Bearer eyJhbGciOiJub25lIn0.e30.\x01") || !strings.Contains(s, "cluster=lkc-1") {
		t.Fatalf("first message %q lacks the token from the file or the extension", s)
	}
}

func TestProducerSettings(t *testing.T) {
	for _, tc := range []struct {
		props    map[string]string
		err      string // "" = no error
		warnings []string
	}{
		{props: map[string]string{"producer.acks": "1"}},
		{props: map[string]string{"producer.acks": "1", "producer.enable.idempotence": "true"}, err: "enable.idempotence=true requires acks=all"},
		{props: map[string]string{"producer.acks": "most"}, err: `invalid value "most" for producer.acks`},
		{props: map[string]string{"producer.compression.type": "brotli"}, err: `invalid value "brotli" for producer.compression.type`},
		{props: map[string]string{"producer.linger.ms": "soon"}, err: `invalid value "soon" for producer.linger.ms: not an integer`},
		{props: map[string]string{"producer.max.in.flight.requests.per.connection": "10"}, err: "must be at most 5 with idempotence"},
		{props: map[string]string{"producer.max.in.flight.requests.per.connection": "10", "producer.enable.idempotence": "false"}},
		{props: map[string]string{"producer.batch.size": "16384"},
			warnings: []string{"producer.batch.size=16384: franz-go fills a batch up to the largest record it may send (max.request.size, 1000012 bytes); linger.ms bounds the wait"}},
		{props: map[string]string{"producer.batch.size": "2000000", "producer.max.request.size": "1048576"}},
		{props: map[string]string{"producer.partitioner.class": "org.apache.kafka.clients.producer.RoundRobinPartitioner", "producer.key.serializer": "x"},
			warnings: []string{
				"producer.key.serializer=x: ignored: records are sent as the bytes the converters produced",
				"producer.partitioner.class=org.apache.kafka.clients.producer.RoundRobinPartitioner: ignored: franz-go has no equivalent setting",
			}},
		{props: map[string]string{"producer.ssl.truststore.location": "/nowhere"},
			warnings: []string{"producer.ssl.truststore.location=/nowhere: ignored: security.protocol=PLAINTEXT does not use it"}},
	} {
		c, err := Build(ForWorker(config.ParseKafka(tc.props), Producer), Producer)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: error %v, want %q", tc.props, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", tc.props, err)
			continue
		}
		if _, err := kgo.NewClient(c.Opts...); err != nil {
			t.Errorf("%v: franz-go refuses the options: %v", tc.props, err)
		}
		if !slices.Equal(c.Warnings, tc.warnings) {
			t.Errorf("%v: warnings %q, want %q", tc.props, c.Warnings, tc.warnings)
		}
	}
}

// TestClientSettingsReachTheClient checks, through a real client, that worker producer.* and
// consumer.* keys and a connector's overrides become franz-go settings, and which layer wins.
func TestClientSettingsReachTheClient(t *testing.T) {
	worker := map[string]string{
		"bootstrap.servers": "127.0.0.1:1", "producer.linger.ms": "250", "producer.acks": "1",
		"producer.compression.type": "gzip", "consumer.fetch.max.bytes": "1234", "consumer.isolation.level": "read_committed",
		"consumer.max.poll.records": "7", "linger.ms": "999", // a top-level client key is the worker's, not the tasks'
	}
	connector := map[string]string{"producer.override.linger.ms": "40", "consumer.override.fetch.max.wait.ms": "321"}

	p, err := Build(ForWorker(config.ParseKafka(worker), Producer).WithOverrides(connector, Producer), Producer)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(p.Opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if got := cl.OptValue(kgo.ProducerLinger); got != 40*time.Millisecond {
		t.Errorf("linger %v, want the connector's 40ms", got)
	}
	if got := cl.OptValue(kgo.RequiredAcks); got != kgo.LeaderAck() {
		t.Errorf("acks %v, want the worker's 1", got)
	}
	if got := cl.OptValue(kgo.DisableIdempotentWrite); got != true {
		t.Errorf("idempotence not disabled with acks=1")
	}
	if got := cl.OptValue(kgo.ProducerBatchCompression).([]kgo.CompressionCodec); len(got) != 1 || got[0] != kgo.GzipCompression() {
		t.Errorf("compression %v, want gzip", got)
	}

	c, err := Build(ForWorker(config.ParseKafka(worker), Consumer).WithOverrides(connector, Consumer), Consumer)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := kgo.NewClient(c.Opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	if got := cc.OptValue(kgo.FetchMaxBytes); got != int32(1234) {
		t.Errorf("fetch max bytes %v, want 1234", got)
	}
	if got := cc.OptValue(kgo.FetchMaxWait); got != 321*time.Millisecond {
		t.Errorf("fetch max wait %v, want the connector's 321ms", got)
	}
	if got := cc.OptValue(kgo.FetchIsolationLevel); got != int8(1) { // read_committed
		t.Errorf("isolation level %v, want read_committed", got)
	}
	if c.MaxPollRecords != 7 {
		t.Errorf("max poll records %d, want 7", c.MaxPollRecords)
	}
}

func TestPolicy(t *testing.T) {
	cfg := map[string]string{
		"producer.override.compression.type": "zstd", "producer.override.sasl.jaas.config": "x",
		"consumer.override.max.poll.records": "10", "name": "c",
	}
	none, err := ParsePolicy("None")
	if err != nil {
		t.Fatal(err)
	}
	got := none.Refusals(cfg, Roles...)
	if len(got) != 3 || got["producer.override.compression.type"] != "The 'None' policy does not allow 'compression.type' to be overridden in the connector configuration." {
		t.Errorf("None refusals %v", got)
	}
	principal, _ := ParsePolicy("org.apache.kafka.connect.connector.policy.PrincipalConnectorClientConfigOverridePolicy")
	if got := principal.Refusals(cfg, Roles...); len(got) != 2 || got["producer.override.sasl.jaas.config"] != "" {
		t.Errorf("Principal refusals %v", got)
	}
	all, _ := ParsePolicy("")
	if got := all.Refusals(cfg, Roles...); len(got) != 0 {
		t.Errorf("All (the default) refusals %v", got)
	}
	if _, err := ParsePolicy("Some"); err == nil || !strings.Contains(err.Error(), "connector.client.config.override.policy") {
		t.Errorf("bad policy: %v", err)
	}
}

// TestWorkerWarnings checks what a worker learns at start about its client keys: each key with
// no franz-go equivalent is a warning naming it as written, a bad value stops the worker.
func TestWorkerWarnings(t *testing.T) {
	c, err := NewClients(config.ParseKafka(map[string]string{
		"bootstrap.servers":                       "127.0.0.1:9092",
		"producer.linger.ms":                      "5",
		"producer.max.block.ms":                   "60000",
		"consumer.enable.auto.commit":             "true",
		"admin.default.api.timeout.ms":            "1000",
		"security.protocol":                       "SSL",
		"ssl.keymanager.algorithm":                "SunX509",
		"group.id":                                "connect-cluster", // the worker's own key, not a client's
		"connector.client.config.override.policy": "Principal",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"ssl.keymanager.algorithm=SunX509: ignored: franz-go has no equivalent setting",
		"producer.max.block.ms=60000: ignored: franz-go has no equivalent setting",
		"consumer.enable.auto.commit=true: ignored: a sink task commits its offsets itself, after the plugin has flushed them",
		"admin.default.api.timeout.ms=1000: ignored: franz-go has no equivalent setting",
	}
	if !slices.Equal(c.Warnings, want) {
		t.Errorf("warnings\n%q\nwant\n%q", c.Warnings, want)
	}
	if c.Policy != PolicyPrincipal {
		t.Errorf("policy %q", c.Policy)
	}
	_, err = NewClients(config.ParseKafka(map[string]string{"producer.acks": "2", "consumer.isolation.level": "dirty", PolicyKey: "Any", "security.protocol": "SSH"}))
	if n := strings.Count(err.Error(), "SSH"); n != 1 {
		t.Errorf("a bad top-level key inherited by every client is reported %d times, want once: %v", n, err)
	}
	for _, want := range []string{`invalid value "2" for producer.acks`, `invalid value "dirty" for consumer.isolation.level`, `invalid value "Any" for connector.client.config.override.policy`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("bad worker settings: %v, want %q", err, want)
		}
	}
}

// clients returns a worker's clients with the policy, failing the test on a bad setting.
func clients(t *testing.T, props map[string]string, policy Policy) *Clients {
	t.Helper()
	k := config.ParseKafka(props)
	k.OverridePolicy = string(policy)
	c, err := NewClients(k)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestOverrideErrors(t *testing.T) {
	cfg := map[string]string{"producer.override.compression.type": "zstd", "producer.override.acks": "2"}
	got := clients(t, nil, PolicyNone).OverrideErrors(cfg, Producer)
	if len(got) != 2 || !strings.Contains(got["producer.override.compression.type"][0], "'None' policy") {
		t.Errorf("None: %v", got)
	}
	got = clients(t, nil, PolicyAll).OverrideErrors(cfg, Producer)
	if len(got) != 1 || !strings.Contains(got["producer.override.acks"][0], `invalid value "2" for producer.override.acks`) {
		t.Errorf("All: %v", got)
	}
	if got := clients(t, map[string]string{"producer.acks": "1"}, PolicyAll).OverrideErrors(nil, Producer); len(got) != 0 {
		t.Errorf("a connector without overrides: %v", got)
	}
}

// TestLayers checks which keys each client gets: the top-level connection keys for all, the
// role's prefixed keys over them, a connector's overrides last; other top-level keys are the
// worker's own.
func TestLayers(t *testing.T) {
	worker := map[string]string{
		"bootstrap.servers": "b:9092", "security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
		"consumer.sasl.mechanism": "SCRAM-SHA-256", "session.timeout.ms": "10000", "producer.acks": "1",
	}
	connector := map[string]string{"consumer.override.sasl.mechanism": "SCRAM-SHA-512", "producer.override.acks": "0"}
	for _, tc := range []struct {
		s    Settings
		want Settings
	}{
		{ForWorker(config.ParseKafka(worker), Internal), Settings{
			"bootstrap.servers": {"b:9092", "bootstrap.servers"}, "security.protocol": {"SASL_SSL", "security.protocol"},
			"sasl.mechanism": {"PLAIN", "sasl.mechanism"}}},
		{ForWorker(config.ParseKafka(worker), Consumer), Settings{
			"bootstrap.servers": {"b:9092", "bootstrap.servers"}, "security.protocol": {"SASL_SSL", "security.protocol"},
			"sasl.mechanism": {"SCRAM-SHA-256", "consumer.sasl.mechanism"}}},
		{ForWorker(config.ParseKafka(worker), Consumer).WithOverrides(connector, Consumer), Settings{
			"bootstrap.servers": {"b:9092", "bootstrap.servers"}, "security.protocol": {"SASL_SSL", "security.protocol"},
			"sasl.mechanism": {"SCRAM-SHA-512", "consumer.override.sasl.mechanism"}}},
		{ForWorker(config.ParseKafka(worker), Producer).WithOverrides(connector, Producer), Settings{
			"bootstrap.servers": {"b:9092", "bootstrap.servers"}, "security.protocol": {"SASL_SSL", "security.protocol"},
			"sasl.mechanism": {"PLAIN", "sasl.mechanism"}, "acks": {"0", "producer.override.acks"}}},
	} {
		if !maps.Equal(tc.s, tc.want) {
			t.Errorf("settings %v, want %v", tc.s, tc.want)
		}
	}
}

func TestSASLPlaintextWithPlain(t *testing.T) {
	b, err := broker.Start(broker.Config{SASLUsers: []broker.SASLUser{{User: "alice", Password: "alice-secret"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	props := map[string]string{
		"bootstrap.servers": b.Addr(),
		"security.protocol": "SASL_PLAINTEXT",
		"sasl.mechanism":    "PLAIN",
		"sasl.jaas.config":  `org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="alice-secret";`,
	}
	if err := probe(t, props); err != nil {
		t.Fatalf("PLAIN: %v", err)
	}
	props["sasl.mechanism"] = "SCRAM-SHA-256"
	props["sasl.jaas.config"] = `org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="alice-secret";`
	if err := probe(t, props); err != nil {
		t.Fatalf("SCRAM-SHA-256: %v", err)
	}
	props["sasl.jaas.config"] = `org.apache.kafka.common.security.scram.ScramLoginModule required username="mallory" password="x";`
	if err := probe(t, props); err == nil || !strings.Contains(err.Error(), `sasl.mechanism SCRAM-SHA-256: authentication failed for user "mallory"`) {
		t.Fatalf("unknown user: %v", err)
	}
	delete(props, "sasl.mechanism")
	delete(props, "sasl.jaas.config")
	props["security.protocol"] = "PLAINTEXT"
	if err := probe(t, props); err == nil {
		t.Fatal("no SASL to a SASL broker succeeded")
	}
}

// TestTLSToAPlaintextListener: a client speaking TLS to a plaintext listener is told so within
// its dial timeout, not left retrying.
func TestTLSToAPlaintextListener(t *testing.T) {
	b, err := broker.Start(broker.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	start := time.Now()
	err = probeAs(t, Producer, map[string]string{"bootstrap.servers": b.Addr(), "security.protocol": "SSL", "producer.socket.connection.setup.timeout.ms": "2000"})
	if err == nil || !strings.Contains(err.Error(), "did not do the TLS handshake") || !strings.Contains(err.Error(), "security.protocol") {
		t.Fatalf("TLS to a plaintext listener: %v, want an error saying the broker does not do TLS", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("reported after %v, want within the 2s dial timeout", took)
	}
}

func TestEndpointIdentification(t *testing.T) {
	addr, ca := secureBrokerFor(t, []string{"broker.example"}, false)
	props := map[string]string{
		"bootstrap.servers":       addr,
		"security.protocol":       "SSL",
		"ssl.truststore.location": ca.CertFile, // PEM, the type left at Kafka's default
	}
	if err := probe(t, props); err == nil || !strings.Contains(err.Error(), "ssl.endpoint.identification.algorithm") {
		t.Fatalf("certificate for another host: %v, want an error naming ssl.endpoint.identification.algorithm", err)
	}
	props["ssl.endpoint.identification.algorithm"] = ""
	if err := probe(t, props); err != nil {
		t.Fatalf("host name check off: %v", err)
	}
	other, _ := testpki.NewCA(t.TempDir(), "other")
	props["ssl.truststore.location"] = other.CertFile
	if err := probe(t, props); err == nil || !strings.Contains(err.Error(), "ssl.truststore") {
		t.Fatalf("host name check off, untrusted CA: %v, want the chain still verified", err)
	}
}
