package sdk

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// scriptTransform applies per-value behaviour: "drop", "fail", "retry", "panic", "same" (unchanged),
// "touch" (same value, topic reassigned to itself), "split"... anything else is prefixed.
type scriptTransform struct {
	prefix string
}

func (s *scriptTransform) Configure(cfg Config) error {
	if cfg["prefix"] == "bad" {
		return InvalidConfig("prefix", "bad", "no bad prefixes")
	}
	if cfg["prefix"] == "worse" {
		return errors.New("cannot configure")
	}
	s.prefix = cfg["prefix"]
	return nil
}

func (s *scriptTransform) Apply(r *Record) (*Record, error) {
	switch v := string(r.Value.Bytes); v {
	case "drop":
		return nil, nil
	case "fail":
		return nil, errors.New("bad value")
	case "classy":
		return nil, &RecordError{Class: "java.lang.IllegalStateException", Err: errors.New("illegal")}
	case "retry":
		return nil, Retriable(errors.New("try later"))
	case "panic":
		var m map[string]int
		m["x"]++
	case "same":
		return r, nil
	case "new":
		return &Record{Topic: "elsewhere", Partition: 3, Timestamp: 5, Value: String("fresh")}, nil
	default:
		r.Value = String(s.prefix + v)
		r.Topic = "out-" + r.Topic
	}
	return r, nil
}

type evenPredicate struct{}

func (evenPredicate) Configure(Config) error { return nil }
func (evenPredicate) Test(r *Record) (bool, error) {
	switch string(r.Value.Bytes) {
	case "fail":
		return false, DataError("cannot test %q", "fail")
	case "panic":
		panic("predicate exploded")
	case "retry":
		return false, Retriable(errors.New("later"))
	}
	return len(r.Value.Bytes)%2 == 0, nil
}

func newTransformDispatcher(t *testing.T) *dispatcher {
	t.Helper()
	d := newDispatcher(&fakeHost{})
	d.register(&plugin{kind: wire.KindTransformation, newTransformation: func() Transformation { return &scriptTransform{} },
		info: Info{Name: "Script$Value", Class: "com.example.Script$Value", Config: []ConfigDef{{Name: "prefix", Default: new("")}}}})
	d.register(&plugin{kind: wire.KindPredicate, newPredicate: func() Predicate { return evenPredicate{} },
		info: Info{Name: "Even", Class: "com.example.Even", Config: []ConfigDef{{Name: "n", Type: TypeInt}}}})
	return d
}

func records(values ...string) []wire.Record {
	rs := make([]wire.Record, len(values))
	for i, v := range values {
		rs[i] = wire.Record{Topic: "t", Partition: 1, Offset: int64(100 + i), Timestamp: -1, Value: wire.String(v),
			SourcePartition: []byte(`{"f":"a"}`), SourceOffset: []byte(`{"n":1}`)}
	}
	return rs
}

func TestTransformBatch(t *testing.T) {
	d := newTransformDispatcher(t)
	h := open(t, d, "com.example.Script$Value", wire.RoleTransformation, map[string]string{"prefix": "p-"})
	in := records("a", "drop", "fail", "same", "panic", "classy", "new", "b")
	out, failed, err := wire.DecodeTransformResult(call(t, d, wire.OpTransform, h, wire.AppendRecords(nil, in)), in)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range out {
		got = append(got, fmtOut(o))
	}
	want := []string{"0 out-t p-a off=100", "3 unchanged", "6 elsewhere fresh off=106", "7 out-t p-b off=107"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("outputs %q, want %q", got, want)
	}
	if len(failed) != 3 || failed[0].Input != 2 || failed[0].Class != wire.DataException || failed[0].Message != "bad value" ||
		failed[1].Input != 4 || failed[1].Class != "org.apache.kafka.connect.errors.ConnectException" ||
		!strings.Contains(failed[1].Message, "Script$Value: panic during TRANSFORM: assignment to entry in nil map") ||
		failed[2].Input != 5 || failed[2].Class != "java.lang.IllegalStateException" || failed[2].Message != "illegal" {
		t.Errorf("failures %+v", failed)
	}
	if out[2].Record.Partition != 3 || out[2].Record.Timestamp != 5 || string(out[2].Record.SourceOffset) != `{"n":1}` {
		t.Errorf("new record: %+v", out[2].Record)
	}

	// A retriable error fails the whole call, retriably.
	_, err = d.handle(wire.OpTransform, h, wire.AppendRecords(nil, records("a", "retry")))
	if err == nil || !IsRetriable(err) || !strings.Contains(err.Error(), "record 1: try later") {
		t.Errorf("retriable: %v", err)
	}
	// An empty batch gives an empty result; a malformed one an error.
	if out := call(t, d, wire.OpTransform, h, wire.AppendRecords(nil, nil)); string(out) != "\x00\x00\x00\x00" {
		t.Errorf("empty batch: %q", out)
	}
	if _, err := d.handle(wire.OpTransform, h, []byte{1, 0, 0}); err == nil {
		t.Error("malformed batch accepted")
	}
	// A transformation is not a predicate, and the other way around.
	if _, err := d.handle(wire.OpTest, h, wire.AppendRecords(nil, nil)); err == nil || !strings.Contains(err.Error(), "TEST is not supported by a transformation") {
		t.Errorf("TEST on a transformation: %v", err)
	}
	if _, err := d.handle(wire.OpOpen, 0, mustJSON(wire.OpenRequest{Plugin: "Even", Role: wire.RoleTransformation})); err == nil {
		t.Error("predicate opened as a transformation")
	}
	call(t, d, wire.OpClose, h, nil)
}

