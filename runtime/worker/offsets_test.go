package worker

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/wasmconnect/wasmconnect/runtime/config"
	"github.com/wasmconnect/wasmconnect/runtime/store"
	"github.com/wasmconnect/wasmconnect/runtime/task"
)

// TestOffsetStoreOfAConnector checks which store a source connector's offsets go to: its own
// topic over the worker's in distributed mode, the worker's when it sets none, names the worker's
// topic, or runs on a standalone worker (no ConnectorOffsets), where the setting has no effect.
func TestOffsetStoreOfAConnector(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	opts := store.Options{SeedBrokers: c.ListenAddrs()}
	global := store.NewOffsetStore(opts, store.TopicSpec{Name: "offsets", Partitions: 1, ReplicationFactor: -1})
	if err := global.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer global.Close()
	own := func(topic string) *store.OffsetStore {
		return store.NewOffsetStore(opts, store.TopicSpec{Name: topic, Partitions: 1, ReplicationFactor: -1})
	}
	wcfg := &config.Worker{GroupID: "connect-cluster", Topics: config.InternalTopics{Offsets: config.Topic{Name: "offsets"}}}
	distributed := testWorker(t, Config{Worker: wcfg, Offsets: global, ConnectorOffsets: own})
	standalone := testWorker(t, Config{Worker: wcfg, Offsets: global})
	for _, tc := range []struct {
		w     *Worker
		topic string
		own   bool
	}{
		{distributed, "src-offsets", true},
		{distributed, "", false},
		{distributed, "offsets", false},
		{standalone, "src-offsets", false},
	} {
		s, done, err := tc.w.OffsetStore(ctx, map[string]string{"offsets.storage.topic": tc.topic})
		if err != nil {
			t.Fatal(err)
		}
		_, isOwn := s.(*store.ConnectorOffsetStore)
		if isOwn != tc.own || (!isOwn && s != store.OffsetBackingStore(global)) {
			t.Errorf("standalone=%v offsets.storage.topic=%q: store %T, want its own topic: %v", tc.w == standalone, tc.topic, s, tc.own)
		}
		// An exactly-once task of a connector with its own topic copies committed offsets to the
		// worker's topic after the transaction; one on the worker's topic has nothing to copy.
		tx := &task.Transactions{}
		if err := transactionalOffsets(tx, s); err != nil || tx.OffsetRecords == nil || (tx.Committed != nil) != tc.own {
			t.Errorf("offsets.storage.topic=%q: transactions %+v, %v", tc.topic, tx, err)
		}
		done()
	}
}
