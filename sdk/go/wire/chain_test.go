package wire

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// appendConverted appends a CONVERTED entry (sdk/ABI.md §5.9) of the input in.
func appendConverted(dst []byte, in int, r Record, key, value []byte) []byte {
	dst = AppendU32(dst, uint32(in))
	dst = append(dst, byte(StatusConverted))
	dst = AppendString(dst, r.Topic)
	dst = AppendU32(dst, uint32(r.Partition))
	dst = AppendI64(dst, r.Timestamp)
	dst = AppendNullableBytes(dst, key)
	dst = AppendNullableBytes(dst, value)
	dst = AppendU32(dst, uint32(len(r.Headers)))
	for _, h := range r.Headers {
		dst = AppendString(dst, h.Key)
		dst = AppendData(dst, h.Value)
	}
	return dst
}

// appendFailed appends a FAILED entry of a TRANSFORM_CONVERT result.
func appendFailed(dst []byte, in, step int, stage byte, class, msg string) []byte {
	dst = AppendU32(dst, uint32(in))
	dst = append(dst, byte(StatusFailed))
	dst = AppendU32(dst, uint32(step))
	dst = append(dst, stage)
	return AppendString(AppendString(dst, class), msg)
}

func TestDecodeConverted(t *testing.T) {
	inputs := []Record{{Topic: "in", SourcePartition: []byte("p"), SourceOffset: []byte("0")},
		{Topic: "in", SourcePartition: []byte("p"), SourceOffset: []byte("1")},
		{Topic: "in", SourcePartition: []byte("p"), SourceOffset: []byte("2")}}
	b := AppendU32(nil, 4)
	b = appendConverted(b, 0, Record{Topic: "out", Partition: -1, Timestamp: 7}, nil, []byte(`"a"`))
	b = appendFailed(b, 1, 2, StageValueConverter, "org.apache.kafka.connect.errors.DataException", "bad")
	b = appendConverted(b, 2, Record{Topic: "out", Partition: 3, Timestamp: -1, Headers: []Header{{Key: "h", Value: String("v")}}}, []byte("k"), []byte{})
	b = appendConverted(b, 2, Record{Topic: "other", Partition: -1}, nil, nil)
	var r ChainResult
	// Twice: the second decode reuses what the first grew, and must not keep any of it.
	for round := 0; round < 2; round++ {
		if err := r.DecodeConverted(b, inputs, 2); err != nil {
			t.Fatal(err)
		}
		got := r.Converted()
		if len(got) != 3 || len(r.Failed) != 1 {
			t.Fatalf("round %d: %d records, %d failures", round, len(got), len(r.Failed))
		}
		if f := r.Failed[0]; f.Input != 1 || f.Step != 2 || f.Stage != StageValueConverter || f.Message != "bad" {
			t.Errorf("failure %+v", f)
		}
		want := []string{`0 out -1 7 key=<nil> value="a" []`, `2 out 3 -1 key=k value= [h]`, `2 other -1 0 key=<nil> value=<nil> []`}
		for i, c := range got {
			var hs []string
			for _, h := range c.Headers {
				hs = append(hs, h.Key)
			}
			s := fmt.Sprintf("%d %s %d %d key=%s value=%s %v", r.Inputs()[i], c.Topic, c.Partition, c.Timestamp, show(c.Key), show(c.Value), hs)
			if s != want[i] {
				t.Errorf("round %d, record %d: %s, want %s", round, i, s, want[i])
			}
		}
		if got[1].Value == nil || len(got[1].Value) != 0 {
			t.Errorf("an empty value must stay empty, not become null: %v", got[1].Value)
		}
	}
}

func show(b []byte) string {
	if b == nil {
		return "<nil>"
	}
	return string(b)
}

