package store

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/wasmconnect/wasmconnect/sdk/go/connect"
)

// OffsetEntry is one source partition and its offset, both JSON objects. A
// nil (or JSON null) Offset in a Put removes the partition's offset.
type OffsetEntry struct {
	Partition json.RawMessage
	Offset    json.RawMessage
}

// OffsetBackingStore holds source connector offsets. OffsetStore keeps
// them in the offsets topic (distributed mode); FileOffsetStore keeps them
// in a local file (standalone mode's offset.storage.file.filename).
//
// Partitions and offsets are JSON objects whose values are primitives, as
// Kafka Connect requires. Lookups are by content, not by bytes: partitions
// are canonicalized (compact JSON, sorted keys) before they are compared.
type OffsetBackingStore interface {
	// Start loads the stored offsets.
	Start(ctx context.Context) error
	// Close releases the store.
	Close()
	// ReadToEnd makes offsets written elsewhere (by other workers)
	// visible to Get. Call it before reading offsets for a task that is
	// starting.
	ReadToEnd(ctx context.Context) error
	// Get returns the offset stored for a connector's source partition.
	// It reports false if there is none or partition is not a JSON
	// object.
	Get(connector string, partition []byte) (offset []byte, ok bool)
	// Put stores offsets, returning once they are durable and visible to
	// Get.
	Put(ctx context.Context, connector string, entries []OffsetEntry) error
	// Offsets returns all of a connector's offsets, sorted by partition.
	Offsets(connector string) []OffsetEntry
}

var (
	_ OffsetBackingStore = (*OffsetStore)(nil)
	_ OffsetBackingStore = (*FileOffsetStore)(nil)
)

// offsetIndex maps (connector, canonical partition) to offsets, remembering
// the raw key bytes each was stored under.
//
// Java looks offsets up by exact key bytes, and a Java connector's
// partition map serializes in its own iteration order, so the topic can
// hold one logical partition under several byte-different keys. We keep
// all of them: Get returns the value applied last, and Put writes every
// known key so that Java workers, whichever bytes they look up, see the
// new offset (and a reset tombstones them all). Keys we create ourselves
// are canonical.
type offsetIndex struct {
	seq   uint64
	conns map[string]map[string]*offsetSlot // connector -> canonical partition
}

type offsetSlot struct {
	partition []byte                 // canonical
	values    map[string]offsetValue // raw key -> value
}

type offsetValue struct {
	value []byte
	seq   uint64 // when applied, to find the latest
}

func (x *offsetIndex) slot(connector string, canonical []byte) *offsetSlot {
	return x.conns[connector][string(canonical)]
}

// apply folds one record into the index.
func (x *offsetIndex) apply(key, value []byte) error {
	connector, canonical, err := parseOffsetKey(key)
	if err != nil {
		return err
	}
	if x.conns == nil {
		x.conns = make(map[string]map[string]*offsetSlot)
	}
	slots := x.conns[connector]
	sl := slots[string(canonical)]
	if value == nil {
		if sl != nil {
			delete(sl.values, string(key))
			if len(sl.values) == 0 {
				delete(slots, string(canonical))
			}
			if len(slots) == 0 {
				delete(x.conns, connector)
			}
		}
		return nil
	}
	if slots == nil {
		slots = make(map[string]*offsetSlot)
		x.conns[connector] = slots
	}
	if sl == nil {
		sl = &offsetSlot{partition: canonical, values: make(map[string]offsetValue)}
		slots[string(canonical)] = sl
	}
	x.seq++
	sl.values[string(key)] = offsetValue{value: slices.Clone(value), seq: x.seq}
	return nil
}

func (sl *offsetSlot) latest() []byte {
	var best offsetValue
	for _, v := range sl.values {
		if v.seq > best.seq {
			best = v
		}
	}
	return best.value
}

func (x *offsetIndex) get(connector string, partition []byte) ([]byte, bool) {
	canonical, err := canonicalOffsetObject(partition)
	if err != nil {
		return nil, false
	}
	sl := x.slot(connector, canonical)
	if sl == nil {
		return nil, false
	}
	return slices.Clone(sl.latest()), true
}

func (x *offsetIndex) entries(connector string) []OffsetEntry {
	slots := x.conns[connector]
	out := make([]OffsetEntry, 0, len(slots))
	for _, sl := range slots {
		out = append(out, OffsetEntry{Partition: slices.Clone(sl.partition), Offset: slices.Clone(sl.latest())})
	}
	sortEntries(out)
	return out
}

// sortEntries sorts entries by canonical partition.
func sortEntries(entries []OffsetEntry) {
	slices.SortFunc(entries, func(a, b OffsetEntry) int { return bytes.Compare(a.Partition, b.Partition) })
}

