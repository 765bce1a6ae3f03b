package wire

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"
)

func TestRecordsRoundTrip(t *testing.T) {
	in := []Record{
		{Topic: "t", Partition: -1, Offset: -1, Timestamp: 1700000000000, Key: Null(), Value: String("hello"),
			SourcePartition: []byte(`{"filename":"a"}`), SourceOffset: []byte(`{"position":6}`)},
		{Topic: "u", Partition: 3, Offset: 42, Timestamp: -1, Key: Bytes([]byte{0, 1}),
			Value:   JSON([]byte(`{"type":"string","optional":false}`), []byte(`"x"`)),
			Headers: []Header{{Key: "h", Value: String("v")}, {Key: "n", Value: Null()}}},
	}
	b := AppendRecords(nil, in)
	out, err := DecodeRecords(b)
	if err != nil {
		t.Fatal(err)
	}
	// Empty and nil byte slices are equal on the wire.
	for i := range out {
		if len(out[i].SourcePartition) == 0 {
			out[i].SourcePartition = nil
		}
		if len(out[i].SourceOffset) == 0 {
			out[i].SourceOffset = nil
		}
		if out[i].Key.Tag == TagJSON && len(out[i].Key.Schema) == 0 {
			out[i].Key.Schema = nil
		}
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip:\n in=%+v\nout=%+v", in, out)
	}
}

func TestBatchesRoundTrip(t *testing.T) {
	bs := [][]byte{[]byte("a"), nil, {}}
	got, err := DecodeBytesBatch(AppendBytesBatch(nil, bs))
	if err != nil || len(got) != 3 || !bytes.Equal(got[0], []byte("a")) || got[1] != nil || got[2] == nil {
		t.Fatalf("bytes batch: %q %v", got, err)
	}
	tb := []TopicBytes{{"t", []byte("x")}, {"u", nil}}
	gotT, err := DecodeTopicBytesBatch(AppendTopicBytesBatch(nil, tb))
	if err != nil || !reflect.DeepEqual(gotT, tb) {
		t.Fatalf("topic bytes batch: %+v %v", gotT, err)
	}
	db := []TopicData{{"t", String("s")}, {"u", Null()}}
	gotD, err := DecodeDataBatch(AppendDataBatch(nil, db))
	if err != nil || !reflect.DeepEqual(gotD, db) {
		t.Fatalf("data batch: %+v %v", gotD, err)
	}
}

func TestDecodeRejectsMalformed(t *testing.T) {
	good := AppendRecords(nil, []Record{{Topic: "t", Value: String("v")}})
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"empty", nil},
		{"truncated", good[:len(good)-1]},
		{"trailing", append(append([]byte{}, good...), 0)},
		{"huge count", []byte{0xff, 0xff, 0xff, 0x7f}},
		{"bad tag", func() []byte {
			b := AppendU32(nil, 1)
			b = AppendString(b, "t")
			b = AppendU32(b, 0)
			b = AppendI64(b, 0)
			b = AppendI64(b, 0)
			return append(b, 9)
		}()},
	} {
		if _, err := DecodeRecords(tc.in); err == nil {
			t.Errorf("%s: decoded without error", tc.name)
		}
	}
}

func TestPackResult(t *testing.T) {
	r := PackResult(0x1000, 77, ResultError|ResultRetriable)
	ptr, n, isErr, retry := UnpackResult(r)
	if ptr != 0x1000 || n != 77 || !isErr || !retry {
		t.Fatalf("got %x %d %v %v", ptr, n, isErr, retry)
	}
}

