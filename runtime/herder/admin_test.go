package herder

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/runtime/store"
)

var (
	sourceCfg = map[string]string{"connector.class": "FileStreamSource", "file": "/data/in.txt", "topic": "in"}
	sinkCfg   = map[string]string{"connector.class": "FileStreamSink", "file": "/data/out.txt", "topics": "in"}
)

func ptr(s string) *string { return &s }

func TestPatchConnectorConfig(t *testing.T) {
	e := newEnv(t)
	e.create("src", sourceCfg, connect.TargetStopped)

	info, err := e.h.PatchConnectorConfig(e.ctx, "src", map[string]*string{"batch.size": ptr("10"), "file": ptr("/data/other.txt")})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"name": "src", "connector.class": "FileStreamSource", "file": "/data/other.txt", "topic": "in", "batch.size": "10"}
	if info.Name != "src" || info.Type != connect.TypeSource || !maps.Equal(info.Config, want) {
		t.Errorf("info %+v", info)
	}
	if got := e.configs.Snapshot().Connectors["src"]; !maps.Equal(got, want) {
		t.Errorf("stored %v", got)
	}

	// A nil value removes a key; the result is validated as a PUT is.
	_, err = e.h.PatchConnectorConfig(e.ctx, "src", map[string]*string{"topic": nil})
	wantErr(t, "patch removing a required key", err, 400, "Connector configuration is invalid and contains the following 1 error(s):\n"+
		`Missing required configuration "topic" which has no default value.`+
		"\nYou can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`")
	if got := e.configs.Snapshot().Connectors["src"]; !maps.Equal(got, want) {
		t.Errorf("an invalid patch was written: %v", got)
	}
	info, err = e.h.PatchConnectorConfig(e.ctx, "src", map[string]*string{"batch.size": nil})
	if err != nil || info.Config["batch.size"] != "" || len(info.Config) != 4 {
		t.Errorf("removing batch.size: %+v %v", info.Config, err)
	}

	// PATCH never creates.
	_, err = e.h.PatchConnectorConfig(e.ctx, "nope", map[string]*string{"file": ptr("/x")})
	wantErr(t, "unknown connector", err, 404, "Connector nope not found")
}

func TestConnectorTopics(t *testing.T) {
	e := newEnv(t)
	for _, ts := range []store.TopicStatus{{Topic: "b", Connector: "src"}, {Topic: "a", Connector: "src", Task: 1}, {Topic: "c", Connector: "other"}} {
		if err := e.statuses.PutTopic(e.ctx, ts); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := e.h.ConnectorTopics(e.ctx, "src"); err != nil || !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("topics %q %v", got, err)
	}
	if got, err := e.h.ConnectorTopics(e.ctx, "nope"); err != nil || got == nil || len(got) != 0 {
		t.Errorf("unknown connector: %#v %v", got, err)
	}
	if err := e.h.ResetConnectorTopics(e.ctx, "src"); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.h.ConnectorTopics(e.ctx, "src"); len(got) != 0 {
		t.Errorf("after reset: %q", got)
	}
	if got, _ := e.h.ConnectorTopics(e.ctx, "other"); !slices.Equal(got, []string{"c"}) {
		t.Errorf("reset touched another connector: %q", got)
	}
	if err := e.h.ResetConnectorTopics(e.ctx, "nope"); err != nil {
		t.Errorf("reset of an unknown connector: %v", err)
	}
}

