package wire

import (
	"bytes"
	"testing"
)

// The host decodes what guests return: every byte of a result is the guest's to choose. These
// targets check that no input makes a decoder panic or allocate beyond what the input can hold,
// and that what decodes re-encodes to the same bytes, so the two sides cannot disagree on a
// layout (see also FuzzDecodeRecords and FuzzDecodeTransformResult). `go -C sdk/go test -run ^$ -fuzz
// FuzzDecodeBatches ./wire/` (sdk/go is a module of its own) runs one for longer.

func FuzzDecodeBatches(f *testing.F) {
	f.Add(AppendDataBatch(nil, []TopicData{{Topic: "t", Value: String("v")}, {Value: Null()}}))
	f.Add(AppendBytesBatch(nil, [][]byte{[]byte("a"), nil}))
	f.Add(AppendTopicBytesBatch(nil, []TopicBytes{{Topic: "t", Bytes: []byte("a")}, {Topic: "u"}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		if ds, err := DecodeDataBatch(b); err == nil {
			if again := AppendDataBatch(nil, ds); !bytes.Equal(again, b) {
				t.Fatalf("data batch re-encodes differently:\n in %x\nout %x", b, again)
			}
		}
		if bs, err := DecodeBytesBatch(b); err == nil {
			if again := AppendBytesBatch(nil, bs); !bytes.Equal(again, b) {
				t.Fatalf("bytes batch re-encodes differently:\n in %x\nout %x", b, again)
			}
		}
		if bs, err := DecodeTopicBytesBatch(b); err == nil {
			if again := AppendTopicBytesBatch(nil, bs); !bytes.Equal(again, b) {
				t.Fatalf("topic bytes batch re-encodes differently:\n in %x\nout %x", b, again)
			}
		}
	})
}

func FuzzDecodeTestResult(f *testing.F) {
	f.Add(AppendTestResult(nil, []byte{1, 0, 2}, []RecordFailure{{Input: 2, Class: "c", Message: "m"}}), 3)
	f.Fuzz(func(t *testing.T, b []byte, n int) {
		n = n & 0xffff
		matches, failed, err := DecodeTestResult(b, n)
		if err != nil {
			return
		}
		if len(matches) != n {
			t.Fatalf("%d statuses for %d records", len(matches), n)
		}
		for _, fl := range failed {
			if fl.Input < 0 || fl.Input >= n {
				t.Fatalf("failure names record %d of %d", fl.Input, n)
			}
		}
	})
}
