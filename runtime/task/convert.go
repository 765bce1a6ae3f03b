package task

import (
	"bytes"
	"context"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// fromConnect converts values in a single converter call.
//
// A batch whose values are all null (the keys of a file source, say) is not sent: a null without a
// schema is null bytes for every converter (sdk/ABI.md §4), and skipping the call saves a trip into
// the plugin per batch.
func fromConnect(ctx context.Context, c Converter, in []wire.TopicData) ([][]byte, error) {
	allNull := true
	for i := range in {
		allNull = allNull && in[i].Value.Tag == wire.TagNull
	}
	if allNull {
		return make([][]byte, len(in)), nil
	}
	out, err := c.FromConnect(ctx, in)
	if err == nil && len(out) != len(in) {
		err = fmt.Errorf("converter returned %d values for %d records", len(out), len(in))
	}
	return out, err
}

// bufferedConverter is a Converter that can serialise into memory the task hands it
// (wasmhost.Object): the result is copied into buf and decoded into out when they are large
// enough, and the values alias the returned buffer.
type bufferedConverter interface {
	FromConnectInto(ctx context.Context, values []wire.TopicData, buf []byte, out [][]byte) ([][]byte, []byte, error)
}

// fromConnectInto is fromConnect into the batch memory *out and *buf when c supports it (they are
// updated to what the values alias), for a batch with a value that is not null.
func fromConnectInto(ctx context.Context, c Converter, in []wire.TopicData, out *[][]byte, buf *[]byte) ([][]byte, error) {
	bc, ok := c.(bufferedConverter)
	if !ok {
		return fromConnect(ctx, c, in)
	}
	res, b, err := bc.FromConnectInto(ctx, in, *buf, *out)
	*buf = b
	if cap(res) > cap(*out) {
		*out = res
	}
	if err == nil && len(res) != len(in) {
		err = fmt.Errorf("converter returned %d values for %d records", len(res), len(in))
	}
	return res, err
}

// toConnect converts bytes in a single converter call; null bytes are a null value for every
// converter, so an all-null batch is not sent.
func toConnect(ctx context.Context, c Converter, in []wire.TopicBytes) ([]wire.Data, error) {
	allNull := true
	for i := range in {
		allNull = allNull && in[i].Bytes == nil
	}
	if allNull {
		return make([]wire.Data, len(in)), nil
	}
	out, err := c.ToConnect(ctx, in)
	if err == nil && len(out) != len(in) {
		err = fmt.Errorf("converter returned %d values for %d records", len(out), len(in))
	}
	return out, err
}

type explicitPartitionKey struct{}

// explicitPartition marks a record whose partition the plugin chose; one context for all of them,
// as it carries nothing else.
var explicitPartition = context.WithValue(context.Background(), explicitPartitionKey{}, true)

// setKafkaRecord overwrites kr (every field: a reused record keeps nothing of its last use) with
// a converted source record; one without a timestamp gets now. The header values alias r's unless
// own is set, which a batch whose POLL buffer is reused once it is converted needs: the producer
// holds its records until they are acknowledged.
func setKafkaRecord(kr *kgo.Record, r *wire.ConvertedRecord, now time.Time, own bool) {
	*kr = kgo.Record{Topic: r.Topic, Key: r.Key, Value: r.Value, Timestamp: now}
	if r.Timestamp >= 0 {
		kr.Timestamp = time.UnixMilli(r.Timestamp)
	}
	if r.Partition >= 0 {
		kr.Partition = r.Partition
		kr.Context = explicitPartition
	}
	if len(r.Headers) > 0 {
		kr.Headers = make([]kgo.RecordHeader, len(r.Headers))
		for i, h := range r.Headers {
			v := headerBytes(h.Value)
			if own && v != nil {
				v = bytes.Clone(v)
			}
			kr.Headers[i] = kgo.RecordHeader{Key: h.Key, Value: v}
		}
	}
}

// headerBytes serializes a header value as Kafka Connect's SimpleHeaderConverter does for the
// common cases: text and bytes as they are, structured values as their JSON.
func headerBytes(d wire.Data) []byte {
	if d.Tag == wire.TagNull {
		return nil
	}
	return d.Bytes
}

// headerData is headerBytes' inverse for sink records: text when it is valid UTF-8, else bytes.
func headerData(b []byte) wire.Data {
	switch {
	case b == nil:
		return wire.Null()
	case utf8.Valid(b):
		return wire.Data{Tag: wire.TagString, Bytes: b}
	default:
		return wire.Bytes(b)
	}
}

// ProducerOpts are the producer settings of a source task: Kafka Connect's worker producer
// defaults (acks=all, retries until the record is written) and a partitioner that honours a
// partition the plugin chose and otherwise hashes the key with murmur2 like Java's.
func ProducerOpts() []kgo.Opt {
	return []kgo.Opt{
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(explicitOrKeyPartitioner{kgo.StickyKeyPartitioner(nil)}),
		kgo.ProducerLinger(5 * time.Millisecond),
		// Kafka's buffer.memory default: what a task holds waiting for the broker is bounded in
		// bytes, not only in records (franz-go's default), so large records cannot pile up.
		kgo.MaxBufferedBytes(32 << 20),
		// A source writes to topics that may not exist yet; as with Kafka's producer, the broker's
		// auto.create.topics.enable decides whether they are created.
		kgo.AllowAutoTopicCreation(),
	}
}

type explicitOrKeyPartitioner struct{ fallback kgo.Partitioner }

func (p explicitOrKeyPartitioner) ForTopic(t string) kgo.TopicPartitioner {
	return explicitTopicPartitioner{p.fallback.ForTopic(t)}
}

type explicitTopicPartitioner struct{ fallback kgo.TopicPartitioner }

func explicit(r *kgo.Record) bool {
	return r.Context != nil && r.Context.Value(explicitPartitionKey{}) != nil
}

func (p explicitTopicPartitioner) RequiresConsistency(r *kgo.Record) bool {
	return explicit(r) || p.fallback.RequiresConsistency(r)
}

func (p explicitTopicPartitioner) Partition(r *kgo.Record, n int) int {
	if explicit(r) {
		// A partition the topic does not have cannot be produced to; kgo needs an index in range, so
		// it wraps, as the plugin's intent (a fixed partition per source partition) is kept.
		return int(r.Partition) % n
	}
	return p.fallback.Partition(r, n)
}
