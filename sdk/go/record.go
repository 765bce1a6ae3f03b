package sdk

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
	"unsafe"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// Data is a key, value or header value in Connect's data model: null, bytes, a string, or a JSON
// payload with an optional Connect schema (see wire.Data and sdk/ABI.md §5.1).
type Data = wire.Data

// Header is a record header.
type Header = wire.Header

// TopicPartitionOffset is the next offset to read in a topic partition (the input of SinkTask.Flush).
type TopicPartitionOffset = wire.TopicPartitionOffset

// Data tags.
const (
	TagNull   = wire.TagNull
	TagBytes  = wire.TagBytes
	TagString = wire.TagString
	TagJSON   = wire.TagJSON
)

// Null returns the null value.
func Null() Data { return wire.Null() }

// String returns a text value.
func String(s string) Data { return wire.String(s) }

// Bytes returns a raw bytes value.
func Bytes(b []byte) Data { return wire.Bytes(b) }

// JSON returns a value given as a JSON payload with an optional Connect schema (nil = schemaless), both
// as JsonConverter writes them.
func JSON(schema, payload []byte) Data { return wire.JSON(schema, payload) }

// SourceRecord is a record produced by a source task.
type SourceRecord struct {
	Topic string
	// Partition is the Kafka partition; nil lets the producer choose. Go 1.26: new(int32(3)).
	Partition *int32
	Key       Data
	Value     Data
	Headers   []Header
	// Timestamp is the record's timestamp; the zero Time means none.
	Timestamp time.Time
	// SourcePartition and SourceOffset say where the record came from, e.g. {"filename": "/data/a"}
	// and {"position": 4711}; the host stores the offset once the record is written. A record may leave
	// both nil; a partition without an offset is not sent. The SDK sends the partition and offset only
	// with the last record of each source partition in a batch that has an offset (the one that
	// matters), so a task may set SourceOffset on that record only.
	SourcePartition map[string]any
	SourceOffset    map[string]any
}

// SinkRecord is a record consumed by a sink task. Its byte slices stay valid after Put returns.
type SinkRecord struct {
	Topic     string
	Partition int32
	Offset    int64
	Key       Data
	Value     Data
	Headers   []Header
	Timestamp time.Time // zero: none
}

func millis(t time.Time) int64 {
	if t.IsZero() {
		return -1
	}
	return t.UnixMilli()
}

func fromMillis(ms int64) time.Time {
	if ms < 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// sourceEncoder encodes source record batches. It keeps its buffers between batches and caches the
// JSON of recently seen source partitions: a task usually has one partition, and encoding a map to
// JSON for every record is costly in a wasm guest.
type sourceEncoder struct {
	recs  []wire.Record
	parts [][]byte
	seen  map[string]struct{}
	cache [4]partitionJSON
	next  int
}

type partitionJSON struct {
	m    map[string]any // a shallow copy of the partition map (values are scalars)
	json []byte
}

// partitionJSON returns the JSON of a source partition map.
func (e *sourceEncoder) partitionJSON(m map[string]any) ([]byte, error) {
	for i := range e.cache {
		if c := &e.cache[i]; c.json != nil && sameScalarMap(c.m, m) {
			return c.json, nil
		}
	}
	j, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("source partition %v: %w", m, err)
	}
	if cp, ok := scalarCopy(m); ok {
		e.cache[e.next] = partitionJSON{m: cp, json: j}
		e.next = (e.next + 1) % len(e.cache)
	}
	return j, nil
}

func isScalar(v any) bool {
	switch v.(type) {
	case nil, string, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64, json.Number:
		return true
	}
	return false
}

func scalarCopy(m map[string]any) (map[string]any, bool) {
	cp := make(map[string]any, len(m))
	for k, v := range m {
		if !isScalar(v) {
			return nil, false
		}
		cp[k] = v
	}
	return cp, true
}

func sameScalarMap(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, va := range a {
		vb, ok := b[k]
		if !ok || !isScalar(vb) || va != vb {
			return false
		}
	}
	return true
}