// TestDecodeConvertedRejects: a malformed result is an error that says what is wrong, whichever of
// the fast and the checked decoder finds it.
func TestDecodeConvertedRejects(t *testing.T) {
	inputs := []Record{{Topic: "in"}, {Topic: "in"}}
	ok := appendConverted(nil, 0, Record{Topic: "t"}, nil, []byte("v"))
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"short", append(AppendU32(nil, 1), ok[:len(ok)-3]...), "truncated"},
		{"trailing bytes", append(append(AppendU32(nil, 1), ok...), 0), "1 unexpected bytes after"},
		{"input out of range", append(AppendU32(nil, 1), appendConverted(nil, 5, Record{Topic: "t"}, nil, nil)...), "names input 5 of a batch of 2"},
		{"out of order", append(append(AppendU32(nil, 2), appendConverted(nil, 1, Record{Topic: "t"}, nil, nil)...), ok...), "after input 1"},
		{"a record status", append(AppendU32(nil, 1), append(AppendU32(nil, 0), byte(StatusRecord))...), "which this result cannot have"},
		{"a converter failure not after the last step", append(AppendU32(nil, 1), appendFailed(nil, 0, 1, StageKeyConverter, "c", "m")...), "stage 2 of step 1 of a chain of 2"},
		// What a hostile guest could write after a CONVERTED status: lengths that point outside the
		// result or below -1, and a header count larger than the bytes left can hold.
		{"a value length below -1", append(AppendU32(nil, 1), withU32At(ok, len(ok)-9, 0xfffffffe)...), "record value"},
		{"a value longer than the result", append(AppendU32(nil, 1), withU32At(ok, len(ok)-9, 1<<30)...), "record value"},
		{"a header count the bytes cannot hold", append(AppendU32(nil, 1), withU32At(ok, len(ok)-4, 1<<28)...), "record headers count"},
		{"a header of an unknown data tag", append(AppendU32(nil, 1), append(withU32At(ok, len(ok)-4, 1), append(AppendString(nil, "h"), 9)...)...), "unknown data tag 9"},
	} {
		var r ChainResult
		err := r.DecodeConverted(c.b, inputs, 2)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}

// withU32At is b with the u32 at i replaced by v.
func withU32At(b []byte, i int, v uint32) []byte {
	out := append([]byte(nil), b...)
	copy(out[i:], AppendU32(nil, v))
	return out
}

// FuzzConvertedFastMatchesSlow: the fast read of a CONVERTED entry accepts exactly what the checked
// one does, reads the same record and stops at the same byte (a guest chooses every byte).
func FuzzConvertedFastMatchesSlow(f *testing.F) {
	f.Add(appendConverted(nil, 0, Record{Topic: "t", Partition: 2, Timestamp: 5, Headers: []Header{{Key: "h", Value: String("v")}, {Key: "n"}}},
		[]byte("k"), []byte(`{"a":1}`))[5:])
	f.Add(appendConverted(nil, 0, Record{Topic: "t", Partition: -1, Timestamp: -1}, nil, []byte{})[5:])
	f.Fuzz(func(t *testing.T, b []byte) {
		fast, slow := NewDecoder(b), NewDecoder(b)
		var fc, sc ConvertedRecord
		ok := fast.convertedFast(&fc)
		slow.convertedSlow(&sc)
		if ok != (slow.Err() == nil) {
			t.Fatalf("fast read ok=%v, checked read err=%v", ok, slow.Err())
		}
		if !ok {
			return
		}
		if fast.off != slow.off || fmt.Sprintf("%#v", fc) != fmt.Sprintf("%#v", sc) {
			t.Fatalf("fast read %#v to byte %d, checked read %#v to byte %d", fc, fast.off, sc, slow.off)
		}
	})
}

// BenchmarkDecodeConverted decodes a TRANSFORM_CONVERT result as a source task with the bench
// table's chain gets it: 2000 lines of 100 bytes, hoisted into a struct, one topic.
//
//	go test -run '^$' -bench DecodeConverted -benchmem ./sdk/go/wire/
func BenchmarkDecodeConverted(b *testing.B) {
	const n = 2000
	inputs := make([]Record, n)
	out := AppendU32(nil, n)
	for i := range inputs {
		inputs[i] = Record{Topic: "lines", SourcePartition: []byte(`{"filename":"in.txt"}`), SourceOffset: []byte(fmt.Sprintf(`{"position":%d}`, i*100))}
		value := fmt.Sprintf(`{"line":"line %d %s","origin":"bench"}`, i, bytes.Repeat([]byte("x"), 85))
		out = appendConverted(out, i, Record{Topic: "lines", Partition: -1, Timestamp: -1}, nil, []byte(value))
	}
	var r ChainResult
	b.ReportAllocs()
	for b.Loop() {
		if err := r.DecodeConverted(out, inputs, 3); err != nil || len(r.Converted()) != n {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
}