// records turns a Put into the records to write: one per raw key already
// holding the partition, or one canonical key for a new partition.
func (x *offsetIndex) records(connector string, entries []OffsetEntry) ([]Record, error) {
	var recs []Record
	for _, e := range entries {
		canonical, err := canonicalOffsetObject(e.Partition)
		if err != nil {
			return nil, fmt.Errorf("source partition %s: %w", e.Partition, err)
		}
		var value []byte
		if !isTombstone(e) {
			if value, err = canonicalOffsetObject(e.Offset); err != nil {
				return nil, fmt.Errorf("offset %s of source partition %s: %w", e.Offset, canonical, err)
			}
		}
		sl := x.slot(connector, canonical)
		if sl == nil || len(sl.values) == 0 {
			recs = append(recs, Record{offsetKey(connector, canonical), value})
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(sl.values)) {
			recs = append(recs, Record{[]byte(k), value})
		}
	}
	return recs, nil
}

// offsetKey is the internal-JSON array ["<connector>",{partition}].
func offsetKey(connector string, canonicalPartition []byte) []byte {
	b := connect.AppendJSONString([]byte{'['}, connector)
	b = append(b, ',')
	b = append(b, canonicalPartition...)
	return append(b, ']')
}

// parseOffsetKey splits an offsets topic key into the connector name and
// the canonical partition.
func parseOffsetKey(key []byte) (string, []byte, error) {
	v, err := connect.DecodeJSON(key)
	if err != nil {
		return "", nil, fmt.Errorf("offset key is not JSON: %w", err)
	}
	arr, ok := v.([]any)
	if !ok || len(arr) != 2 {
		return "", nil, errors.New(`offset key is not a ["<connector>",{partition}] array`)
	}
	connector, ok := arr[0].(string)
	if !ok {
		return "", nil, fmt.Errorf("offset key's connector name is %s, want a string", jsonKind(arr[0]))
	}
	if _, ok := arr[1].(map[string]any); !ok {
		return "", nil, fmt.Errorf("offset key's partition is %s, want an object", jsonKind(arr[1]))
	}
	canonical, err := appendCanonicalJSON(nil, arr[1])
	if err != nil {
		return "", nil, err
	}
	return connector, canonical, nil
}

// canonicalOffsetObject validates a partition or offset map the way Kafka
// Connect's OffsetUtils.validateFormat does (string keys, primitive values)
// and returns its canonical bytes.
func canonicalOffsetObject(data []byte) ([]byte, error) {
	v, err := connect.DecodeJSON(data)
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("is %s, want a JSON object", jsonKind(v))
	}
	for k, e := range obj {
		switch e.(type) {
		case []any, map[string]any:
			return nil, fmt.Errorf("field %q is %s; Kafka Connect only allows primitive values (string, number, boolean, null)", k, jsonKind(e))
		}
	}
	return appendCanonicalJSON(nil, obj)
}

// OffsetStore keeps source offsets in the offsets topic, keyed and encoded
// as Kafka Connect's KafkaOffsetBackingStore does, so Go and Java workers
// can share it.
type OffsetStore struct {
	log    recordLog
	topic  string
	logger *slog.Logger

	mu  sync.Mutex
	idx offsetIndex
}

// NewOffsetStore returns an offset store over topic. It does no I/O until
// Start.
func NewOffsetStore(o Options, topic TopicSpec) *OffsetStore {
	s := &OffsetStore{topic: topic.Name, logger: o.logger().With("topic", topic.Name)}
	s.log = NewLog(o.logConfig(topic, "offsets", s.apply))
	return s
}

// Start creates or checks the topic and reads it to the end.
func (s *OffsetStore) Start(ctx context.Context) error { return s.log.Start(ctx) }

// Close stops the store.
func (s *OffsetStore) Close() { s.log.Close() }

// ReadToEnd waits until every offset written so far, by any worker, is
// visible.
func (s *OffsetStore) ReadToEnd(ctx context.Context) error { return s.log.ReadToEnd(ctx) }

// Get returns the offset of a connector's source partition.
func (s *OffsetStore) Get(connector string, partition []byte) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.idx.get(connector, partition)
}

// Offsets returns a connector's offsets, sorted by canonical partition.
func (s *OffsetStore) Offsets(connector string) []OffsetEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.idx.entries(connector)
}

// Put writes offsets and waits until the brokers acknowledged them and
// they were read back, so Get sees them when Put returns.
func (s *OffsetStore) Put(ctx context.Context, connector string, entries []OffsetEntry) error {
	s.mu.Lock()
	recs, err := s.idx.records(connector, entries)
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("writing offsets of connector %q: %w", connector, err)
	}
	if err := s.log.Write(ctx, recs...); err != nil {
		return fmt.Errorf("writing %d offsets of connector %q: %w", len(entries), connector, err)
	}
	return nil
}

// Records returns the records that store entries in the offsets topic, for a writer that produces
// them itself: a source task with exactly-once support writes them in its own transaction, next
// to the records they are the offsets of. The records carry the topic; the key partitions them
// as Put would.
func (s *OffsetStore) Records(connector string, entries []OffsetEntry) ([]*kgo.Record, error) {
	s.mu.Lock()
	recs, err := s.idx.records(connector, entries)
	s.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("writing offsets of connector %q: %w", connector, err)
	}
	out := make([]*kgo.Record, len(recs))
	for i, r := range recs {
		out[i] = &kgo.Record{Topic: s.topic, Key: r.Key, Value: r.Value}
	}
	return out, nil
}

