package herder

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/wasmconnect/wasmconnect/runtime/config"
)

// The leader fences the previous generation of an exactly-once source connector's tasks before the
// new one starts (KIP-618): a task of the old generation that is still writing (a zombie, here
// task 1 of 2 with a transaction open) cannot commit afterwards, and the task count record names
// the new generation's size.
func TestLeaderFencesPreviousGenerationBeforeNewTasks(t *testing.T) {
	e := newEnv(t)
	e.h.cfg.Worker = e.worker(config.ExactlyOnceEnabled)
	cfg := map[string]string{"connector.class": "FileStreamSource", "file": "/dev/null", "topic": "in"}
	if err := e.configs.PutConnectorConfig(e.ctx, "src", cfg); err != nil {
		t.Fatal(err)
	}
	// The previous generation: two tasks, recorded by an earlier fencing.
	if err := e.configs.PutTaskCount(e.ctx, "src", 2); err != nil {
		t.Fatal(err)
	}
	zombie, err := kgo.NewClient(kgo.SeedBrokers(e.addrs...), kgo.TransactionalID("connect-cluster-src-1"), kgo.DefaultProduceTopic("in"))
	if err != nil {
		t.Fatal(err)
	}
	defer zombie.Close()
	if err := zombie.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := zombie.ProduceSync(e.ctx, &kgo.Record{Value: []byte("zombie")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// The new generation: one task.
	if err := e.configs.PutTaskConfigs(e.ctx, "src", []map[string]string{cfg}); err != nil {
		t.Fatal(err)
	}
	snap := e.configs.Snapshot()
	if _, ok := snap.PendingFencing["src"]; !ok || !e.h.awaitsFencing(snap, "src") {
		t.Fatalf("after new task configs the connector should await fencing: pending %v", snap.PendingFencing)
	}
	if err := e.h.FenceZombies(e.ctx, "src"); err != nil {
		t.Fatalf("FenceZombies: %v", err)
	}
	if err := zombie.EndTransaction(e.ctx, kgo.TryCommit); err == nil {
		t.Fatal("the zombie committed its transaction after the leader fenced it")
	}
	snap = e.configs.Snapshot()
	if _, ok := snap.PendingFencing["src"]; ok || snap.TaskCountRecords["src"] != 1 {
		t.Fatalf("after fencing: pending %v, task counts %v; want none pending and src=1", snap.PendingFencing, snap.TaskCountRecords)
	}
	if e.h.awaitsFencing(snap, "src") {
		t.Fatal("tasks still wait for fencing after the task count record")
	}
	// Nothing of the zombie's is visible to a read_committed reader.
	rd, err := kgo.NewClient(kgo.SeedBrokers(e.addrs...), kgo.ConsumeTopics("in"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	ctx, cancel := context.WithTimeout(e.ctx, 500*time.Millisecond)
	defer cancel()
	if n := rd.PollFetches(ctx).NumRecords(); n != 0 {
		t.Fatalf("read_committed saw %d records of the fenced zombie", n)
	}
}