func fmtOut(o wire.TransformedRecord) string {
	if o.Unchanged {
		return strings.Join([]string{strconv.Itoa(o.Input), "unchanged"}, " ")
	}
	return strings.Join([]string{strconv.Itoa(o.Input), o.Record.Topic, string(o.Record.Value.Bytes), "off=" + strconv.FormatInt(o.Record.Offset, 10)}, " ")
}

func TestPredicateBatch(t *testing.T) {
	d := newTransformDispatcher(t)
	h := open(t, d, "Even", wire.RolePredicate, nil)
	in := records("ab", "a", "fail", "panic", "")
	m, failed, err := wire.DecodeTestResult(call(t, d, wire.OpTest, h, wire.AppendRecords(nil, in)), len(in))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m, []bool{true, false, false, false, true}) {
		t.Errorf("matches %v", m)
	}
	if len(failed) != 2 || failed[0].Input != 2 || failed[0].Message != `cannot test "fail"` || failed[0].Class != wire.DataException ||
		failed[1].Input != 3 || !strings.Contains(failed[1].Message, "predicate exploded") {
		t.Errorf("failures %+v", failed)
	}
	if _, err := d.handle(wire.OpTest, h, wire.AppendRecords(nil, records("retry"))); !IsRetriable(err) {
		t.Errorf("retriable: %v", err)
	}
}

func TestTransformConfig(t *testing.T) {
	d := newTransformDispatcher(t)
	for _, c := range []struct {
		cfg     map[string]string
		wantErr string
		errs    map[string][]string
	}{
		{map[string]string{"prefix": "bad"}, "Invalid value bad for configuration prefix: no bad prefixes",
			map[string][]string{"prefix": {"Invalid value bad for configuration prefix: no bad prefixes"}}},
		{map[string]string{"prefix": "worse"}, "cannot configure", map[string][]string{"": {"cannot configure"}}},
		{map[string]string{"prefix": "ok"}, "", map[string][]string{}},
	} {
		_, err := d.handle(wire.OpOpen, 0, mustJSON(wire.OpenRequest{Plugin: "Script$Value", Role: wire.RoleTransformation, Config: c.cfg}))
		if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || err.Error() != c.wantErr) {
			t.Errorf("OPEN %v: %v, want %q", c.cfg, err, c.wantErr)
		}
		var resp wire.ValidateResponse
		if err := json.Unmarshal(call(t, d, wire.OpValidate, 0, mustJSON(wire.ValidateRequest{Plugin: "Script$Value", Config: c.cfg})), &resp); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(resp.Errors, c.errs) {
			t.Errorf("VALIDATE %v: %v, want %v", c.cfg, resp.Errors, c.errs)
		}
	}
	// Declared types are checked before Configure.
	if _, err := d.handle(wire.OpOpen, 0, mustJSON(wire.OpenRequest{Plugin: "Even", Role: wire.RolePredicate, Config: map[string]string{"n": "x"}})); err == nil ||
		!strings.Contains(err.Error(), "Invalid value x for configuration n: Not a number of type INT") {
		t.Errorf("bad INT: %v", err)
	}
	var desc wire.Descriptor
	if err := json.Unmarshal(d.describe(), &desc); err != nil {
		t.Fatal(err)
	}
	if desc.Plugins[0].Kind != wire.KindTransformation || desc.Plugins[1].Kind != wire.KindPredicate {
		t.Errorf("descriptor kinds: %+v", desc.Plugins)
	}
}

func TestSameRecord(t *testing.T) {
	r := records("abc")[0]
	r.Headers = []Header{{Key: "h", Value: String("v")}}
	c := r
	if !sameRecord(&r, &c) {
		t.Error("a copy is not the same")
	}
	c.Value = String("abc") // equal content, new slice: changed
	if sameRecord(&r, &c) {
		t.Error("a new value slice counts as unchanged")
	}
	c = r
	c.Headers = append([]Header{}, r.Headers...)
	if sameRecord(&r, &c) {
		t.Error("a new headers slice counts as unchanged")
	}
}
