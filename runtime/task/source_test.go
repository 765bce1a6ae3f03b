package task

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

func rec(partition, offset string) wire.Record {
	r := wire.Record{Topic: "t", Partition: -1, Offset: -1, Timestamp: -1, Value: wire.String("v")}
	if partition != "" {
		r.SourcePartition, r.SourceOffset = []byte(partition), []byte(offset)
	}
	return r
}

func TestSubmittedCommitsOnlyFullyAckedPrefix(t *testing.T) {
	var s submitted
	a := s.submit([]wire.Record{rec(`{"f":"a"}`, `{"p":1}`), rec("", ""), rec(`{"f":"a"}`, `{"p":2}`)}, 3)
	b := s.submit([]wire.Record{rec(`{"f":"a"}`, `{"p":3}`), rec(`{"f":"b"}`, `{"p":9}`)}, 2)

	if got := s.committable(); got != nil {
		t.Fatalf("nothing acked yet, got %q", got)
	}
	// The second batch is acked before the first: nothing may be committed, or a crash would skip
	// the first batch's unwritten records.
	b.ack()
	b.ack()
	a.ack()
	a.ack()
	if got := s.committable(); got != nil {
		t.Fatalf("first batch not fully acked, got %q", got)
	}
	a.ack()
	got := s.committable()
	if string(got[`{"f":"a"}`]) != `{"p":3}` || string(got[`{"f":"b"}`]) != `{"p":9}` || len(got) != 2 {
		t.Fatalf("after every ack: %q", got)
	}
	if again := s.committable(); again != nil {
		t.Fatalf("offsets handed out twice: %q", again)
	}
}

// TestSubmittedKeepsNoPolledBuffer checks that batches waiting for their acks, and batches already
// committed, keep no reference to the POLL result the records were decoded from: a source at a high
// rate would otherwise hold offset.flush.interval.ms worth of results in memory.
func TestSubmittedKeepsNoPolledBuffer(t *testing.T) {
	var s submitted
	result := []byte(`{"f":"a"}{"p":1}`) // a POLL result buffer the records point into
	r := rec("", "")
	r.SourcePartition, r.SourceOffset = result[:9], result[9:]
	a := s.submit([]wire.Record{r}, 1)
	b := s.submit([]wire.Record{rec(`{"f":"a"}`, `{"p":2}`)}, 1)
	copy(result, "XXXXXXXXXXXXXXXX") // the buffer is reused for the next POLL
	if got := string(a.offsets[`{"f":"a"}`]); got != `{"p":1}` {
		t.Fatalf("the pending batch's offset changed with the POLL buffer: %q", got)
	}
	a.ack()
	if got := s.committable(); string(got[`{"f":"a"}`]) != `{"p":1}` {
		t.Fatalf("committed %q", got)
	}
	if len(s.batches) != 1 || s.batches[0] != b {
		t.Fatalf("pending batches %v, want the second batch only", s.batches)
	}
	if tail := s.batches[:cap(s.batches)][1:]; tail[0] != nil {
		t.Fatalf("the committed batch is still referenced by the backing array: %v", tail)
	}
}

// TestSubmittedHoldsOnlyBatchesInFlight acknowledges many batches between two offset flushes: the
// tracker keeps the batches not yet acknowledged and one offset per source partition, not every
// batch since the last flush (offset.flush.interval.ms x rate of them), and the flush still gets
// the last offsets.
func TestSubmittedHoldsOnlyBatchesInFlight(t *testing.T) {
	var s submitted
	var last *batch
	for i := 1; i <= 10_000; i++ {
		if last != nil {
			last.ack()
		}
		last = s.submit([]wire.Record{rec(`{"f":"a"}`, fmt.Sprintf(`{"p":%d}`, i)), rec(fmt.Sprintf(`{"f":"%d"}`, i%3), `{"p":0}`)}, 1)
	}
	if len(s.batches) != 1 {
		t.Fatalf("%d batches held, want only the one not acknowledged", len(s.batches))
	}
	last.ack()
	got := s.committable()
	if string(got[`{"f":"a"}`]) != `{"p":10000}` || len(got) != 4 {
		t.Fatalf("committable %q", got)
	}
}

func TestSubmittedBatchWithoutOffsets(t *testing.T) {
	var s submitted
	b := s.submit([]wire.Record{rec("", "")}, 1)
	b.ack()
	if got := s.committable(); got != nil {
		t.Fatalf("got %q", got)
	}
	if len(s.batches) != 0 {
		t.Fatalf("acked batch kept: %d", len(s.batches))
	}
}