func offsetsJSON(t *testing.T, o connect.ConnectorOffsets) string {
	t.Helper()
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const alteredMessage = "The Connect framework-managed offsets for this connector have been altered successfully. " +
	"However, if this connector manages offsets externally, they will need to be manually altered in the system that the connector uses."

const resetMessage = "The Connect framework-managed offsets for this connector have been reset successfully. " +
	"However, if this connector manages offsets externally, they will need to be manually reset in the system that the connector uses."

// The checks every offsets change goes through first, in Kafka's order.
func TestOffsetsChangeChecks(t *testing.T) {
	e := newEnv(t)
	e.create("running", sourceCfg, connect.TargetStarted)
	e.create("paused", sinkCfg, connect.TargetPaused)
	e.create("stopping", sourceCfg, connect.TargetStopped)
	// Stopped, but its task configs are not cleared yet.
	if err := e.configs.PutTaskConfigs(e.ctx, "stopping", []map[string]string{sourceCfg}); err != nil {
		t.Fatal(err)
	}
	offs := []connect.ConnectorOffset{{Partition: map[string]any{"filename": "/f"}, Offset: map[string]any{"position": 1}}}
	for _, name := range []string{"running", "paused", "stopping"} {
		_, err := e.h.AlterConnectorOffsets(e.ctx, name, offs)
		wantErr(t, "alter "+name, err, 400, connect.NotStopped(name).Error())
		_, err = e.h.ResetConnectorOffsets(e.ctx, name)
		wantErr(t, "reset "+name, err, 400, connect.NotStopped(name).Error())
	}
	_, err := e.h.AlterConnectorOffsets(e.ctx, "nope", offs)
	wantErr(t, "alter unknown", err, 404, "Connector nope not found")
	_, err = e.h.ResetConnectorOffsets(e.ctx, "nope")
	wantErr(t, "reset unknown", err, 404, "Connector nope not found")
	_, err = e.h.ConnectorOffsets(e.ctx, "nope")
	wantErr(t, "get unknown", err, 404, "Connector nope not found")
}

func TestSourceOffsets(t *testing.T) {
	e := newEnv(t)
	e.create("src", sourceCfg, connect.TargetStopped)
	e.create("src2", sourceCfg, connect.TargetStopped)
	other := []store.OffsetEntry{{Partition: []byte(`{"filename":"/other"}`), Offset: []byte(`{"position":1}`)}}
	if err := e.offsets.Put(e.ctx, "src2", other); err != nil {
		t.Fatal(err)
	}

	// None yet: an empty list, not null.
	got, err := e.h.ConnectorOffsets(e.ctx, "src")
	if err != nil || offsetsJSON(t, got) != `{"offsets":[]}` {
		t.Errorf("no offsets: %s %v", offsetsJSON(t, got), err)
	}

	// Offsets written by tasks (or another worker) are read as they are, numbers exact.
	if err := e.offsets.Put(e.ctx, "src", []store.OffsetEntry{
		{Partition: []byte(`{"filename":"/a"}`), Offset: []byte(`{"position":9007199254740993}`)},
		{Partition: []byte(`{"filename":"/b"}`), Offset: []byte(`{"position":5,"ok":true}`)},
	}); err != nil {
		t.Fatal(err)
	}
	got, err = e.h.ConnectorOffsets(e.ctx, "src")
	if err != nil || offsetsJSON(t, got) != `{"offsets":[{"partition":{"filename":"/a"},"offset":{"position":9007199254740993}},`+
		`{"partition":{"filename":"/b"},"offset":{"ok":true,"position":5}}]}` {
		t.Errorf("offsets: %s %v", offsetsJSON(t, got), err)
	}

	// PATCH: set one partition, reset another, add a third.
	msg, err := e.h.AlterConnectorOffsets(e.ctx, "src", []connect.ConnectorOffset{
		{Partition: map[string]any{"filename": "/a"}, Offset: map[string]any{"position": json.Number("10")}},
		{Partition: map[string]any{"filename": "/b"}, Offset: nil},
		{Partition: map[string]any{"filename": "/c"}, Offset: map[string]any{"position": json.Number("0")}},
	})
	if err != nil || msg.Message != alteredMessage {
		t.Fatalf("alter: %+v %v", msg, err)
	}
	if o, _ := e.offsets.Get("src", []byte(`{"filename":"/a"}`)); string(o) != `{"position":10}` {
		t.Errorf("/a = %s", o)
	}
	if _, ok := e.offsets.Get("src", []byte(`{"filename":"/b"}`)); ok {
		t.Error("/b was not reset")
	}
	got, _ = e.h.ConnectorOffsets(e.ctx, "src")
	if len(got.Offsets) != 2 {
		t.Errorf("after alter: %s", offsetsJSON(t, got))
	}

	// Offsets must be flat maps, as Kafka's OffsetUtils requires.
	_, err = e.h.AlterConnectorOffsets(e.ctx, "src", []connect.ConnectorOffset{{Partition: map[string]any{"f": map[string]any{"x": 1}}, Offset: map[string]any{"p": 1}}})
	wantErr(t, "nested partition", err, 400, "Offsets may only contain primitive types as values, but field f contains MAP")
	_, err = e.h.AlterConnectorOffsets(e.ctx, "src", []connect.ConnectorOffset{{Partition: map[string]any{"f": "x"}, Offset: map[string]any{"p": []any{1}}}})
	wantErr(t, "array offset", err, 400, "Offsets may only contain primitive types as values, but field p contains ARRAY")
	_, err = e.h.AlterConnectorOffsets(e.ctx, "src", []connect.ConnectorOffset{{Offset: map[string]any{"p": 1}}})
	wantErr(t, "null partition", err, 400, "Source partitions may not be null")

	// DELETE tombstones every partition of the connector, and no other connector's.
	msg, err = e.h.ResetConnectorOffsets(e.ctx, "src")
	if err != nil || msg.Message != resetMessage {
		t.Fatalf("reset: %+v %v", msg, err)
	}
	if got, _ := e.h.ConnectorOffsets(e.ctx, "src"); len(got.Offsets) != 0 {
		t.Errorf("after reset: %s", offsetsJSON(t, got))
	}
	if got := e.offsets.Offsets("src2"); len(got) != 1 {
		t.Errorf("another connector's offsets: %v", got)
	}
	// Resetting again finds nothing to do.
	if msg, err := e.h.ResetConnectorOffsets(e.ctx, "src"); err != nil || msg.Message != resetMessage {
		t.Errorf("second reset: %+v %v", msg, err)
	}
}

func commit(t *testing.T, e *env, group string, offs map[int32]int64) {
	t.Helper()
	os := kadm.Offsets{}
	for p, at := range offs {
		os.AddOffset("in", p, at, -1)
	}
	if err := e.adm.CommitAllOffsets(e.ctx, group, os); err != nil {
		t.Fatal(err)
	}
}

func committed(t *testing.T, e *env, group string) map[int32]int64 {
	t.Helper()
	resp, err := e.adm.FetchOffsets(e.ctx, group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	resp.Each(func(o kadm.OffsetResponse) {
		if o.Err == nil && o.At >= 0 {
			out[o.Partition] = o.At
		}
	})
	return out
}

func TestSinkOffsets(t *testing.T) {
	e := newEnv(t)
	e.create("snk", sinkCfg, connect.TargetStopped)
	e.create("custom", merged(sinkCfg, map[string]string{"consumer.override.group.id": "my-group"}), connect.TargetStopped)

	got, err := e.h.ConnectorOffsets(e.ctx, "snk")
	if err != nil || offsetsJSON(t, got) != `{"offsets":[]}` {
		t.Errorf("no group yet: %s %v", offsetsJSON(t, got), err)
	}
	commit(t, e, "connect-snk", map[int32]int64{1: 42, 0: 7})
	got, err = e.h.ConnectorOffsets(e.ctx, "snk")
	if err != nil || offsetsJSON(t, got) != `{"offsets":[{"partition":{"kafka_partition":0,"kafka_topic":"in"},"offset":{"kafka_offset":7}},`+
		`{"partition":{"kafka_partition":1,"kafka_topic":"in"},"offset":{"kafka_offset":42}}]}` {
		t.Errorf("offsets: %s %v", offsetsJSON(t, got), err)
	}

	// Sink offsets are checked with Kafka's rules and texts.
	_, err = e.h.AlterConnectorOffsets(e.ctx, "snk", []connect.ConnectorOffset{{Partition: map[string]any{"kafka_topic": "in"}, Offset: map[string]any{"kafka_offset": 1}}})
	wantErr(t, "partition without kafka_partition", err, 400, "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'")

	// PATCH commits, and a null offset deletes the partition's offset.
	msg, err := e.h.AlterConnectorOffsets(e.ctx, "snk", []connect.ConnectorOffset{
		{Partition: map[string]any{"kafka_topic": "in", "kafka_partition": json.Number("0")}, Offset: map[string]any{"kafka_offset": json.Number("100")}},
		{Partition: map[string]any{"kafka_topic": "in", "kafka_partition": "1"}, Offset: nil},
	})
	if err != nil || msg.Message != alteredMessage {
		t.Fatalf("alter: %+v %v", msg, err)
	}
	if got := committed(t, e, "connect-snk"); !maps.Equal(got, map[int32]int64{0: 100}) {
		t.Errorf("group offsets after alter: %v", got)
	}

	// consumer.override.group.id names the group.
	commit(t, e, "my-group", map[int32]int64{0: 3})
	if got, _ := e.h.ConnectorOffsets(e.ctx, "custom"); len(got.Offsets) != 1 || got.Offsets[0].Offset["kafka_offset"] != int64(3) {
		t.Errorf("custom group: %s", offsetsJSON(t, got))
	}

	// DELETE deletes the group; again, it is already gone.
	for range 2 {
		msg, err = e.h.ResetConnectorOffsets(e.ctx, "snk")
		if err != nil || msg.Message != resetMessage {
			t.Fatalf("reset: %+v %v", msg, err)
		}
	}
	if got := committed(t, e, "connect-snk"); len(got) != 0 {
		t.Errorf("group offsets after reset: %v", got)
	}
	if got, err := e.h.ConnectorOffsets(e.ctx, "snk"); err != nil || len(got.Offsets) != 0 {
		t.Errorf("offsets of a deleted group: %s %v", offsetsJSON(t, got), err)
	}
	if got := committed(t, e, "my-group"); len(got) != 1 {
		t.Errorf("another group was touched: %v", got)
	}
}

// While a task of the connector is still in its group (a zombie), the group's offsets cannot
// change: Kafka's answer says why.
func TestSinkOffsetsOfALiveGroup(t *testing.T) {
	e := newEnv(t)
	e.create("snk", sinkCfg, connect.TargetStopped)
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.addrs...), kgo.ConsumerGroup("connect-snk"), kgo.ConsumeTopics("in"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(e.ctx, 200*time.Millisecond)
		cl.PollFetches(ctx)
		cancel()
		described, err := e.adm.DescribeGroups(e.ctx, "connect-snk")
		if err == nil && len(described["connect-snk"].Members) > 0 && described["connect-snk"].State == "Stable" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the consumer did not join its group")
		}
	}
	_, err = e.h.AlterConnectorOffsets(e.ctx, "snk", []connect.ConnectorOffset{
		{Partition: map[string]any{"kafka_topic": "in", "kafka_partition": 0}, Offset: map[string]any{"kafka_offset": 1}}})
	wantErr(t, "alter", err, 500, "Failed to alter consumer group offsets for connector snk either because its tasks "+
		"haven't stopped completely yet or the connector was resumed before the request to alter its offsets could be successfully "+
		"completed. If the connector is in a stopped state, this operation can be safely retried. If it doesn't eventually succeed, the "+
		"Connect cluster may need to be restarted to get rid of the zombie sink tasks.")
	_, err = e.h.ResetConnectorOffsets(e.ctx, "snk")
	if connect.StatusCode(err) != 500 || !strings.HasPrefix(err.Error(), "Failed to reset consumer group offsets for connector snk either because its tasks haven't stopped completely yet") {
		t.Errorf("reset: %v", err)
	}
}

