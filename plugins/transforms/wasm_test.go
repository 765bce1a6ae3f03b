package transforms_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
	"github.com/wasmconnect/wasmconnect/wasmhost"
	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

// The tests and benchmarks in this file build this package to WebAssembly with the documented
// command and run it in the worker's plugin host (wasmhost).

func TestMain(m *testing.M) {
	code := m.Run()
	pluginbuild.Cleanup()
	os.Exit(code)
}

func buildModule(tb testing.TB) string {
	tb.Helper()
	dir, err := pluginbuild.Dir("plugins/transforms")
	if err != nil {
		tb.Fatal(err)
	}
	return dir
}

func newHost(tb testing.TB) *wasmhost.Host {
	tb.Helper()
	ctx := context.Background()
	h, err := wasmhost.New(ctx, wasmhost.Config{
		PluginPath:       []string{buildModule(tb)},
		CallTimeout:      10 * time.Second,
		MemoryLimitBytes: 128 << 20,
		CacheDir:         filepath.Join(os.TempDir(), "wasmconnect-transforms-test-cache"),
		Logger:           slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { h.Close(ctx) })
	if errs := h.LoadErrors(); len(errs) > 0 {
		tb.Fatalf("load errors: %v", errs)
	}
	return h
}

// openConverter opens a JsonConverter in s with cfg.
func openConverter(tb testing.TB, h *wasmhost.Host, s *wasmhost.Session, cfg map[string]string) *wasmhost.Object {
	tb.Helper()
	p, err := h.Resolve("org.apache.kafka.connect.json.JsonConverter", wire.KindConverter)
	if err != nil {
		tb.Fatal(err)
	}
	o, err := s.Open(context.Background(), p, wire.RoleConverter, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return o
}

func openIn(tb testing.TB, h *wasmhost.Host, s *wasmhost.Session, class string, kind wire.Kind, cfg map[string]string) *wasmhost.Object {
	tb.Helper()
	p, err := h.Resolve(class, kind)
	if err != nil {
		tb.Fatal(err)
	}
	role := wire.RoleTransformation
	if kind == wire.KindPredicate {
		role = wire.RolePredicate
	}
	o, err := s.Open(context.Background(), p, role, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return o
}

var allClasses = []string{
	"Cast$Key", "Cast$Value", "DropHeaders", "ExtractField$Key", "ExtractField$Value", "Filter", "Flatten$Key", "Flatten$Value",
	"HeaderFrom$Key", "HeaderFrom$Value", "HoistField$Key", "HoistField$Value", "InsertField$Key", "InsertField$Value", "InsertHeader",
	"MaskField$Key", "MaskField$Value", "RegexRouter", "ReplaceField$Key", "ReplaceField$Value", "SetSchemaMetadata$Key",
	"SetSchemaMetadata$Value", "TimestampConverter$Key", "TimestampConverter$Value", "TimestampRouter", "ValueToKey",
	"predicates.HasHeaderKey", "predicates.RecordIsTombstone", "predicates.TopicNameMatches",
	"io.debezium.transforms.ExtractNewRecordState",
}

// The converters the module carries too (plugins/converters), so that a task's converters share
// its chain's instance.
var converterClasses = []string{
	"org.apache.kafka.connect.json.JsonConverter", "org.apache.kafka.connect.storage.StringConverter",
	"org.apache.kafka.connect.converters.ByteArrayConverter",
}

func TestModuleDescribesAllPlugins(t *testing.T) {
	h := newHost(t)
	got := map[string]wire.Kind{}
	for _, p := range h.Plugins() {
		got[p.Class] = p.Kind
	}
	if len(got) != len(allClasses)+len(converterClasses) {
		t.Errorf("%d plugins, want %d: %v", len(got), len(allClasses)+len(converterClasses), got)
	}
	for _, c := range converterClasses {
		if k := got[c]; k != wire.KindConverter {
			t.Errorf("%s: kind %q, want converter", c, k)
		}
	}
	for _, c := range allClasses {
		want := wire.KindTransformation
		if strings.HasPrefix(c, "predicates.") {
			want = wire.KindPredicate
		}
		class := "org.apache.kafka.connect.transforms." + c
		if strings.HasPrefix(c, "io.debezium.") {
			class = c
		}
		if k := got[class]; k != want {
			t.Errorf("%s: kind %q, want %q", c, k, want)
		}
	}
	// Short names resolve too.
	if p, err := h.Resolve("InsertField$Value", wire.KindTransformation); err != nil || p.Class != "org.apache.kafka.connect.transforms.InsertField$Value" {
		t.Errorf("InsertField$Value: %+v %v", p, err)
	}
	// Validation reports Kafka's messages per key.
	p, _ := h.Resolve("org.apache.kafka.connect.transforms.Cast$Value", wire.KindTransformation)
	errs, err := h.Validate(context.Background(), p, map[string]string{"spec": "a:decimal"})
	if err != nil || len(errs["spec"]) == 0 || !strings.Contains(errs["spec"][0], "Invalid type found in casting spec: decimal") {
		t.Errorf("Validate: %v %v", errs, err)
	}
}

// TestChainInWasm runs a chain through one instance of the module, as a task would: a predicate
// decides where a transformation applies, and three transformations follow each other.
func TestChainInWasm(t *testing.T) {
	h := newHost(t)
	ctx := context.Background()
	s := h.NewSession(wasmhost.Env{Connector: "chain", Task: 0})
	defer s.Close(ctx)
	insert := openIn(t, h, s, "org.apache.kafka.connect.transforms.InsertField$Value", wire.KindTransformation,
		map[string]string{"static.field": "source", "static.value": "wasm", "topic.field": "topic"})
	mask := openIn(t, h, s, "org.apache.kafka.connect.transforms.MaskField$Value", wire.KindTransformation, map[string]string{"fields": "ssn"})
	route := openIn(t, h, s, "org.apache.kafka.connect.transforms.RegexRouter", wire.KindTransformation,
		map[string]string{"regex": "(.*)-raw", "replacement": "$1-clean"})
	isTomb := openIn(t, h, s, "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone", wire.KindPredicate, nil)
	filter := openIn(t, h, s, "Filter", wire.KindTransformation, nil)

	schema := []byte(`{"type":"struct","fields":[{"type":"string","optional":false,"field":"name"},{"type":"string","optional":true,"field":"ssn"}],"optional":false}`)
	in := []wire.Record{
		{Topic: "people-raw", Partition: 0, Offset: 7, Timestamp: -1, Value: wire.JSON(schema, []byte(`{"name":"Ada","ssn":"123-45"}`))},
		{Topic: "people-raw", Partition: 0, Offset: 8, Timestamp: -1, Value: wire.Null()},
		{Topic: "people-raw", Partition: 0, Offset: 9, Timestamp: -1, Value: wire.JSON(nil, []byte(`["not","a","map"]`))},
		{Topic: "other", Partition: 1, Offset: 3, Timestamp: -1, Value: wire.JSON(nil, []byte(`{"name":"Bob","ssn":"999"}`))},
	}
	// Drop tombstones: Filter applies where the predicate matches.
	tomb, failed, err := isTomb.Test(ctx, in)
	if err != nil || len(failed) != 0 || fmt.Sprint(tomb) != "[false true false false]" {
		t.Fatalf("Test: %v %v %v", tomb, failed, err)
	}
	dropped, _, err := filter.Transform(ctx, []wire.Record{in[1]})
	if err != nil || len(dropped) != 0 {
		t.Fatalf("Filter: %+v %v", dropped, err)
	}
	recs := []wire.Record{in[0], in[2], in[3]}
	inputs := []int{0, 2, 3} // index in `in` of each record of recs
	var allFailed []wire.RecordFailure
	for _, tr := range []*wasmhost.Object{insert, mask, route} {
		out, failed, err := tr.Transform(ctx, recs)
		if err != nil {
			t.Fatalf("%s: %v", tr.Plugin().Name, err)
		}
		for _, f := range failed {
			f.Input = inputs[f.Input]
			allFailed = append(allFailed, f)
		}
		next, nextInputs := make([]wire.Record, len(out)), make([]int, len(out))
		for i, o := range out {
			next[i], nextInputs[i] = o.Record, inputs[o.Input]
		}
		recs, inputs = next, nextInputs
	}
	if len(allFailed) != 1 || allFailed[0].Input != 2 || allFailed[0].Class != wire.DataException ||
		allFailed[0].Message != "Only Map objects supported in absence of schema for [field insertion], found: java.util.ArrayList" {
		t.Fatalf("failures: %+v", allFailed)
	}
	if len(recs) != 2 || fmt.Sprint(inputs) != "[0 3]" {
		t.Fatalf("outputs %+v from inputs %v", recs, inputs)
	}
	a, b := recs[0], recs[1]
	if a.Topic != "people-clean" || a.Offset != 7 ||
		string(a.Value.Schema) != `{"type":"struct","fields":[{"type":"string","optional":false,"field":"name"},{"type":"string","optional":true,"field":"ssn"},`+
			`{"type":"string","optional":true,"field":"topic"},{"type":"string","optional":true,"field":"source"}],"optional":false}` ||
		string(a.Value.Bytes) != `{"name":"Ada","ssn":"","topic":"people-raw","source":"wasm"}` {
		t.Errorf("record 0: topic %s offset %d value %s %s", a.Topic, a.Offset, a.Value.Schema, a.Value.Bytes)
	}
	if b.Topic != "other" || b.Partition != 1 || b.Offset != 3 || string(b.Value.Bytes) != `{"name":"Bob","source":"wasm","ssn":"","topic":"other"}` {
		t.Errorf("record 3: topic %s offset %d value %s", b.Topic, b.Offset, b.Value.Bytes)
	}
}

// benchBatch is 1000 records with a struct value and a schema, as JsonConverter reads them.
func benchBatch() []wire.Record {
	schema := []byte(`{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"},{"type":"string","optional":false,"field":"name"},` +
		`{"type":"string","optional":true,"field":"email"},{"type":"double","optional":false,"field":"amount"}],"optional":false,"name":"order"}`)
	rs := make([]wire.Record, 1000)
	for i := range rs {
		rs[i] = wire.Record{Topic: "orders-raw", Partition: int32(i % 3), Offset: int64(i), Timestamp: 1700000000000 + int64(i),
			Key:   wire.String(fmt.Sprintf("k%d", i)),
			Value: wire.JSON(schema, fmt.Appendf(nil, `{"id":%d,"name":"customer %d","email":"c%d@example.com","amount":%d.25}`, i, i, i, i))}
	}
	return rs
}

// lineBatch is 1000 source records of FileStreamSource lines of 100 bytes, as the task has them.
func lineBatch() []wire.Record {
	rs := make([]wire.Record, 1000)
	x := strings.Repeat("x", 90)
	for i := range rs {
		rs[i] = wire.Record{Topic: "lines", Partition: -1, Offset: -1, Timestamp: -1, Value: wire.String(fmt.Sprintf("%09d %s", i, x)),
			SourcePartition: []byte(`{"filename":"/data/in.txt"}`), SourceOffset: []byte(fmt.Sprintf(`{"position":%d}`, 101*(i+1)))}
	}
	return rs
}

// fuelSum adds up the fuel of every guest call of a session: unlike time, the fuel a guest burns
// (about one unit per WebAssembly instruction run) does not move with the load of a shared machine.
type fuelSum struct{ n uint64 }

func (f *fuelSum) Plugin(string, string) wasmhost.PluginCalls { return f }

func (f *fuelSum) Call(_ wire.Op, _ time.Duration, fuel, _ uint64, _ bool) { f.n += fuel }

// BenchmarkChain measures records/s of a batch of 1000 through InsertField$Value, MaskField$Value
// and RegexRouter in one instance, next to a pass-through transformation (the cost of a TRANSFORM
// call on the batch alone) and the host's encoding and decoding of the batch without any call.
// fuel/record is the guest's share, which a busy machine does not move. (A sub-benchmark name
// with a slash is two levels of the -bench pattern: 'Chain/lines/fused' selects the fused lines
// chain.)
//
//	go test -run '^$' -bench 'Chain/lines/fused' -benchmem ./plugins/transforms/
func BenchmarkChain(b *testing.B) {
	h := newHost(b)
	ctx := context.Background()
	batch := benchBatch()
	fuel := &fuelSum{}
	report := func(b *testing.B) {
		b.ReportMetric(float64(len(batch)*b.N)/b.Elapsed().Seconds(), "records/s")
		b.ReportMetric(float64(fuel.n)/float64(len(batch)*b.N), "fuel/record")
	}
	run := func(b *testing.B, chain []*wasmhost.Object) {
		b.ReportAllocs()
		fuel.n = 0
		for b.Loop() {
			recs := batch
			for _, tr := range chain {
				out, failed, err := tr.Transform(ctx, recs)
				if err != nil || len(failed) > 0 || len(out) != len(batch) {
					b.Fatalf("%s: %d outputs, %v, %v", tr.Plugin().Name, len(out), failed, err)
				}
				recs = recs[:0:0]
				for _, o := range out {
					recs = append(recs, o.Record)
				}
			}
		}
		report(b)
	}
	runFused := func(b *testing.B, objs []*wasmhost.Object) {
		steps := make([]wasmhost.ChainStep, len(objs))
		for i, o := range objs {
			steps[i] = wasmhost.ChainStep{Transform: o}
		}
		fc := wasmhost.NewChain(steps)
		if fc == nil {
			b.Fatal("the module does not run TRANSFORM_CHAIN")
		}
		// As the source task runs it: the batch as POLL returned it, decoded into a result and a
		// buffer reused from batch to batch.
		encoded := wire.AppendRecords(nil, batch)
		var res wire.ChainResult
		var buf []byte
		b.ReportAllocs()
		fuel.n = 0
		for b.Loop() {
			var err error
			buf, err = fc.TransformInto(ctx, batch, encoded, &res, buf)
			if err != nil || len(res.Failed) > 0 || len(res.Records()) != len(batch) {
				b.Fatalf("%d outputs, %v, %v", len(res.Records()), res.Failed, err)
			}
		}
		report(b)
	}
	// As a source task runs a chain whose converters share its instance (TRANSFORM_CONVERT).
	runConverting := func(b *testing.B, objs []*wasmhost.Object, key, value *wasmhost.Object) {
		steps := make([]wasmhost.ChainStep, len(objs))
		for i, o := range objs {
			steps[i] = wasmhost.ChainStep{Transform: o}
		}
		cc := wasmhost.NewConvertingChain(wasmhost.NewChain(steps), key, value)
		if cc == nil {
			b.Fatal("the module does not run TRANSFORM_CONVERT")
		}
		encoded := wire.AppendRecords(nil, batch)
		var res wire.ChainResult
		var buf []byte
		b.ReportAllocs()
		fuel.n = 0
		for b.Loop() {
			var err error
			buf, err = cc.TransformConvertInto(ctx, batch, encoded, &res, buf)
			if err != nil || len(res.Failed) > 0 || len(res.Converted()) != len(batch) {
				b.Fatalf("%d outputs, %v, %v", len(res.Converted()), res.Failed, err)
			}
		}
		report(b)
	}
	b.Run("no-transform", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf = wire.AppendRecords(buf[:0], batch)
			if _, err := wire.DecodeRecords(buf); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(batch)*b.N)/b.Elapsed().Seconds(), "records/s")
	})
	s := h.NewSession(wasmhost.Env{Connector: "bench", Calls: fuel})
	defer s.Close(ctx)
	pass := openIn(b, h, s, "RegexRouter", wire.KindTransformation, map[string]string{"regex": "nomatch", "replacement": "x"})
	b.Run("pass-through", func(b *testing.B) { run(b, []*wasmhost.Object{pass}) })
	chain := []*wasmhost.Object{
		openIn(b, h, s, "InsertField$Value", wire.KindTransformation, map[string]string{"static.field": "source", "static.value": "bench", "timestamp.field": "ts"}),
		openIn(b, h, s, "MaskField$Value", wire.KindTransformation, map[string]string{"fields": "email"}),
		openIn(b, h, s, "RegexRouter", wire.KindTransformation, map[string]string{"regex": "(.*)-raw", "replacement": "$1"}),
	}
	b.Run("InsertField+MaskField+RegexRouter", func(b *testing.B) { run(b, chain) })
	b.Run("InsertField+MaskField+RegexRouter/fused", func(b *testing.B) { runFused(b, chain) })
	b.Run("RegexRouter", func(b *testing.B) { run(b, chain[2:]) })
	b.Run("InsertField", func(b *testing.B) { run(b, chain[:1]) })
	// The chain of BenchmarkTable (cmd/wasmconnect): FileStreamSource lines through HoistField,
	// InsertField and RegexRouter.
	lines := openIn(b, h, s, "HoistField$Value", wire.KindTransformation, map[string]string{"field": "line"})
	tableChain := []*wasmhost.Object{lines,
		openIn(b, h, s, "InsertField$Value", wire.KindTransformation, map[string]string{"static.field": "origin", "static.value": "bench"}),
		openIn(b, h, s, "RegexRouter", wire.KindTransformation, map[string]string{"regex": "(.*)", "replacement": "$1"}),
	}
	saved := batch
	batch = lineBatch()
	b.Run("lines:HoistField+InsertField+RegexRouter", func(b *testing.B) { run(b, tableChain) })
	b.Run("lines:HoistField+InsertField+RegexRouter/fused", func(b *testing.B) { runFused(b, tableChain) })
	// With the worker's converters as BenchmarkTable has them: JsonConverter for keys (schemas on)
	// and values (schemas.enable=false).
	key := openConverter(b, h, s, map[string]string{"converter.type": "key"})
	value := openConverter(b, h, s, map[string]string{"converter.type": "value", "schemas.enable": "false"})
	b.Run("lines:HoistField+InsertField+RegexRouter/converting", func(b *testing.B) { runConverting(b, tableChain, key, value) })
	batch = saved
	b.Run("MaskField", func(b *testing.B) { run(b, chain[1:2]) })
}
