package store

import (
	"reflect"
	"testing"
)

// startConnectorOffsetStore opens a connector's own offsets topic over the worker's store.
func startConnectorOffsetStore(t *testing.T, e *testEnv, worker *OffsetStore, topic string) *ConnectorOffsetStore {
	t.Helper()
	s := NewConnectorOffsetStore(NewOffsetStore(e.options(), TopicSpec{Name: topic, Partitions: 3, ReplicationFactor: -1}), worker, nil)
	must(t, s.Start(e.ctx))
	t.Cleanup(s.Close)
	return s
}

// TestConnectorOffsetsFallBackToTheWorkersTopic moves a connector to a topic of its own: what it
// committed to the worker's topic is still read, until its own topic has the partition.
func TestConnectorOffsetsFallBackToTheWorkersTopic(t *testing.T) {
	e := newEnv(t)
	worker := startOffsetStore(t, e)
	must(t, worker.Put(e.ctx, "src", []OffsetEntry{
		{Partition: raw(`{"f":"a"}`), Offset: raw(`{"pos":1}`)},
		{Partition: raw(`{"f":"b"}`), Offset: raw(`{"pos":2}`)},
	}))
	s := startConnectorOffsetStore(t, e, worker, "src-offsets")
	if got, ok := s.Get("src", raw(`{"f":"a"}`)); !ok || string(got) != `{"pos":1}` {
		t.Fatalf("Get before the connector's topic has the partition = %s, %v; want the worker's", got, ok)
	}
	must(t, s.Put(e.ctx, "src", []OffsetEntry{{Partition: raw(`{"f":"a"}`), Offset: raw(`{"pos":10}`)}}))
	if got, _ := s.Get("src", raw(`{"f":"a"}`)); string(got) != `{"pos":10}` {
		t.Fatalf("Get = %s, want the connector's topic's", got)
	}
	want := []OffsetEntry{
		{Partition: raw(`{"f":"a"}`), Offset: raw(`{"pos":10}`)},
		{Partition: raw(`{"f":"b"}`), Offset: raw(`{"pos":2}`)},
	}
	if got := s.Offsets("src"); !reflect.DeepEqual(got, want) {
		t.Fatalf("Offsets = %s, want both topics' partitions, the connector's first: %s", got, want)
	}
}

// TestConnectorOffsetsAreWrittenToBothTopics reads both topics back: every offset lands in the
// connector's topic and in the worker's, keyed ["<connector>",{partition}] as Kafka's; a reset
// tombstones the partition in both, so the fallback cannot bring it back.
func TestConnectorOffsetsAreWrittenToBothTopics(t *testing.T) {
	e := newEnv(t)
	worker := startOffsetStore(t, e)
	s := startConnectorOffsetStore(t, e, worker, "src-offsets")
	must(t, s.Put(e.ctx, "src", []OffsetEntry{{Partition: raw(`{"f":"a"}`), Offset: raw(`{"pos":3}`)}}))
	for _, topic := range []string{"src-offsets", offsetsTopic} {
		recs := e.records(topic)
		if len(recs) != 1 || recs[0].Key != `["src",{"f":"a"}]` || recs[0].Value != `{"pos":3}` {
			t.Fatalf("%s holds %+v, want the one offset", topic, recs)
		}
	}
	if got, ok := worker.Get("src", raw(`{"f":"a"}`)); !ok || string(got) != `{"pos":3}` {
		t.Fatalf("the worker's store: Get = %s, %v", got, ok)
	}

	must(t, s.Put(e.ctx, "src", []OffsetEntry{{Partition: raw(`{"f":"a"}`)}}))
	for _, topic := range []string{"src-offsets", offsetsTopic} {
		recs := e.records(topic)
		if last := recs[len(recs)-1]; last.Key != `["src",{"f":"a"}]` || last.Value != tombstone {
			t.Fatalf("%s ends with %+v, want the partition's tombstone", topic, last)
		}
	}
	if got, ok := s.Get("src", raw(`{"f":"a"}`)); ok {
		t.Fatalf("Get after the reset = %s, want none", got)
	}
	if got := s.Offsets("src"); len(got) != 0 {
		t.Fatalf("Offsets after the reset = %s, want none", got)
	}
}

// TestConnectorOffsetsTopicIsCreatedLikeTheWorkers checks that a missing topic is created with
// the spec it is given (the worker's offsets topic's, renamed), compacted.
func TestConnectorOffsetsTopicIsCreatedLikeTheWorkers(t *testing.T) {
	e := newEnv(t)
	startConnectorOffsetStore(t, e, startOffsetStore(t, e), "src-offsets")
	td, err := e.adm.ListTopics(e.ctx, "src-offsets")
	must(t, err)
	if n := len(td["src-offsets"].Partitions); n != 3 {
		t.Fatalf("src-offsets has %d partitions, want 3", n)
	}
	rc, err := e.adm.DescribeTopicConfigs(e.ctx, "src-offsets")
	must(t, err)
	c, err := rc.On("src-offsets", nil)
	must(t, err)
	policy := ""
	for _, kv := range c.Configs {
		if kv.Key == "cleanup.policy" && kv.Value != nil {
			policy = *kv.Value
		}
	}
	if policy != "compact" {
		t.Fatalf("cleanup.policy = %q, want compact", policy)
	}
}
