package wire

import "testing"

func TestCommittedRoundTrip(t *testing.T) {
	in := AppendCommitted(nil, map[string][]byte{`{"server":"b"}`: []byte(`{"lsn":2}`), `{"server":"a"}`: []byte(`{"lsn":1}`)})
	if want := `[{"partition":{"server":"a"},"offset":{"lsn":1}},{"partition":{"server":"b"},"offset":{"lsn":2}}]`; string(in) != want {
		t.Fatalf("AppendCommitted = %s, want %s", in, want)
	}
	got, err := DecodeCommitted(in)
	if err != nil || len(got) != 2 || string(got[1].Partition) != `{"server":"b"}` || string(got[1].Offset) != `{"lsn":2}` {
		t.Fatalf("DecodeCommitted = %+v, %v", got, err)
	}
	if b := AppendCommitted(nil, nil); len(b) != 0 {
		t.Fatalf("no offsets: input %q, want empty", b)
	}
	if got, err := DecodeCommitted(nil); got != nil || err != nil {
		t.Fatalf("DecodeCommitted(empty) = %v, %v", got, err)
	}
}