func FuzzDecodeRecords(f *testing.F) {
	f.Add(AppendRecords(nil, []Record{{Topic: "t", Value: String("v"), Headers: []Header{{Key: "k"}}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		rs, err := DecodeRecords(b)
		if err != nil {
			return
		}
		if again := AppendRecords(nil, rs); !bytes.Equal(again, b) {
			t.Fatalf("re-encoding differs")
		}
	})
}

// DecodeRecordsInto decodes into the slice it is given when it is large enough, overwriting every
// field of a record decoded there before, and into a new one when it is not.
func TestDecodeRecordsInto(t *testing.T) {
	old := Record{Topic: "old", Headers: []Header{{Key: "h"}}, SourceOffset: []byte("o")}
	dst := []Record{old, old, old}
	b := AppendRecords(nil, []Record{{Topic: "t", Partition: -1, Offset: -1, Timestamp: -1, Value: String("v")}})
	out, err := DecodeRecordsInto(dst[:0], b)
	if err != nil || len(out) != 1 || &out[0] != &dst[0] {
		t.Fatalf("got %d records (%v), reused: %v", len(out), err, len(out) == 1 && &out[0] == &dst[0])
	}
	if r := out[0]; r.Topic != "t" || r.Headers != nil || len(r.SourceOffset) != 0 || string(r.Value.Bytes) != "v" {
		t.Fatalf("a reused record kept old fields: %+v", r)
	}
	two := AppendRecords(nil, []Record{{Topic: "a"}, {Topic: "b"}})
	if out, err := DecodeRecordsInto(dst[:0:1], two); err != nil || len(out) != 2 || out[1].Topic != "b" {
		t.Fatalf("into a short slice: %+v, %v", out, err)
	}
}

// The fast path of Decoder.Record decodes what the field-by-field one does, and leaves every
// input it does not take (truncated, an unknown tag, a hostile header count) to it, consuming
// nothing: the records and the errors, with the bytes they name, are the same either way.
func TestRecordFastMatchesSlow(t *testing.T) {
	recs := []Record{
		{Topic: "t", Partition: -1, Offset: -1, Timestamp: -1, Value: String("v"), SourcePartition: []byte(`{"f":1}`), SourceOffset: []byte(`{"p":2}`)},
		{Topic: "t", Partition: 3, Offset: 7, Timestamp: 9, Key: Bytes([]byte{}), Value: JSON([]byte(`{"type":"string"}`), []byte(`"x"`)),
			Headers: []Header{{Key: "a", Value: Bytes([]byte{1})}, {Key: "b"}, {Key: "c", Value: JSON(nil, []byte("1"))}}},
		{Topic: "u", Key: String("k")},
	}
	valid := AppendRecords(nil, recs)
	// The last record ends with its key (tag, length, "k"), a null value, the header count and
	// two empty source fields: 19 bytes from the end is the key's tag.
	badTag := AppendRecords(nil, recs)
	badTag[len(badTag)-19] = 9
	// A record ending with one header (key length, "h", null value) and two empty source fields:
	// 18 bytes from the end is the header count.
	hostile := AppendRecords(nil, []Record{{Topic: "t", Headers: []Header{{Key: "h"}}}})
	copy(hostile[len(hostile)-18:], []byte{0xff, 0xff, 0xff, 0x0f})
	for c, in := range [][]byte{valid, badTag, hostile} {
		in = in[4:] // the batch count
		if err := decodeAll(in, len(recs)); (err == nil) != (c == 0) {
			t.Fatalf("case %d decodes with %v", c, err)
		}
		for n := 0; n <= len(in); n++ {
			fast, slow := NewDecoder(in[:n]), NewDecoder(in[:n])
			for i := 0; i < len(recs); i++ {
				var rf, rs Record
				fast.Record(&rf)
				slow.recordSlow(&rs)
				if fast.Err() == nil && !reflect.DeepEqual(rf, rs) {
					t.Fatalf("%d bytes, record %d: fast %+v, slow %+v", n, i, rf, rs)
				}
				if fmt.Sprint(fast.Err()) != fmt.Sprint(slow.Err()) || fast.Remaining() != slow.Remaining() {
					t.Fatalf("%d bytes, record %d: fast %v (%d left), slow %v (%d left)", n, i, fast.Err(), fast.Remaining(), slow.Err(), slow.Remaining())
				}
			}
		}
	}
}

// decodeAll decodes n records from b (fewer if it fails).
func decodeAll(b []byte, n int) error {
	d := NewDecoder(b)
	for i := 0; i < n && d.Err() == nil; i++ {
		var r Record
		d.Record(&r)
	}
	return d.Err()
}
