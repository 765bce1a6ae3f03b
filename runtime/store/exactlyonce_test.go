package store

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// With exactly-once support the leader writes the config topic in transactions (Kafka's
// connect-cluster-<group.id>): a new leader's claim fences the old one, whose writes then fail
// rather than land after the new leader's, and read_committed readers never apply an aborted
// transaction's records.
func TestConfigLeaderWritesFenceTheDeposedLeader(t *testing.T) {
	e := newEnv(t)
	opts := e.options()
	opts.ReadCommitted = true
	spec := TopicSpec{Name: configsTopic, ReplicationFactor: -1, Property: "config.storage.topic"}
	old, next := NewConfigStore(opts, spec), NewConfigStore(opts, spec)
	for _, s := range []*ConfigStore{old, next} {
		must(t, s.Start(e.ctx))
		t.Cleanup(s.Close)
	}
	must(t, old.ClaimWrites(e.ctx, "connect-cluster-test"))
	must(t, old.PutConnectorConfig(e.ctx, "a", map[string]string{"connector.class": "X"}))
	must(t, next.ClaimWrites(e.ctx, "connect-cluster-test"))
	if err := old.PutConnectorConfig(e.ctx, "zombie", map[string]string{"connector.class": "X"}); err == nil {
		t.Fatal("the deposed leader wrote after the new leader claimed the config topic")
	}
	must(t, next.PutConnectorConfig(e.ctx, "b", map[string]string{"connector.class": "X"}))
	must(t, old.ReadToEnd(e.ctx))
	for name, s := range map[string]*ConfigStore{"old": old, "next": next} {
		got := s.Snapshot().Connectors
		if _, ok := got["zombie"]; ok || got["a"] == nil || got["b"] == nil {
			t.Errorf("%s store's connectors: %v; want a and b, not zombie", name, got)
		}
	}
	// A writer that has not claimed the topic (pause from any worker) still writes plainly.
	must(t, old.PutTargetState(e.ctx, "a", TargetPaused))
	// And a transactional write really is one: a read_uncommitted reader sees its control records.
	var control int
	cl := e.client(kgo.ConsumeTopics(configsTopic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.KeepControlRecords())
	for _, r := range cl.PollFetches(e.ctx).Records() {
		if r.Attrs.IsControl() {
			control++
		}
	}
	if control < 2 {
		t.Errorf("%d transaction markers in the config topic, want at least 2", control)
	}
}
