package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/wasmconnect/wasmconnect/runtime/store"
	"github.com/wasmconnect/wasmconnect/runtime/task"
)

// ConnectorOffsetsFunc returns an offsets store (not started) over a connector's own offsets
// topic, created if missing with the settings of the worker's offsets topic (compacted,
// offset.storage.partitions, offset.storage.replication.factor, offset.storage.* configs), as
// Kafka's KafkaOffsetBackingStore creates it.
type ConnectorOffsetsFunc func(topic string) *store.OffsetStore

// OffsetStore returns the store of a source connector's offsets, started, and the function that
// closes it: the worker's global store, or, for a connector with an offsets.storage.topic of its
// own in distributed mode, a store over that topic with the worker's as its fallback and second
// copy (store.ConnectorOffsetStore), as Kafka builds one for each source task and offsets request.
// Standalone workers ignore the setting, as Kafka's do; a topic named like the worker's offsets
// topic is the worker's.
func (w *Worker) OffsetStore(ctx context.Context, connCfg map[string]string) (store.OffsetBackingStore, func(), error) {
	topic := strings.TrimSpace(connCfg["offsets.storage.topic"])
	if w.connectorOffsets == nil || topic == "" || topic == w.cfg.Topics.Offsets.Name {
		return w.offsets, func() {}, nil
	}
	s := store.NewConnectorOffsetStore(w.connectorOffsets(topic), w.offsets, w.log)
	if err := s.Start(ctx); err != nil {
		return nil, nil, fmt.Errorf("opening the connector's offsets topic %s (offsets.storage.topic): %w", topic, err)
	}
	return s, s.Close, nil
}

// transactionalOffsets sets how an exactly-once source task stores its offsets: in its
// transaction, in the offsets topic it reads them from (the worker's, or the connector's own,
// which the worker's then gets a copy of once the transaction committed).
func transactionalOffsets(t *task.Transactions, offsets store.OffsetBackingStore) error {
	switch s := offsets.(type) {
	case *store.OffsetStore:
		t.OffsetRecords = func(_ context.Context, connector string, committable map[string][]byte) ([]*kgo.Record, error) {
			return s.Records(connector, offsetEntries(committable))
		}
	case *store.ConnectorOffsetStore:
		t.OffsetRecords = func(ctx context.Context, connector string, committable map[string][]byte) ([]*kgo.Record, error) {
			return s.TransactionRecords(ctx, connector, offsetEntries(committable))
		}
		t.Committed = func(ctx context.Context, connector string, committed map[string][]byte) {
			s.Committed(ctx, connector, offsetEntries(committed))
		}
	default:
		return fmt.Errorf("exactly-once source delivery needs an offsets topic, not %T", offsets)
	}
	return nil
}

// offsetEntries turns a task's offsets (source partition JSON -> offset JSON) into store entries.
func offsetEntries(offsets map[string][]byte) []store.OffsetEntry {
	entries := make([]store.OffsetEntry, 0, len(offsets))
	for p, off := range offsets {
		entries = append(entries, store.OffsetEntry{Partition: json.RawMessage(p), Offset: off})
	}
	return entries
}
