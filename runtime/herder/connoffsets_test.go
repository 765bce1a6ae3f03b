package herder

import (
	"encoding/json"
	"maps"
	"testing"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/runtime/store"
)

// TestSourceOffsetsOfAConnectorWithItsOwnTopic drives GET, PATCH and DELETE
// /connectors/{name}/offsets for a connector with offsets.storage.topic: reads see its topic and
// fall back to the worker's, changes land in both, and a reset leaves neither with an offset.
func TestSourceOffsetsOfAConnectorWithItsOwnTopic(t *testing.T) {
	e := newEnv(t)
	cfg := maps.Clone(sourceCfg)
	cfg["offsets.storage.topic"] = "src-offsets"
	e.create("src", cfg, connect.TargetStopped)
	// Committed before the connector was moved to its own topic.
	if err := e.offsets.Put(e.ctx, "src", []store.OffsetEntry{{Partition: []byte(`{"filename":"/a"}`), Offset: []byte(`{"position":1}`)}}); err != nil {
		t.Fatal(err)
	}
	got, err := e.h.ConnectorOffsets(e.ctx, "src")
	if err != nil || offsetsJSON(t, got) != `{"offsets":[{"partition":{"filename":"/a"},"offset":{"position":1}}]}` {
		t.Fatalf("offsets from the worker's topic: %s %v", offsetsJSON(t, got), err)
	}

	if _, err := e.h.AlterConnectorOffsets(e.ctx, "src", []connect.ConnectorOffset{
		{Partition: map[string]any{"filename": "/b"}, Offset: map[string]any{"position": json.Number("5")}},
	}); err != nil {
		t.Fatal(err)
	}
	own := store.NewOffsetStore(store.Options{SeedBrokers: e.addrs}, store.TopicSpec{Name: "src-offsets", ReplicationFactor: -1})
	if err := own.Start(e.ctx); err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	if o, _ := own.Get("src", []byte(`{"filename":"/b"}`)); string(o) != `{"position":5}` {
		t.Errorf("the connector's topic: /b = %s", o)
	}
	if _, ok := own.Get("src", []byte(`{"filename":"/a"}`)); ok {
		t.Error("the connector's topic got /a, which was not altered")
	}
	if err := e.offsets.ReadToEnd(e.ctx); err != nil {
		t.Fatal(err)
	}
	if o, _ := e.offsets.Get("src", []byte(`{"filename":"/b"}`)); string(o) != `{"position":5}` {
		t.Errorf("the worker's topic (secondary): /b = %s", o)
	}
	got, _ = e.h.ConnectorOffsets(e.ctx, "src")
	if len(got.Offsets) != 2 {
		t.Errorf("after alter, want both topics' partitions: %s", offsetsJSON(t, got))
	}

	// A reset tombstones the union of both topics' partitions in both.
	if _, err := e.h.ResetConnectorOffsets(e.ctx, "src"); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.h.ConnectorOffsets(e.ctx, "src"); len(got.Offsets) != 0 {
		t.Errorf("after reset: %s", offsetsJSON(t, got))
	}
	for name, s := range map[string]*store.OffsetStore{"connector's": own, "worker's": e.offsets} {
		if err := s.ReadToEnd(e.ctx); err != nil {
			t.Fatal(err)
		}
		if left := s.Offsets("src"); len(left) != 0 {
			t.Errorf("the %s topic after reset: %s", name, left)
		}
	}
}

// TestSourceOffsetsTopicNamedLikeTheWorkers: a connector whose offsets.storage.topic is the
// worker's offsets topic just uses the worker's store, as Kafka's sameOffsetTopicAsWorker.
func TestSourceOffsetsTopicNamedLikeTheWorkers(t *testing.T) {
	e := newEnv(t)
	offs, done, err := e.h.cfg.Worker.OffsetStore(e.ctx, map[string]string{"offsets.storage.topic": "offsets"})
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	if offs != store.OffsetBackingStore(e.offsets) {
		t.Fatalf("store = %T, want the worker's", offs)
	}
}
