package wire

import (
	"reflect"
	"strings"
	"testing"
)

func TestTransformResultRoundTrip(t *testing.T) {
	in := []Record{
		{Topic: "a", Partition: 0, Offset: 5, Timestamp: -1, Value: String("x"), SourceOffset: []byte(`{"o":1}`)},
		{Topic: "b", Partition: 1, Offset: 6, Timestamp: -1, Value: Null()},
		{Topic: "c", Partition: 2, Offset: 7, Timestamp: 9},
	}
	out := AppendU32(nil, 4)
	out = AppendTransformRecord(out, 0, &Record{Topic: "A", Partition: 3, Offset: 99, Timestamp: 1, Value: String("X"),
		Headers: []Header{{Key: "h", Value: Bytes([]byte{1})}}, SourceOffset: []byte("ignored")})
	out = AppendTransformRecord(out, 0, &Record{Topic: "A2", Partition: -1, Timestamp: -1})
	out = AppendTransformFailed(out, 1, DataException, "no")
	out = AppendTransformUnchanged(out, 2)
	recs, failed, err := DecodeTransformResult(out, in)
	if err != nil {
		t.Fatal(err)
	}
	want := []TransformedRecord{
		{Input: 0, Record: Record{Topic: "A", Partition: 3, Offset: 5, Timestamp: 1, Value: String("X"),
			Headers: []Header{{Key: "h", Value: Bytes([]byte{1})}}, SourcePartition: nil, SourceOffset: []byte(`{"o":1}`)}},
		{Input: 0, Record: Record{Topic: "A2", Partition: -1, Offset: 5, Timestamp: -1, SourceOffset: []byte(`{"o":1}`)}},
		{Input: 2, Unchanged: true, Record: in[2]},
	}
	if !reflect.DeepEqual(recs, want) {
		t.Fatalf("records:\n got %+v\nwant %+v", recs, want)
	}
	if !reflect.DeepEqual(failed, []RecordFailure{{Input: 1, Class: DataException, Message: "no"}}) {
		t.Fatalf("failed %+v", failed)
	}
	if s := failed[0].Error(); s != "record 1: org.apache.kafka.connect.errors.DataException: no" {
		t.Errorf("Error() = %q", s)
	}
}

func TestTransformResultRejects(t *testing.T) {
	in := make([]Record, 3)
	entries := func(es ...[]byte) []byte {
		b := AppendU32(nil, uint32(len(es)))
		for _, e := range es {
			b = append(b, e...)
		}
		return b
	}
	un := func(i int) []byte { return AppendTransformUnchanged(nil, i) }
	rec := func(i int) []byte { return AppendTransformRecord(nil, i, &Record{Topic: "t"}) }
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"out of order", entries(un(1), un(0)), "must follow the input order"},
		{"past the batch", entries(un(3)), "names input 3 of a batch of 3"},
		{"unchanged twice", entries(un(1), un(1)), "more than one entry"},
		{"record after failure", entries(AppendTransformFailed(nil, 1, "", "x"), rec(1)), "more than one entry"},
		{"bad status", entries(append(AppendU32(nil, 0), 7)), "unknown status 7"},
		{"truncated", entries(rec(0))[:20], "truncated"},
		{"trailing", append(entries(un(0)), 0), "unexpected bytes"},
	} {
		if _, _, err := DecodeTransformResult(c.b, in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// Several records from one input are fine (a split).
	if recs, _, err := DecodeTransformResult(entries(rec(0), rec(0), rec(2)), in); err != nil || len(recs) != 3 {
		t.Errorf("split: %v %v", recs, err)
	}
}

func TestTestResult(t *testing.T) {
	b := AppendTestResult(nil, []byte{TestMatch, TestFailed, TestNoMatch}, []RecordFailure{{Input: 1, Class: "C", Message: "m"}})
	m, failed, err := DecodeTestResult(b, 3)
	if err != nil || !reflect.DeepEqual(m, []bool{true, false, false}) || !reflect.DeepEqual(failed, []RecordFailure{{Input: 1, Class: "C", Message: "m"}}) {
		t.Fatalf("%v %+v %v", m, failed, err)
	}
	for _, c := range []struct {
		b    []byte
		n    int
		want string
	}{
		{b, 2, "3 entries for 2 records"},
		{AppendTestResult(nil, []byte{3}, nil), 1, "want 0, 1 or 2"},
		{AppendTestResult(nil, []byte{TestFailed}, nil), 1, "truncated"},
		{append(AppendTestResult(nil, []byte{1}, nil), 1), 1, "unexpected bytes"},
	} {
		if _, _, err := DecodeTestResult(c.b, c.n); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.b, err, c.want)
		}
	}
}

func FuzzDecodeTransformResult(f *testing.F) {
	f.Add(AppendTransformUnchanged(AppendU32(nil, 1), 0))
	in := make([]Record, 4)
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, _, err := DecodeTransformResult(b, in)
		if err != nil {
			return
		}
		last := -1
		for _, r := range recs {
			if r.Input < last || r.Input >= len(in) {
				t.Fatalf("input %d after %d", r.Input, last)
			}
			last = r.Input
		}
	})
}
