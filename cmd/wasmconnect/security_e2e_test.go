//go:build e2e

package main

// End-to-end tests of production Kafka settings: a worker reaching a broker over SASL_SSL and
// mutual TLS from a connect-distributed.properties written as Kafka's documentation writes it,
// and connector client overrides that reach the batches written.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/wasmconnect/wasmconnect/runtime/kafkaclient/testpki"
)

// testCA makes a CA and a broker certificate for 127.0.0.1.
func testCA(t *testing.T) (*testpki.CA, *testpki.Issued) {
	t.Helper()
	ca, err := testpki.NewCA(t.TempDir(), "test-ca")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ca.Server("broker", "127.0.0.1", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	return ca, srv
}

// startSecureBroker starts a broker process with the given security flags.
func startSecureBroker(t *testing.T, flags ...string) string {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startProcess(t, "broker", append([]string{"broker", "--listen", addr, "--data-dir", t.TempDir()}, flags...)...)
	waitFor(t, 30*time.Second, "broker to listen", func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return addr
}

// startWorkerFile starts a worker on a properties file with the given text and the REST port
// the text's listeners use.
func startWorkerFile(t *testing.T, name, text string, port int) *worker {
	t.Helper()
	file := filepath.Join(t.TempDir(), "connect-distributed.properties")
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return &worker{process: startProcess(t, name, "worker", "--config", file), url: fmt.Sprintf("http://127.0.0.1:%d", port)}
}

// commonProps are the non-security lines of the tests' worker files.
func commonProps(addr string, port int, files string) string {
	return fmt.Sprintf(`bootstrap.servers=%s
group.id=connect-cluster
config.storage.topic=connect-configs
offset.storage.topic=connect-offsets
status.storage.topic=connect-status
config.storage.replication.factor=1
offset.storage.replication.factor=1
status.storage.replication.factor=1
key.converter=org.apache.kafka.connect.json.JsonConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
listeners=http://127.0.0.1:%d
plugin.path=%s
plugin.cache.dir=%s
plugin.fs.allow=%s
offset.flush.interval.ms=1000
`, addr, port, pluginDir, cacheDir, files)
}

// runPipeline runs a file source and sink through the worker and waits for every line to arrive.
func runPipeline(t *testing.T, w *worker, files string) {
	t.Helper()
	in, out := pipeline(t, w, files, "secure", "secure-topic")
	writeLines(t, in, "line-", 0, 1000)
	waitFor(t, 60*time.Second, "1000 lines through the pipeline", func() bool { return countLines(out) >= 1000 })
	if got := readLines(t, out); len(got) != 1000 || got[0] != "line-0" || got[999] != "line-999" {
		t.Fatalf("sink wrote %d lines (%q ... %q), want line-0 ... line-999", len(got), got[0], got[len(got)-1])
	}
}

// waitExit waits for a process that must fail at start, and returns its output.
func waitExit(t *testing.T, p *process, within time.Duration) string {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(within):
		t.Fatalf("%s still running after %v; want it to stop with an error. Log:\n%s", p.name, within, p.logText())
	}
	if p.cmd.ProcessState.ExitCode() == 0 {
		t.Errorf("%s exited 0; want non-zero", p.name)
	}
	return p.logText()
}

func TestWorkerOverSASLSSLScram(t *testing.T) {
	ca, srv := testCA(t)
	users := filepath.Join(t.TempDir(), "users")
	os.WriteFile(users, []byte("# user:password:mechanism\nconnect:connect-secret:SCRAM-SHA-512\n"), 0o600)
	addr := startSecureBroker(t, "--sasl-users-file", users, "--tls-cert", srv.CertFile, "--tls-key", srv.KeyFile)

	// As Kafka's security documentation writes it: the worker's own clients, then the same
	// settings for the producers of source connectors and the consumers of sink connectors.
	security := func(password string) string {
		var b strings.Builder
		for _, prefix := range []string{"", "producer.", "consumer."} {
			fmt.Fprintf(&b, `
%[1]ssecurity.protocol=SASL_SSL
%[1]ssasl.mechanism=SCRAM-SHA-512
%[1]ssasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \
    username="connect" \
    password="%[2]s";
%[1]sssl.truststore.type=PEM
%[1]sssl.truststore.location=%[3]s
`, prefix, password, ca.CertFile)
		}
		return b.String()
	}
	files := t.TempDir()
	port := freePort(t)
	w := startWorkerFile(t, "worker", commonProps(addr, port, files)+security("connect-secret"), port)
	w.waitReady(t)
	runPipeline(t, w, files)

	// Wrong credentials: a clear error naming the mechanism, within seconds, not a hang.
	port2 := freePort(t)
	start := time.Now()
	bad := startWorkerFile(t, "worker-bad-password", commonProps(addr, port2, files)+security("wrong-secret"), port2)
	log := waitExit(t, bad.process, 20*time.Second)
	if !strings.Contains(log, `sasl.mechanism SCRAM-SHA-512: authentication failed for user "connect"`) || !strings.Contains(log, "sasl.jaas.config") {
		t.Fatalf("wrong password after %v: the log does not name the mechanism, the user and sasl.jaas.config:\n%s", time.Since(start), log)
	}
	t.Logf("wrong password: the worker stopped %v after it was started", time.Since(start).Round(time.Millisecond))
	if strings.Contains(log, "wrong-secret") {
		t.Errorf("the log shows the password:\n%s", log)
	}
}

func TestWorkerOverMutualTLS(t *testing.T) {
	ca, srv := testCA(t)
	client, err := ca.Client("connect")
	if err != nil {
		t.Fatal(err)
	}
	addr := startSecureBroker(t, "--tls-cert", srv.CertFile, "--tls-key", srv.KeyFile, "--tls-client-ca", ca.CertFile)
	var security strings.Builder
	for _, prefix := range []string{"", "producer.", "consumer."} {
		fmt.Fprintf(&security, `
%[1]ssecurity.protocol=SSL
%[1]sssl.truststore.type=PEM
%[1]sssl.truststore.location=%[2]s
%[1]sssl.keystore.type=PEM
%[1]sssl.keystore.location=%[3]s
`, prefix, ca.CertFile, client.BundleFile)
	}
	files := t.TempDir()
	port := freePort(t)
	w := startWorkerFile(t, "worker", commonProps(addr, port, files)+security.String(), port)
	w.waitReady(t)
	runPipeline(t, w, files)

	// Without a client certificate: a clear error at once, not a hang.
	var noCert []string
	for _, l := range strings.Split(security.String(), "\n") {
		if !strings.Contains(l, "ssl.keystore.") {
			noCert = append(noCert, l)
		}
	}
	port2 := freePort(t)
	bad := startWorkerFile(t, "worker-no-certificate", commonProps(addr, port2, files)+strings.Join(noCert, "\n"), port2)
	if log := waitExit(t, bad.process, 20*time.Second); !strings.Contains(log, "client certificate (ssl.keystore.location") {
		t.Fatalf("no client certificate: the log does not say so:\n%s", log)
	}
}

// TestProducerOverrideCompression checks that a connector's producer.override.compression.type
// reaches the batches written, that a connector without it keeps the default (franz-go's
// snappy), and that the None policy refuses the override with a 400 naming the policy.
func TestProducerOverrideCompression(t *testing.T) {
	_, addr := startBroker(t)
	files := t.TempDir()
	w := startWorker(t, "worker", addr, map[string]string{"plugin.fs.allow": files})

	source := func(name, topic string, extra map[string]string) {
		in := filepath.Join(files, name+".txt")
		writeLines(t, in, strings.Repeat("compressible ", 10), 0, 2000)
		cfg := map[string]string{"connector.class": "FileStreamSource", "tasks.max": "1", "file": in, "topic": topic}
		for k, v := range extra {
			cfg[k] = v
		}
		w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": name, "config": cfg})
	}
	source("zstd-source", "zstd-topic", map[string]string{"producer.override.compression.type": "zstd", "producer.override.linger.ms": "50"})
	source("default-source", "default-topic", map[string]string{"producer.override.linger.ms": "50"})

	for topic, want := range map[string]uint8{"zstd-topic": 4, "default-topic": 2} { // codec ids: 2 snappy, 4 zstd
		codecs := batchCodecs(t, addr, topic, 2000)
		if len(codecs) != 1 || codecs[want] == 0 {
			t.Errorf("%s: batches by codec %v, want all with codec %d", topic, codecs, want)
		}
	}

	// Under the None policy the same connector is refused, naming the policy and the key.
	w2 := startWorker(t, "worker-none", addr, map[string]string{
		"plugin.fs.allow": files, "group.id": "none-cluster", "config.storage.topic": "none-configs",
		"offset.storage.topic": "none-offsets", "status.storage.topic": "none-status",
		"connector.client.config.override.policy": "None",
	})
	cfg := map[string]string{"connector.class": "FileStreamSource", "tasks.max": "1", "file": filepath.Join(files, "x.txt"),
		"topic": "zstd-topic", "producer.override.compression.type": "zstd"}
	code, body := w2.call(t, "POST", "/connectors", map[string]any{"name": "refused", "config": cfg})
	if code != 400 || !strings.Contains(string(body), `The 'None' policy does not allow 'compression.type' to be overridden in the connector configuration.`) {
		t.Fatalf("create under the None policy: %d %s, want 400 naming the policy and the key", code, body)
	}
	var infos struct {
		ErrorCount int `json:"error_count"`
		Configs    []struct {
			Value struct {
				Name   string   `json:"name"`
				Errors []string `json:"errors"`
			} `json:"value"`
		} `json:"configs"`
	}
	cfg["name"] = "refused"
	b := w2.mustCall(t, 200, "PUT", "/connector-plugins/FileStreamSource/config/validate", cfg)
	if err := json.Unmarshal(b, &infos); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range infos.Configs {
		found = found || c.Value.Name == "producer.override.compression.type" && len(c.Value.Errors) == 1 && strings.Contains(c.Value.Errors[0], "'None' policy")
	}
	if infos.ErrorCount != 1 || !found {
		t.Fatalf("validate under the None policy: %s", b)
	}
	if code, _ := w2.call(t, "GET", "/connectors/refused", nil); code != 404 {
		t.Errorf("the refused connector exists: GET answered %d", code)
	}
}

// batchCodecs reads n records of a topic and counts the record batches by the compression codec
// in their attributes, as the producer wrote them.
func batchCodecs(t *testing.T, addr, topic string, n int) map[uint8]int {
	t.Helper()
	h := &batchHook{codecs: map[uint8]int{}}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.WithHooks(h))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for got := 0; got < n; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("%s: read %d of %d records", topic, got, n)
		}
		got += fs.NumRecords()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return maps.Clone(h.codecs)
}