// encode appends the record batch for rs to dst. Source partition and offset JSON go only on the last
// record of each source partition that carries an offset (sdk/ABI.md §5.2).
func (e *sourceEncoder) encode(dst []byte, rs []SourceRecord) ([]byte, error) {
	e.recs = resize(e.recs[:0], len(rs))
	e.parts = resize(e.parts[:0], len(rs))
	var lastMap unsafe.Pointer // within a batch the same map has the same JSON: skip the comparison
	var lastJSON []byte
	for i := range rs {
		r := &rs[i]
		var p []byte
		if r.SourcePartition != nil && r.SourceOffset != nil {
			if id := mapID(r.SourcePartition); id == lastMap {
				p = lastJSON
			} else {
				var err error
				if p, err = e.partitionJSON(r.SourcePartition); err != nil {
					return dst, fmt.Errorf("record %d: %w", i, err)
				}
				lastMap, lastJSON = id, p
			}
		}
		e.parts[i] = p
		part := int32(-1)
		if r.Partition != nil {
			part = *r.Partition
		}
		e.recs[i] = wire.Record{
			Topic: r.Topic, Partition: part, Offset: -1, Timestamp: millis(r.Timestamp),
			Key: r.Key, Value: r.Value, Headers: r.Headers,
		}
	}
	if e.seen == nil {
		e.seen = map[string]struct{}{}
	}
	clear(e.seen)
	var last []byte
	for i := len(rs) - 1; i >= 0; i-- {
		p := e.parts[i]
		if p == nil || sameSlice(p, last) {
			continue
		}
		last = p
		if _, dup := e.seen[string(p)]; dup {
			continue
		}
		e.seen[string(p)] = struct{}{}
		off, err := json.Marshal(rs[i].SourceOffset)
		if err != nil {
			return dst, fmt.Errorf("record %d: source offset %v: %w", i, rs[i].SourceOffset, err)
		}
		e.recs[i].SourcePartition = p
		e.recs[i].SourceOffset = off
	}
	dst = wire.AppendRecords(dst, e.recs)
	clear(e.recs) // drop references to the plugin's data
	clear(e.parts)
	return dst, nil
}

// mapID identifies a map object (not its contents).
func mapID(m map[string]any) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&m)) }

func sameSlice(a, b []byte) bool {
	return len(a) == len(b) && len(a) > 0 && unsafe.SliceData(a) == unsafe.SliceData(b)
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// decodeSinkRecords decodes a record batch into sink records. The byte fields alias b.
func decodeSinkRecords(b []byte) ([]SinkRecord, error) {
	rs, err := wire.DecodeRecords(b)
	if err != nil {
		return nil, err
	}
	out := make([]SinkRecord, len(rs))
	for i := range rs {
		r := &rs[i]
		out[i] = SinkRecord{
			Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Timestamp: fromMillis(r.Timestamp),
			Key: r.Key, Value: r.Value, Headers: r.Headers,
		}
	}
	return out, nil
}

// decodeCommitted decodes COMMIT's input (sdk/ABI.md §4) for an OffsetCommitter.
func decodeCommitted(in []byte) ([]CommittedOffset, error) {
	raw, err := wire.DecodeCommitted(in)
	if err != nil {
		return nil, fmt.Errorf("COMMIT: bad input: %w", err)
	}
	out := make([]CommittedOffset, len(raw))
	for i, c := range raw {
		if out[i].Partition, err = decodeJSONObject(c.Partition); err != nil {
			return nil, fmt.Errorf("COMMIT: partition %s: %w", c.Partition, err)
		}
		if out[i].Offset, err = decodeJSONObject(c.Offset); err != nil {
			return nil, fmt.Errorf("COMMIT: offset %s: %w", c.Offset, err)
		}
	}
	return out, nil
}

// decodeJSONObject decodes a JSON object, with integer numbers as int64 and other numbers as float64.
func decodeJSONObject(b []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	return normalizeNumbers(m).(map[string]any), nil
}

func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalizeNumbers(e)
		}
	}
	return v
}
