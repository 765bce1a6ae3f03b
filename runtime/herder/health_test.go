package herder

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/runtime/store"
)

// produceConfigs writes raw records to the config topic, as a broken client or an older worker
// would, waits until the store has read them and returns their offsets.
func (e *env) produceConfigs(kvs ...string) []int64 {
	e.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.addrs...), kgo.ProducerBatchMaxBytes(1<<20))
	if err != nil {
		e.t.Fatal(err)
	}
	defer cl.Close()
	var offsets []int64
	for i := 0; i < len(kvs); i += 2 {
		r, err := cl.ProduceSync(e.ctx, &kgo.Record{Topic: "configs", Key: []byte(kvs[i]), Value: []byte(kvs[i+1])}).First()
		if err != nil {
			e.t.Fatalf("producing %.40q: %v", kvs[i], err)
		}
		offsets = append(offsets, r.Offset)
	}
	if err := e.configs.ReadToEnd(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	return offsets
}

// run runs the herder's loop for the rest of the test.
func (e *env) run() {
	e.t.Helper()
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() { e.h.Run(ctx); close(done) }()
	e.t.Cleanup(func() { cancel(); <-done })
	for !e.h.started.Load() {
		time.Sleep(10 * time.Millisecond)
	}
}

func check(h connect.Health, name string) (connect.HealthCheck, bool) {
	for _, c := range h.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return connect.HealthCheck{}, false
}

// longName is a name a worker refuses and the group protocol cannot carry.
var longName = strings.Repeat("n", 32768)

// Config records that cannot be read are skipped: the worker stays healthy and serves the other
// connectors, and GET /health lists each skipped record with its offset and why.
func TestHealthListsSkippedConfigRecords(t *testing.T) {
	e := newEnv(t)
	e.create("src", sourceCfg, connect.TargetStopped)
	offsets := e.produceConfigs(
		"connector-garbage", "not json",
		"connector-"+longName, `{"properties":{"connector.class":"FileStreamSource","file":"/data/in.txt","topic":"in"}}`,
	)
	e.run()

	if names, _ := e.h.Connectors(e.ctx); len(names) != 1 || names[0] != "src" {
		t.Errorf("connectors %.80q, want only src", names)
	}
	h := e.h.Health(e.ctx)
	if h.Status != connect.HealthHealthy || h.Detail != "" {
		t.Errorf("health %s %q, want healthy", h.Status, h.Detail)
	}
	c, ok := check(h, "config topic")
	if !ok || c.Status != connect.CheckWarning || len(c.Problems) != 2 {
		t.Fatalf("config topic check %+v, want a warning with 2 problems", c)
	}
	for i, want := range []string{
		`offset ` + strconv.FormatInt(offsets[0], 10) + `, key "connector-garbage": config of connector "garbage": `,
		`offset ` + strconv.FormatInt(offsets[1], 10) + `, key "connector-nnnn`,
	} {
		if !strings.HasPrefix(c.Problems[i], want) {
			t.Errorf("problem %d: %.300s\nwant it to start with %s", i, c.Problems[i], want)
		}
	}
	if !strings.Contains(c.Problems[1], "(32778 bytes)") || !strings.Contains(c.Problems[1], "the limit is 32733 bytes") || len(c.Problems[1]) > 500 {
		t.Errorf("problem 1 does not show the key cut short and the name limit: %.600s", c.Problems[1])
	}

	// A valid record for a skipped key replaces it.
	e.produceConfigs("connector-garbage", `{"properties":{"connector.class":"FileStreamSource","file":"/data/in.txt","topic":"in","name":"garbage"}}`)
	if c, _ := check(e.h.Health(e.ctx), "config topic"); len(c.Problems) != 1 {
		t.Errorf("after rewriting connector-garbage: %+v, want 1 problem", c)
	}
}

// Deleting a connector whose config record was skipped tombstones it: the record is no longer
// reported, also by a worker that reads the topic afresh. Deleting a name no record mentions is
// still a 404.
func TestDeleteRemovesSkippedConnector(t *testing.T) {
	e := newEnv(t)
	e.produceConfigs(
		"connector-bad", `{"properties":"not an object"}`,
		"task-bad-0", "garbage",
		"connector-"+longName, `{"properties":{"connector.class":"FileStreamSource"}}`,
	)
	if n := len(e.configs.Snapshot().Skipped); n != 3 {
		t.Fatalf("%d records skipped, want 3", n)
	}
	for _, name := range []string{"bad", longName} {
		if err := e.h.DeleteConnector(e.ctx, name); err != nil {
			t.Errorf("deleting skipped connector %.20s: %v", name, err)
		}
	}
	wantErr(t, "deleting an unknown connector", e.h.DeleteConnector(e.ctx, "nope"), 404, "Connector nope not found")
	if skipped := e.configs.Snapshot().Skipped; len(skipped) != 0 {
		t.Errorf("still skipped after DELETE: %v", skipped)
	}

	fresh := store.NewConfigStore(store.Options{SeedBrokers: e.addrs}, store.TopicSpec{Name: "configs", ReplicationFactor: -1})
	if err := fresh.Start(e.ctx); err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if snap := fresh.Snapshot(); len(snap.Skipped) != 0 || len(snap.Connectors) != 0 {
		t.Errorf("a worker reading the topic afresh: skipped %v, connectors %d", snap.Skipped, len(snap.Connectors))
	}
}

// A name too long for the Kafka protocol is a 400 naming the limit, and a config over the config
// topic's max.message.bytes a 413 with both sizes; neither writes anything.
func TestOversizedConnectorInputIsAClientError(t *testing.T) {
	e := newEnv(t)
	_, err := e.h.CreateConnector(e.ctx, longName, sourceCfg, "")
	wantErr(t, "a 32768-byte name", err, 400, "Connector name is 32768 bytes long; the limit is 32733 bytes "+
		"(names travel in Kafka protocol strings of at most 32767 bytes, inside ids such as connector-dlq-producer-<name>-<task>)")
	_, _, err = e.h.PutConnectorConfig(e.ctx, longName, sourceCfg)
	if connect.StatusCode(err) != 400 {
		t.Errorf("PUT with a 32768-byte name: %v", err)
	}
	if _, err := e.h.CreateConnector(e.ctx, strings.Repeat("n", connect.MaxConnectorNameBytes), sourceCfg, connect.TargetStopped); err != nil {
		t.Errorf("a name of exactly the limit: %v", err)
	}

	big := map[string]string{"x.blob": strings.Repeat("b", store.DefaultMaxMessageBytes)}
	for k, v := range sourceCfg {
		big[k] = v
	}
	_, err = e.h.CreateConnector(e.ctx, "big", big, "")
	if connect.StatusCode(err) != 413 || !strings.Contains(err.Error(), "more than the 1048588 bytes the topic holds (max.message.bytes of topic configs)") {
		t.Errorf("creating a connector with a 1 MB value: %d %v", connect.StatusCode(err), err)
	}
	if snap := e.configs.Snapshot(); len(snap.Connectors) != 1 || snap.Offset != 2 {
		t.Errorf("after the refusals: %d connectors, offset %d, want 1 and 2", len(snap.Connectors), snap.Offset)
	}
}