func merged(a, b map[string]string) map[string]string {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}

func TestPluginConfig(t *testing.T) {
	e := newEnv(t)
	keyNames := func(keys []connect.ConfigKeyInfo) []string {
		var out []string
		for _, k := range keys {
			out = append(out, k.Name)
		}
		return out
	}
	sink, err := e.h.PluginConfig(e.ctx, "org.apache.kafka.connect.file.FileStreamSinkConnector")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"file", "name", "connector.class", "tasks.max", "tasks.max.enforce", "key.converter", "value.converter",
		"header.converter", "transforms", "predicates", "config.action.reload", "errors.retry.timeout", "errors.retry.delay.max.ms",
		"errors.tolerance", "errors.log.enable", "errors.log.include.messages", "topics", "topics.regex",
		"errors.deadletterqueue.topic.name", "errors.deadletterqueue.topic.replication.factor", "errors.deadletterqueue.context.headers.enable"}
	if got := keyNames(sink); !slices.Equal(got, want) {
		t.Errorf("sink keys\n got %q\nwant %q", got, want)
	}
	b, _ := json.Marshal(sink[17])
	if string(b) != `{"name":"topics.regex","type":"STRING","required":false,"default_value":"","importance":"HIGH",`+
		`"documentation":"Regular expression giving topics to consume. Under the hood, the regex is compiled to a \u003ccode\u003ejava.util.regex.Pattern\u003c/code\u003e. Only one of topics or topics.regex should be specified.",`+
		`"group":"Common","order":4,"width":"LONG","display_name":"Topics regex","dependents":null}` {
		t.Errorf("topics.regex: %s", b)
	}
	if k := sink[0]; !k.Required || k.Group != nil || k.Importance != "HIGH" {
		t.Errorf("the plugin's own key: %+v", k)
	}

	// By alias; a source lists its own framework keys.
	src, err := e.h.PluginConfig(e.ctx, "FileStreamSourceConnector")
	if err != nil {
		t.Fatal(err)
	}
	if got := keyNames(src); !slices.Equal(got[:4], []string{"file", "topic", "batch.size", "name"}) || got[len(got)-1] != "offsets.storage.topic" ||
		slices.Contains(got, "topics") || !slices.Contains(got, "exactly.once.support") {
		t.Errorf("source keys %q", got)
	}

	// A converter lists its own keys only.
	conv, err := e.h.PluginConfig(e.ctx, "org.apache.kafka.connect.json.JsonConverter")
	if err != nil || !slices.Equal(keyNames(conv), []string{"schemas.enable", "schemas.cache.size", "decimal.format", "replace.null.with.default", "converter.type"}) {
		t.Errorf("converter keys %q %v", keyNames(conv), err)
	}

	_, err = e.h.PluginConfig(e.ctx, "nope")
	wantErr(t, "unknown plugin", err, 404, "Unknown plugin nope.")
}

func TestValidateConfig(t *testing.T) {
	e := newEnv(t)
	infos, err := e.h.ValidateConfig(e.ctx, "FileStreamSink", map[string]string{"connector.class": "FileStreamSink", "topics": "in"})
	if err != nil || infos.Name != "FileStreamSink" || infos.ErrorCount != 2 || len(infos.Configs) != 21 {
		t.Errorf("%+v %v", infos, err)
	}
	_, err = e.h.ValidateConfig(e.ctx, "Nope", map[string]string{"connector.class": "Nope"})
	if connect.StatusCode(err) != 400 || !strings.HasPrefix(err.Error(), "Failed to find any class that implements Connector and which name matches Nope") {
		t.Errorf("unknown class: %v", err)
	}
}
