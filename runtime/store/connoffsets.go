package store

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ConnectorOffsetStore holds the offsets of a source connector that has an offsets topic of its
// own (offsets.storage.topic, KIP-618), as Kafka Connect's ConnectorOffsetBackingStore built
// withConnectorAndWorkerStores does: the connector's topic is the primary store, the worker's
// global offsets topic the secondary.
//
//   - Reads prefer the primary and fall back to the secondary for partitions the primary lacks,
//     so a connector moved to a topic of its own resumes from what it committed before.
//   - Writes go to the primary, then, once that succeeded, to the secondary too; a failure of that
//     second write is only logged, as the primary is the store of record.
//   - Tombstones (a reset partition) go to the secondary first, failing the write if they cannot
//     (KAFKA-15018): a tombstone that reached only the primary would let the fallback bring back
//     the offset that was just reset.
//
// The secondary belongs to the worker, which starts and closes it; Start and Close only start and
// close the primary.
type ConnectorOffsetStore struct {
	primary   *OffsetStore
	secondary OffsetBackingStore
	logger    *slog.Logger
}

var _ OffsetBackingStore = (*ConnectorOffsetStore)(nil)

// NewConnectorOffsetStore returns the store over the connector's own offsets store (not started)
// and the worker's global one (started).
func NewConnectorOffsetStore(primary *OffsetStore, secondary OffsetBackingStore, logger *slog.Logger) *ConnectorOffsetStore {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &ConnectorOffsetStore{primary: primary, secondary: secondary, logger: logger.With("topic", primary.topic)}
}

// Start creates the connector's offsets topic if it is missing and reads it to its end.
func (s *ConnectorOffsetStore) Start(ctx context.Context) error { return s.primary.Start(ctx) }

// Close closes the connector's store; the worker's stays open for its other connectors.
func (s *ConnectorOffsetStore) Close() { s.primary.Close() }

// ReadToEnd catches up with both topics, since a read may fall back to the secondary.
func (s *ConnectorOffsetStore) ReadToEnd(ctx context.Context) error {
	if err := s.primary.ReadToEnd(ctx); err != nil {
		return err
	}
	return s.secondary.ReadToEnd(ctx)
}

// Get returns the primary's offset of the partition, else the secondary's.
func (s *ConnectorOffsetStore) Get(connector string, partition []byte) ([]byte, bool) {
	if off, ok := s.primary.Get(connector, partition); ok {
		return off, true
	}
	return s.secondary.Get(connector, partition)
}

// Offsets returns the connector's partitions of both stores, each with the offset Get returns,
// sorted by partition (Kafka's connectorPartitions is the union of both stores').
func (s *ConnectorOffsetStore) Offsets(connector string) []OffsetEntry {
	out := s.primary.Offsets(connector)
	n := len(out)
	for _, e := range s.secondary.Offsets(connector) {
		if _, ok := s.primary.Get(connector, e.Partition); !ok {
			out = append(out, e)
		}
	}
	if len(out) > n {
		sortEntries(out)
	}
	return out
}

// Put writes the offsets to both stores in Kafka's order: tombstones to the secondary, everything
// to the primary, then the other offsets to the secondary (a failure there is only logged).
func (s *ConnectorOffsetStore) Put(ctx context.Context, connector string, entries []OffsetEntry) error {
	if err := s.putTombstones(ctx, connector, entries); err != nil {
		return err
	}
	if err := s.primary.Put(ctx, connector, entries); err != nil {
		return err
	}
	s.Committed(ctx, connector, entries)
	return nil
}

// TransactionRecords is Records for an exactly-once source task, whose transaction holds the
// primary's writes: it first writes the tombstones among entries to the secondary, as Put does,
// then returns the records that store entries in the connector's topic.
func (s *ConnectorOffsetStore) TransactionRecords(ctx context.Context, connector string, entries []OffsetEntry) ([]*kgo.Record, error) {
	if err := s.putTombstones(ctx, connector, entries); err != nil {
		return nil, err
	}
	return s.primary.Records(connector, entries)
}

// Committed writes to the secondary the offsets (not the tombstones) that the primary now holds:
// after Put's primary write, or after the commit of the transaction that held them. Failures are
// logged, as Kafka does: the primary has them.
func (s *ConnectorOffsetStore) Committed(ctx context.Context, connector string, entries []OffsetEntry) {
	var offsets []OffsetEntry
	for _, e := range entries {
		if !isTombstone(e) {
			offsets = append(offsets, e)
		}
	}
	if len(offsets) == 0 {
		return
	}
	if err := s.secondary.Put(ctx, connector, offsets); err != nil {
		s.logger.Warn("failed to write offsets to the worker's offsets topic (secondary store); the connector's offsets topic has them",
			"connector", connector, "err", err)
	}
}

// putTombstones writes the tombstones among entries to the secondary.
func (s *ConnectorOffsetStore) putTombstones(ctx context.Context, connector string, entries []OffsetEntry) error {
	var tombstones []OffsetEntry
	for _, e := range entries {
		if isTombstone(e) {
			tombstones = append(tombstones, e)
		}
	}
	if len(tombstones) == 0 {
		return nil
	}
	if err := s.secondary.Put(ctx, connector, tombstones); err != nil {
		return fmt.Errorf("writing %d tombstones to the worker's offsets topic before the connector's: %w", len(tombstones), err)
	}
	return nil
}

// isTombstone reports whether e removes its partition's offset (nil or JSON null).
func isTombstone(e OffsetEntry) bool {
	return len(e.Offset) == 0 || bytes.Equal(bytes.TrimSpace(e.Offset), []byte("null"))
}