type batchHook struct {
	mu     sync.Mutex
	codecs map[uint8]int
}

func (h *batchHook) OnFetchBatchRead(_ kgo.BrokerMetadata, _ string, _ int32, m kgo.FetchBatchMetrics) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.codecs[m.CompressionType]++
}

// TestSinkConsumerOverrides checks that a sink's consumer.override.* keys reach its consumer: with
// auto.offset.reset=latest it skips what was in the topic before it joined, where a sink without
// the override (Kafka Connect's earliest) reads it all.
func TestSinkConsumerOverrides(t *testing.T) {
	_, addr := startBroker(t)
	files := t.TempDir()
	w := startWorker(t, "worker", addr, map[string]string{"plugin.fs.allow": files})
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("sink-topic"), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	produce := func(prefix string, from, to int) {
		t.Helper()
		var rs []*kgo.Record
		for i := from; i < to; i++ {
			rs = append(rs, kgo.StringRecord(fmt.Sprintf("%s%d", prefix, i)))
		}
		if err := cl.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	produce("before-", 0, 100)

	sink := func(name string, extra map[string]string) string {
		out := filepath.Join(files, name+".txt")
		cfg := map[string]string{
			"connector.class": "FileStreamSink", "tasks.max": "1", "file": out, "topics": "sink-topic",
			"value.converter": "org.apache.kafka.connect.storage.StringConverter",
		}
		for k, v := range extra {
			cfg[k] = v
		}
		w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": name, "config": cfg})
		w.waitTaskState(t, name, "RUNNING", 30*time.Second)
		return out
	}
	latest := sink("latest-sink", map[string]string{"consumer.override.auto.offset.reset": "latest", "consumer.override.max.poll.records": "10"})
	earliest := sink("earliest-sink", nil)

	// The latest sink starts reading once it has its partition: produce until it has.
	for i := 0; countLines(latest) == 0; i++ {
		if i == 100 {
			t.Fatal("the latest sink wrote nothing in 30s")
		}
		produce("after-", i, i+1)
		time.Sleep(300 * time.Millisecond)
	}
	waitFor(t, 30*time.Second, "the earliest sink to read the records from before", func() bool { return countLines(earliest) >= 100 })
	for _, l := range readLines(t, latest) {
		if !strings.HasPrefix(l, "after-") {
			t.Fatalf("the sink with consumer.override.auto.offset.reset=latest wrote %q, from before it joined", l)
		}
	}
	if got := readLines(t, earliest); got[0] != "before-0" {
		t.Fatalf("the sink without the override starts at %q, want before-0", got[0])
	}
}