func (s *OffsetStore) apply(r *kgo.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.idx.apply(r.Key, r.Value); err != nil {
		s.logger.Warn("ignoring offset record", "key", string(r.Key), "offset", r.Offset, "err", err)
	}
}

// FileOffsetStore keeps source offsets in a local file, for standalone
// mode. Every Put rewrites the file atomically (write, sync, rename).
//
// The file is JSON: {"version":1,"offsets":[{"key":…,"value":…},…]},
// with keys and values exactly as they would be in the offsets topic. It
// is not the Java-serialized map Kafka Connect's FileOffsetBackingStore
// writes, so the two cannot read each other's files.
type FileOffsetStore struct {
	path string

	mu  sync.Mutex
	idx offsetIndex
}

// NewFileOffsetStore returns a store backed by the file at path, which is
// created on the first Put.
func NewFileOffsetStore(path string) *FileOffsetStore {
	return &FileOffsetStore{path: path}
}

type offsetFile struct {
	Version int `json:"version"`
	Offsets []struct {
		Key   json.RawMessage `json:"key"`
		Value json.RawMessage `json:"value"`
	} `json:"offsets"`
}

// Start loads the file; a missing file means no offsets yet.
func (s *FileOffsetStore) Start(context.Context) error {
	data, err := os.ReadFile(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading offsets file: %w", err)
	}
	var f offsetFile
	if err := json.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("offsets file %s is not valid (fix or delete it to start from scratch): %w", s.path, err)
	}
	if f.Version != 1 {
		return fmt.Errorf("offsets file %s has version %d; this worker reads version 1", s.path, f.Version)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.idx = offsetIndex{}
	for i, e := range f.Offsets {
		if err := s.idx.apply(e.Key, e.Value); err != nil {
			return fmt.Errorf("offsets file %s, entry %d: %w", s.path, i, err)
		}
	}
	return nil
}

// Close does nothing: every Put is already on disk.
func (s *FileOffsetStore) Close() {}

// ReadToEnd does nothing: only this process writes the file.
func (s *FileOffsetStore) ReadToEnd(context.Context) error { return nil }

// Get returns the offset of a connector's source partition.
func (s *FileOffsetStore) Get(connector string, partition []byte) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.idx.get(connector, partition)
}

// Offsets returns a connector's offsets, sorted by canonical partition.
func (s *FileOffsetStore) Offsets(connector string) []OffsetEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.idx.entries(connector)
}

// Put applies offsets and rewrites the file. If writing the file fails,
// the offsets in memory are rolled back.
func (s *FileOffsetStore) Put(_ context.Context, connector string, entries []OffsetEntry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	recs, err := s.idx.records(connector, entries)
	if err != nil {
		return fmt.Errorf("writing offsets of connector %q: %w", connector, err)
	}
	next := s.idx.clone()
	for _, r := range recs {
		if err := next.apply(r.Key, r.Value); err != nil {
			return fmt.Errorf("writing offsets of connector %q: %w", connector, err)
		}
	}
	if err := writeFileAtomic(s.path, next.encodeFile()); err != nil {
		return fmt.Errorf("writing offsets of connector %q: %w", connector, err)
	}
	s.idx = next
	return nil
}

func (x *offsetIndex) clone() offsetIndex {
	c := offsetIndex{seq: x.seq, conns: make(map[string]map[string]*offsetSlot, len(x.conns))}
	for conn, slots := range x.conns {
		cs := make(map[string]*offsetSlot, len(slots))
		for k, sl := range slots {
			vals := make(map[string]offsetValue, len(sl.values))
			for rk, v := range sl.values {
				vals[rk] = v
			}
			cs[k] = &offsetSlot{partition: sl.partition, values: vals}
		}
		c.conns[conn] = cs
	}
	return c
}

// encodeFile writes every stored key and value, oldest first, so reloading
// the file applies them in the same order. The bytes are written as they
// are: encoding/json would HTML-escape them.
func (x *offsetIndex) encodeFile() []byte {
	type kv struct {
		key string
		v   offsetValue
	}
	var all []kv
	for _, slots := range x.conns {
		for _, sl := range slots {
			for k, v := range sl.values {
				all = append(all, kv{k, v})
			}
		}
	}
	slices.SortFunc(all, func(a, b kv) int { return cmp.Compare(a.v.seq, b.v.seq) })
	var b strings.Builder
	b.WriteString(`{"version":1,"offsets":[`)
	for i, e := range all {
		if i > 0 {
			b.WriteString(",\n")
		} else {
			b.WriteString("\n")
		}
		b.WriteString(`{"key":`)
		b.WriteString(e.key)
		b.WriteString(`,"value":`)
		b.Write(e.v.value)
		b.WriteString(`}`)
	}
	b.WriteString("\n]}\n")
	return []byte(b.String())
}

// writeFileAtomic replaces path with data so that a crash leaves either the
// old or the new file, never a torn one.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating directory for offsets file: %w", err)
	}
	f, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("creating temporary offsets file: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("writing temporary offsets file: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("syncing temporary offsets file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("closing temporary offsets file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("replacing offsets file: %w", err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // make the rename durable; best effort
		d.Close()
	}
	return nil
}