func TestExplicitPartitioner(t *testing.T) {
	p := explicitOrKeyPartitioner{kgo.StickyKeyPartitioner(nil)}.ForTopic("t")
	r := kafkaRecord(&wire.ConvertedRecord{Topic: "t", Partition: 2, Timestamp: -1, Value: []byte("v")})
	if got := p.Partition(r, 4); got != 2 {
		t.Fatalf("explicit partition 2 went to %d", got)
	}
	if !p.RequiresConsistency(r) {
		t.Fatal("an explicit partition must not move when it is down")
	}
	// Keyed records hash like Java's producer (murmur2): the same key, the same partition.
	k1 := kafkaRecord(&wire.ConvertedRecord{Topic: "t", Partition: -1, Timestamp: -1, Key: []byte("key")})
	k2 := kafkaRecord(&wire.ConvertedRecord{Topic: "t", Partition: -1, Timestamp: -1, Key: []byte("key")})
	if p.Partition(k1, 8) != p.Partition(k2, 8) {
		t.Fatal("same key, different partitions")
	}
}

func TestHeadersRoundTrip(t *testing.T) {
	r := kafkaRecord(&wire.ConvertedRecord{Topic: "t", Partition: -1, Timestamp: 1700000000000, Headers: []wire.Header{
		{Key: "s", Value: wire.String("text")}, {Key: "n", Value: wire.Null()}, {Key: "b", Value: wire.Bytes([]byte{0xff, 0})},
	}})
	if r.Timestamp.UnixMilli() != 1700000000000 {
		t.Fatalf("timestamp %v", r.Timestamp)
	}
	want := []wire.Tag{wire.TagString, wire.TagNull, wire.TagBytes}
	for i, h := range r.Headers {
		if got := headerData(h.Value); got.Tag != want[i] {
			t.Errorf("header %s came back as tag %d, want %d", h.Key, got.Tag, want[i])
		}
	}
}

// TestProducerBuffersAtMostKafkasBufferMemory checks that a task's producer holds at most 32 MiB
// (Kafka's buffer.memory) waiting for the broker: franz-go bounds only the number of records by
// default, so large records could pile up without limit while the broker is slow.
func TestProducerBuffersAtMostKafkasBufferMemory(t *testing.T) {
	cl, err := kgo.NewClient(ProducerOpts()...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if got := cl.OptValue(kgo.MaxBufferedBytes); got != int64(32<<20) {
		t.Fatalf("producer buffers up to %v bytes, want %d", got, 32<<20)
	}
}

// kafkaRecord is setKafkaRecord into a new record, with the headers aliasing r's; one without a
// timestamp gets the zero time, which the producer replaces with its own.
func kafkaRecord(r *wire.ConvertedRecord) *kgo.Record {
	kr := &kgo.Record{}
	setKafkaRecord(kr, r, time.Time{}, false)
	return kr
}

// A record without a timestamp gets the batch's, one with one keeps it; setKafkaRecord overwrites
// every field.
func TestKafkaRecordTimestamps(t *testing.T) {
	now := time.UnixMilli(1_000_000)
	var kr kgo.Record
	setKafkaRecord(&kr, &wire.ConvertedRecord{Topic: "t", Partition: -1, Timestamp: -1}, now, false)
	if !kr.Timestamp.Equal(now) {
		t.Fatalf("a record without a timestamp got %v, want the batch's %v", kr.Timestamp, now)
	}
	// A record reused from an acknowledged batch keeps nothing of it.
	kr.Offset, kr.ProducerID, kr.Headers, kr.Context = 7, 3, []kgo.RecordHeader{{Key: "old"}}, explicitPartition
	setKafkaRecord(&kr, &wire.ConvertedRecord{Topic: "t", Partition: -1, Timestamp: 42}, now, false)
	if kr.Timestamp.UnixMilli() != 42 {
		t.Fatalf("a record's own timestamp became %v", kr.Timestamp)
	}
	if kr.Offset != 0 || kr.ProducerID != 0 || kr.Headers != nil || kr.Context != nil {
		t.Fatalf("a reused record kept fields of its last use: %+v", kr)
	}
}

// A batch whose POLL buffer is reused must not leave the producer with header values in it.
func TestOwnedHeadersDoNotAliasThePollBuffer(t *testing.T) {
	buf := []byte("value")
	r := &wire.ConvertedRecord{Topic: "t", Partition: -1, Timestamp: -1, Headers: []wire.Header{{Key: "h", Value: wire.Bytes(buf)}, {Key: "n", Value: wire.Null()}}}
	var kr kgo.Record
	setKafkaRecord(&kr, r, time.Now(), true)
	copy(buf, "XXXXX")
	if got := string(kr.Headers[0].Value); got != "value" {
		t.Fatalf("header value changed with the POLL buffer: %q", got)
	}
	if kr.Headers[1].Value != nil {
		t.Fatalf("a null header became %q", kr.Headers[1].Value)
	}
}
