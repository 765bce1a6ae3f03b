package wasmhost

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

func transformHost(t *testing.T) *Host {
	t.Helper()
	h, _ := newTestHost(t, Config{PluginPath: []string{pluginDir(t, map[string]string{"transform.wasm": "transform", "good.wasm": "good"})}})
	return h
}

func fourRecords() []wire.Record {
	rs := make([]wire.Record, 4)
	for i := range rs {
		rs[i] = wire.Record{Topic: "in", Partition: 1, Offset: int64(100 + i), Timestamp: -1, Value: wire.String("r"),
			SourcePartition: []byte(`{"p":1}`), SourceOffset: []byte{byte('0' + i)}}
	}
	return rs
}

func TestTransformResult(t *testing.T) {
	h := transformHost(t)
	ctx := context.Background()
	p, err := h.Resolve("test.fixture.Canned", wire.KindTransformation)
	if err != nil {
		t.Fatal(err)
	}
	s := h.NewSession(Env{Connector: "c", Task: 0})
	defer s.Close(ctx)
	tr, err := s.Open(ctx, p, wire.RoleTransformation, map[string]string{"x": "y"})
	if err != nil {
		t.Fatal(err)
	}
	in := fourRecords()
	out, failed, err := tr.Transform(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	hdr := []wire.Header{{Key: "h", Value: wire.String("x")}}
	want := []wire.TransformedRecord{
		{Input: 0, Record: wire.Record{Topic: "t2", Partition: 5, Offset: 100, Timestamp: 7, Value: wire.String("v"), Headers: hdr,
			SourcePartition: in[0].SourcePartition, SourceOffset: in[0].SourceOffset}},
		{Input: 0, Record: wire.Record{Topic: "t3", Partition: -1, Offset: 100, Timestamp: -1, Value: wire.String("w"), Headers: hdr,
			SourcePartition: in[0].SourcePartition, SourceOffset: in[0].SourceOffset}},
		{Input: 3, Unchanged: true, Record: in[3]},
	}
	if !reflect.DeepEqual(out, want) {
		t.Fatalf("Transform:\n got %+v\nwant %+v", out, want)
	}
	if want := []wire.RecordFailure{{Input: 2, Class: "C", Message: "bad record"}}; !reflect.DeepEqual(failed, want) {
		t.Fatalf("failures %+v, want %+v", failed, want)
	}
	if out, failed, err := tr.Transform(ctx, nil); out != nil || failed != nil || err != nil {
		t.Fatalf("empty batch: %v %v %v", out, failed, err)
	}
	// The result names input 3: a batch of 2 makes it malformed.
	_, _, err = tr.Transform(ctx, in[:2])
	var ge *GuestError
	if !errors.As(err, &ge) || !strings.Contains(ge.Message, "malformed result") || !strings.Contains(ge.Message, "names input 2 of a batch of 2") {
		t.Fatalf("short batch: %v", err)
	}

	// Entries out of input order are malformed.
	bad, err := s.Open(ctx, mustResolve(t, h, "Malformed"), wire.RoleTransformation, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err = bad.Transform(ctx, in); !errors.As(err, &ge) || !strings.Contains(ge.Message, "entries must follow the input order") {
		t.Fatalf("out of order: %v", err)
	}
	// A transformation cannot be tested, polled or opened as a predicate.
	if _, _, err := tr.Test(ctx, in); err == nil || !strings.Contains(err.Error(), "does not support TEST") {
		t.Fatalf("TEST on a transformation: %v", err)
	}
	if _, err := s.Open(ctx, p, wire.RolePredicate, nil); err == nil || !strings.Contains(err.Error(), "cannot be opened in role \"predicate\"") {
		t.Fatalf("transformation opened as predicate: %v", err)
	}
}

func TestPredicateResult(t *testing.T) {
	h := transformHost(t)
	ctx := context.Background()
	s := h.NewSession(Env{Connector: "c", Task: 0})
	defer s.Close(ctx)
	pr, err := s.Open(ctx, mustResolve(t, h, "Even"), wire.RolePredicate, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := fourRecords()[:3]
	matches, failed, err := pr.Test(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(matches, []bool{true, false, false}) {
		t.Fatalf("matches %v", matches)
	}
	if want := []wire.RecordFailure{{Input: 2, Class: "C", Message: "cannot test"}}; !reflect.DeepEqual(failed, want) {
		t.Fatalf("failures %+v", failed)
	}
	var ge *GuestError
	if _, _, err := pr.Test(ctx, in[:2]); !errors.As(err, &ge) || !strings.Contains(ge.Message, "3 entries for 2 records") {
		t.Fatalf("count mismatch: %v", err)
	}
	if _, _, err := pr.Transform(ctx, in); err == nil || !strings.Contains(err.Error(), "does not support TRANSFORM") {
		t.Fatalf("TRANSFORM on a predicate: %v", err)
	}
	// The source plugin of another module cannot be opened as a transformation.
	if _, err := s.Open(ctx, mustResolve(t, h, "SeqSource"), wire.RoleTransformation, nil); err == nil {
		t.Fatal("source opened as a transformation")
	}
}

func TestTransformPluginsAreListed(t *testing.T) {
	h := transformHost(t)
	var kinds []string
	for _, p := range h.Plugins() {
		if p.Kind == wire.KindTransformation || p.Kind == wire.KindPredicate {
			kinds = append(kinds, string(p.Kind)+":"+p.Class)
		}
	}
	want := []string{"predicate:test.fixture.Even", "transformation:test.fixture.Canned", "transformation:test.fixture.Malformed"}
	if !reflect.DeepEqual(kinds, want) {
		t.Fatalf("plugins %v, want %v", kinds, want)
	}
}
