package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/wasmconnect/wasmconnect/sdk/go/connect"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
	"github.com/wasmconnect/wasmconnect/wasmhost"
	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pluginbuild.Cleanup()
	os.Exit(code)
}

// SDKs are the conformance modules, one per SDK, each built by pluginbuild from its directory.
var SDKs = []struct{ Name, Pkg string }{
	{"go", "plugins/testdata/conformance"},
	{"rust", "sdk/rust/conformance"},
	{"c", "sdk/c/conformance"},
	{"assemblyscript", "sdk/assemblyscript/conformance"},
	{"zig", "sdk/zig/conformance"},
}

// cases is the one table of ABI cases every SDK passes.
var cases = []struct {
	name string
	run  func(t *testing.T, e *env)
}{
	{"BareABI", testBareABI},
	{"Descriptor", testDescriptor},
	{"Validate", testValidate},
	{"OpenRefusesBadConfig", testOpenRefusesBadConfig},
	{"Source", testSource},
	{"Sink", testSink},
	{"Converter", testConverter},
	{"TransformEveryType", testTransformEveryType},
	{"TransformErrors", testTransformErrors},
	{"Predicate", testPredicate},
	{"Traps", testTraps},
}

func TestConformance(t *testing.T) {
	for _, sdk := range SDKs {
		t.Run(sdk.Name, func(t *testing.T) {
			dir := pluginbuild.DirOf(t, sdk.Pkg)
			e := newEnv(t, dir)
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) { c.run(t, e) })
			}
		})
	}
}

// env is one SDK's conformance module loaded in a plugin host whose log the cases read.
type env struct {
	dir    string
	module string // path of the .wasm
	host   *wasmhost.Host
	logs   *logBuffer
}

type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newEnv(t testing.TB, dir string) *env {
	t.Helper()
	ctx := context.Background()
	logs := &logBuffer{}
	h, err := wasmhost.New(ctx, wasmhost.Config{
		PluginPath: []string{dir}, CallTimeout: 10 * time.Second, MemoryLimitBytes: 64 << 20,
		Logger: slog.New(slog.NewTextHandler(logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(ctx) })
	if errs := h.LoadErrors(); len(errs) > 0 {
		t.Fatalf("load errors: %v", errs)
	}
	mods, _ := filepath.Glob(filepath.Join(dir, "*.wasm"))
	if len(mods) != 1 {
		t.Fatalf("%s holds %v, want one module", dir, mods)
	}
	return &env{dir: dir, module: mods[0], host: h, logs: logs}
}

func (e *env) plugin(t testing.TB, class string, kind wire.Kind) wasmhost.Plugin {
	t.Helper()
	p, err := e.host.Resolve(class, kind)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (e *env) open(t testing.TB, class string, kind wire.Kind, role wire.Role, cfg map[string]string, offsets wasmhost.OffsetReader) *wasmhost.Object {
	t.Helper()
	s := e.host.NewSession(wasmhost.Env{Connector: "conformance", Offsets: offsets})
	t.Cleanup(func() { s.Close(context.Background()) })
	o, err := s.Open(context.Background(), e.plugin(t, class, kind), role, cfg)
	if err != nil {
		t.Fatalf("OPEN %s as %s: %v", class, role, err)
	}
	return o
}

// testBareABI calls the exports with wazero alone, without the host: the version, the descriptor,
// and the error results of an unknown operation and of an unknown handle.
func testBareABI(t *testing.T, e *env) {
	ctx := context.Background()
	bin, err := os.ReadFile(e.module)
	if err != nil {
		t.Fatal(err)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	compiled, err := rt.CompileModule(ctx, bin)
	if err != nil {
		t.Fatal(err)
	}
	// Stubs for whatever the module imports from "wasmconnect": every result -1.
	hb := rt.NewHostModuleBuilder("wasmconnect")
	stubbed := map[string]bool{}
	for _, def := range compiled.ImportedFunctions() {
		mod, name, _ := def.Import()
		if mod != "wasmconnect" || stubbed[name] {
			continue
		}
		stubbed[name] = true
		results := def.ResultTypes()
		hb.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, _ api.Module, stack []uint64) {
			for i := range results {
				stack[i] = api.EncodeI32(-1)
			}
		}), def.ParamTypes(), results).Export(name)
	}
	if _, err := hb.Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	cfg := wazero.NewModuleConfig().WithStartFunctions()
	mod, err := rt.InstantiateModule(ctx, compiled, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if init := mod.ExportedFunction("_initialize"); init != nil {
		if _, err := init.Call(ctx); err != nil {
			t.Fatal(err)
		}
	}
	call := func(name string, args ...uint64) uint64 {
		t.Helper()
		r, err := mod.ExportedFunction(name).Call(ctx, args...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return r[0]
	}
	read := func(r uint64) (string, bool, bool) {
		ptr, n, isErr, retriable := wire.UnpackResult(r)
		b, ok := mod.Memory().Read(ptr, n)
		if !ok {
			t.Fatalf("result %#x outside memory", r)
		}
		return string(b), isErr, retriable
	}
	if v := call("wc_abi_version"); int32(v) != 1 {
		t.Errorf("wc_abi_version = %d, want 1", int32(v))
	}
	desc, isErr, _ := read(call("wc_describe"))
	var d wire.Descriptor
	if isErr || json.Unmarshal([]byte(desc), &d) != nil || d.ABI != 1 || len(d.Plugins) != 5 {
		t.Errorf("wc_describe = %.300q (error %v), want a descriptor of abi 1 with 5 plugins", desc, isErr)
	}
	if msg, isErr, _ := read(call("wc_call", 0, 99, 0, 0)); !isErr || msg == "" {
		t.Errorf("unknown op 99: %q (error %v), want an error result with a message", msg, isErr)
	}
	if msg, isErr, _ := read(call("wc_call", 4711, uint64(wire.OpPoll), 0, 0)); !isErr || msg == "" {
		t.Errorf("POLL on handle 4711 that was never opened: %q (error %v), want an error result with a message", msg, isErr)
	}
	// wc_alloc gives writable memory, and wc_free takes it back.
	ptr := uint32(call("wc_alloc", 1000))
	if ptr == 0 || !mod.Memory().Write(ptr, make([]byte, 1000)) {
		t.Errorf("wc_alloc(1000) = %#x, not a writable block", ptr)
	}
	if _, err := mod.ExportedFunction("wc_free").Call(ctx, uint64(ptr), 1000); err != nil {
		t.Errorf("wc_free: %v", err)
	}
}

func testDescriptor(t *testing.T, e *env) {
	type def struct {
		Name, Type, Importance string
		Required               bool
		Default                *string
	}
	str := func(s string) *string { return &s }
	want := map[string]struct {
		kind wire.Kind
		name string
		defs []def
	}{
		"conformance.Source":    {wire.KindSource, "ConformanceSource", []def{{"topic", "STRING", "HIGH", true, nil}, {"count", "INT", "MEDIUM", false, str("3")}}},
		"conformance.Sink":      {wire.KindSink, "ConformanceSink", []def{{"fail.on", "STRING", "LOW", false, str("")}}},
		"conformance.Converter": {wire.KindConverter, "ConformanceConverter", nil},
		"conformance.Transform": {wire.KindTransformation, "ConformanceTransform", []def{{"header", "STRING", "MEDIUM", false, str("seen")}}},
		"conformance.Predicate": {wire.KindPredicate, "ConformancePredicate", []def{{"header", "STRING", "HIGH", true, nil}}},
	}
	ps := e.host.Plugins()
	if len(ps) != len(want) {
		t.Fatalf("%d plugins, want %d: %+v", len(ps), len(want), ps)
	}
	for _, p := range ps {
		w, ok := want[p.Class]
		if !ok {
			t.Errorf("unexpected plugin %s", p.Class)
			continue
		}
		if p.Kind != w.kind || p.Name != w.name || p.Version != "1.0.0" {
			t.Errorf("%s: kind %s name %s version %s, want %s %s 1.0.0", p.Class, p.Kind, p.Name, p.Version, w.kind, w.name)
		}
		var got []def
		for _, k := range p.Config {
			got = append(got, def{k.Name, k.Type, k.Importance, k.Required, k.DefaultValue})
		}
		if !reflect.DeepEqual(got, w.defs) {
			t.Errorf("%s config: got %s, want %s", p.Class, dump(got), dump(w.defs))
		}
		// The host resolves the short name as well as the class.
		if q, err := e.host.Resolve(w.name, w.kind); err != nil || q.Class != p.Class {
			t.Errorf("Resolve(%s) = %v %v", w.name, q.Class, err)
		}
	}
}

func dump(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func testValidate(t *testing.T, e *env) {
	ctx := context.Background()
	for _, tc := range []struct {
		class string
		kind  wire.Kind
		cfg   map[string]string
		want  map[string][]string
	}{
		{"conformance.Source", wire.KindSource, map[string]string{"topic": "t"}, map[string][]string{}},
		{"conformance.Source", wire.KindSource, map[string]string{"topic": "t", "count": "-1"}, map[string][]string{"count": {"count must not be negative"}}},
		// The SDK words type and required errors as the host does, so the merged answer has each once.
		{"conformance.Source", wire.KindSource, map[string]string{"topic": "t", "count": "x"}, map[string][]string{"count": {"Invalid value x for configuration count: Not a number of type INT"}}},
		{"conformance.Source", wire.KindSource, map[string]string{}, map[string][]string{"topic": {`Missing required configuration "topic" which has no default value.`}}},
		{"conformance.Transform", wire.KindTransformation, map[string]string{"header": ""}, map[string][]string{"header": {"header must not be empty"}}},
		{"conformance.Transform", wire.KindTransformation, map[string]string{}, map[string][]string{}},
		{"conformance.Predicate", wire.KindPredicate, map[string]string{}, map[string][]string{"header": {`Missing required configuration "header" which has no default value.`}}},
	} {
		got, err := e.host.Validate(ctx, e.plugin(t, tc.class, tc.kind), tc.cfg)
		if err != nil {
			t.Errorf("Validate %s %v: %v", tc.class, tc.cfg, err)
			continue
		}
		for k, v := range got {
			if len(v) == 0 {
				delete(got, k)
			}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Validate %s %v:\n got %v\nwant %v", tc.class, tc.cfg, got, tc.want)
		}
	}
}

func testOpenRefusesBadConfig(t *testing.T, e *env) {
	ctx := context.Background()
	for _, tc := range []struct {
		class string
		kind  wire.Kind
		role  wire.Role
		cfg   map[string]string
		want  string
	}{
		{"conformance.Source", wire.KindSource, wire.RoleConnector, map[string]string{"topic": "t", "count": "x"}, "Not a number of type INT"},
		{"conformance.Source", wire.KindSource, wire.RoleConnector, map[string]string{}, `Missing required configuration "topic"`},
		{"conformance.Transform", wire.KindTransformation, wire.RoleTransformation, map[string]string{"header": ""}, "header must not be empty"},
		{"conformance.Predicate", wire.KindPredicate, wire.RolePredicate, map[string]string{}, `Missing required configuration "header"`},
	} {
		s := e.host.NewSession(wasmhost.Env{Connector: "conformance"})
		_, err := s.Open(ctx, e.plugin(t, tc.class, tc.kind), tc.role, tc.cfg)
		var ge *wasmhost.GuestError
		if !errors.As(err, &ge) || !strings.Contains(ge.Message, tc.want) {
			t.Errorf("OPEN %s %v: %v, want a guest error containing %q", tc.class, tc.cfg, err, tc.want)
		}
		s.Close(ctx)
	}
}

type offsets map[string]string

func (o offsets) Offset(partition []byte) ([]byte, bool) {
	v, ok := o[string(partition)]
	return []byte(v), ok
}

func testSource(t *testing.T, e *env) {
	ctx := context.Background()
	conn := e.open(t, "conformance.Source", wire.KindSource, wire.RoleConnector, map[string]string{"topic": "lines"}, nil)
	cfgs, err := conn.TaskConfigs(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []map[string]string{{"topic": "lines", "count": "3", "task.index": "0"}, {"topic": "lines", "count": "3", "task.index": "1"}}
	if !reflect.DeepEqual(cfgs, want) {
		t.Errorf("TASK_CONFIGS(2) = %v, want %v", cfgs, want)
	}

	// A stored offset: the task resumes at record 1.
	task := e.open(t, "conformance.Source", wire.KindSource, wire.RoleTask, cfgs[0], offsets{`{"source":"conformance"}`: `{"next":1}`})
	recs, err := task.Poll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("POLL returned %d records, want 2 (records 1 and 2 of 3)", len(recs))
	}
	row := `{"type":"struct","fields":[{"type":"int64","optional":false,"field":"n"}],"optional":false,"name":"conformance.Row"}`
	for i, r := range recs {
		n := i + 1
		if r.Topic != "lines" || r.Partition != -1 || r.Timestamp != int64(1700000000000+n) {
			t.Errorf("record %d: topic %q partition %d timestamp %d", n, r.Topic, r.Partition, r.Timestamp)
		}
		if r.Key.Tag != wire.TagString || string(r.Key.Bytes) != fmt.Sprintf("key-%d", n) {
			t.Errorf("record %d: key %v %q", n, r.Key.Tag, r.Key.Bytes)
		}
		sameData(t, fmt.Sprintf("record %d value", n), r.Value, wire.JSON([]byte(row), fmt.Appendf(nil, `{"n":%d}`, n)))
		if len(r.Headers) != 1 || r.Headers[0].Key != "i" || string(r.Headers[0].Value.Bytes) != fmt.Sprint(n) {
			t.Errorf("record %d: headers %+v", n, r.Headers)
		}
		if len(r.SourcePartition) > 0 || i == len(recs)-1 {
			sameJSON(t, "source partition", r.SourcePartition, `{"source":"conformance"}`)
			sameJSON(t, "source offset", r.SourceOffset, fmt.Sprintf(`{"next":%d}`, n+1))
		}
	}
	if recs, err := task.Poll(ctx); err != nil || len(recs) != 0 {
		t.Errorf("second POLL: %d records, %v; want none", len(recs), err)
	}
	if err := task.Commit(ctx, nil); err != nil {
		t.Errorf("COMMIT: %v", err)
	}
}

func testSink(t *testing.T, e *env) {
	ctx := context.Background()
	task := e.open(t, "conformance.Sink", wire.KindSink, wire.RoleTask, map[string]string{"fail.on": "boom"}, nil)
	recs := []wire.Record{
		{Topic: "t", Partition: 0, Offset: 5, Timestamp: -1, Value: wire.String("a")},
		{Topic: "t", Partition: 0, Offset: 6, Timestamp: -1, Value: wire.Null()},
		{Topic: "t", Partition: 1, Offset: 2, Timestamp: 1, Key: wire.Bytes([]byte{0, 1}), Value: wire.JSON(nil, []byte(`{"x":1}`)),
			Headers: []wire.Header{{Key: "h", Value: wire.String("v")}}},
	}
	if err := task.Put(ctx, recs); err != nil {
		t.Fatal(err)
	}
	if err := task.Flush(ctx, []wire.TopicPartitionOffset{{Topic: "t", Partition: 0, Offset: 7}, {Topic: "t", Partition: 1, Offset: 3}}); err != nil {
		t.Fatal(err)
	}
	if logs := e.logs.String(); !strings.Contains(logs, "flushed 3 records, 2 partitions") {
		t.Errorf("FLUSH did not log %q; the log:\n%s", "flushed 3 records, 2 partitions", logs)
	}
	err := task.Put(ctx, []wire.Record{{Topic: "t", Partition: 0, Offset: 7, Timestamp: -1, Value: wire.String("boom")}})
	var ge *wasmhost.GuestError
	if !errors.As(err, &ge) || ge.Retriable || !strings.Contains(ge.Message, "conformance: record at offset 7 is boom") {
		t.Errorf("PUT of the failing value: %v, want a non-retriable guest error", err)
	}
}

// everyType is a struct value with every Connect type and logical type, as JsonConverter writes it.
const everyTypeSchema = `{"type":"struct","name":"conformance.Everything","version":2,"doc":"all of Connect","optional":false,"fields":[
 {"field":"i8","type":"int8","optional":false},
 {"field":"i16","type":"int16","optional":false},
 {"field":"i32","type":"int32","optional":false},
 {"field":"i64","type":"int64","optional":false},
 {"field":"f32","type":"float","optional":false},
 {"field":"f64","type":"double","optional":false},
 {"field":"bool","type":"boolean","optional":false},
 {"field":"str","type":"string","optional":false},
 {"field":"bytes","type":"bytes","optional":false},
 {"field":"opt","type":"string","optional":true},
 {"field":"dflt","type":"int32","optional":true,"default":42},
 {"field":"arr","type":"array","items":{"type":"int32","optional":false},"optional":false},
 {"field":"smap","type":"map","keys":{"type":"string","optional":false},"values":{"type":"int64","optional":true},"optional":false},
 {"field":"imap","type":"map","keys":{"type":"int32","optional":false},"values":{"type":"string","optional":false},"optional":false},
 {"field":"nested","type":"struct","fields":[{"field":"a","type":"string","optional":false}],"optional":true},
 {"field":"dec","type":"bytes","name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"},"optional":false},
 {"field":"date","type":"int32","name":"org.apache.kafka.connect.data.Date","version":1,"optional":false},
 {"field":"time","type":"int32","name":"org.apache.kafka.connect.data.Time","version":1,"optional":false},
 {"field":"ts","type":"int64","name":"org.apache.kafka.connect.data.Timestamp","version":1,"optional":false}
]}`

const everyTypePayload = `{"i8":-128,"i16":32767,"i32":-2147483648,"i64":9007199254740993,"f32":1.5,"f64":-3.25e-10,
 "bool":true,"str":"é \"q\" \\ \n \u0001 ✓","bytes":"AAEC/w==","opt":null,"dflt":null,"arr":[1,-2,3],
 "smap":{"a":1,"b":null},"imap":[[1,"one"],[-2,"minus two"]],"nested":{"a":"x"},
 "dec":"MDk=","date":19000,"time":3600000,"ts":1700000000123}`

func testTransformEveryType(t *testing.T, e *env) {
	ctx := context.Background()
	tr := e.open(t, "conformance.Transform", wire.KindTransformation, wire.RoleTransformation, map[string]string{"header": "x-seen"}, nil)
	optString := `{"type":"string","optional":true}`
	in := []wire.Record{
		{Topic: "a", Partition: 0, Offset: 1, Timestamp: 10, Key: wire.String("k"), Value: wire.JSON([]byte(everyTypeSchema), []byte(everyTypePayload)),
			Headers: []wire.Header{{Key: "s", Value: wire.String("v")}, {Key: "b", Value: wire.Bytes([]byte{9})},
				{Key: "j", Value: wire.JSON([]byte(`{"type":"int64","optional":false}`), []byte("7"))}, {Key: "n", Value: wire.Null()}}},
		{Topic: "a", Partition: 0, Offset: 2, Timestamp: -1, Value: wire.Null()},                                  // tombstone
		{Topic: "a", Partition: 0, Offset: 3, Timestamp: -1, Value: wire.JSON([]byte(optString), []byte("null"))}, // tombstone with a schema
		{Topic: "a", Partition: 1, Offset: 4, Timestamp: -1, Value: wire.String("drop")},
		{Topic: "a", Partition: 1, Offset: 5, Timestamp: -1, Value: wire.String("fail")},
		{Topic: "a", Partition: 1, Offset: 6, Timestamp: -1, Key: wire.JSON(nil, []byte(`{"id":[1,2.5,"x",true,null,{"deep":{}}]}`)),
			Value: wire.JSON(nil, []byte(`{"schemaless":1,"f":0.1,"big":-9007199254740993}`))},
		{Topic: "a", Partition: -1, Offset: -1, Timestamp: -1, Value: wire.Bytes([]byte{1, 2, 3}),
			SourcePartition: []byte(`{"p":1}`), SourceOffset: []byte(`{"o":2}`)},
	}
	out, failed, err := tr.Transform(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	wantFailed := []wire.RecordFailure{{Input: 4, Class: wire.DataException, Message: "conformance: fail requested"}}
	if !reflect.DeepEqual(failed, wantFailed) {
		t.Errorf("failures %+v, want %+v", failed, wantFailed)
	}
	var inputs []int
	for _, o := range out {
		inputs = append(inputs, o.Input)
	}
	if !reflect.DeepEqual(inputs, []int{0, 1, 2, 5, 6}) {
		t.Fatalf("outputs for inputs %v, want 0 1 2 5 6 (3 dropped, 4 failed)", inputs)
	}
	if !out[1].Unchanged {
		t.Errorf("a null value: %+v, want UNCHANGED", out[1])
	}
	for _, o := range out {
		if o.Unchanged {
			continue
		}
		r, w := o.Record, in[o.Input]
		where := fmt.Sprintf("record %d", o.Input)
		if r.Topic != w.Topic || r.Partition != w.Partition || r.Timestamp != w.Timestamp || r.Offset != w.Offset ||
			string(r.SourcePartition) != string(w.SourcePartition) || string(r.SourceOffset) != string(w.SourceOffset) {
			t.Errorf("%s: %+v, want the input's topic, partition, timestamp and offsets", where, r)
		}
		sameData(t, where+" key", r.Key, w.Key)
		sameData(t, where+" value", r.Value, w.Value)
		if len(r.Headers) != len(w.Headers)+1 {
			t.Errorf("%s: %d headers, want %d", where, len(r.Headers), len(w.Headers)+1)
			continue
		}
		for i, h := range w.Headers {
			if r.Headers[i].Key != h.Key {
				t.Errorf("%s header %d: %q, want %q", where, i, r.Headers[i].Key, h.Key)
			}
			sameData(t, where+" header "+h.Key, r.Headers[i].Value, h.Value)
		}
		if last := r.Headers[len(r.Headers)-1]; last.Key != "x-seen" || last.Value.Tag != wire.TagString || string(last.Value.Bytes) != "c" {
			t.Errorf("%s: last header %q=%v %q, want x-seen=STRING c", where, last.Key, last.Value.Tag, last.Value.Bytes)
		}
	}
	// A big batch goes through in one call.
	big := make([]wire.Record, 5000)
	for i := range big {
		big[i] = wire.Record{Topic: "t", Partition: -1, Offset: -1, Timestamp: -1, Value: wire.JSON([]byte(`{"type":"int64","optional":false}`), fmt.Appendf(nil, "%d", i))}
	}
	out, failed, err = tr.Transform(ctx, big)
	if err != nil || len(out) != len(big) || len(failed) != 0 {
		t.Fatalf("batch of %d: %d outputs, %d failures, %v", len(big), len(out), len(failed), err)
	}
	sameData(t, "last of the big batch", out[len(out)-1].Record.Value, big[len(big)-1].Value)
}

func testTransformErrors(t *testing.T, e *env) {
	ctx := context.Background()
	tr := e.open(t, "conformance.Transform", wire.KindTransformation, wire.RoleTransformation, nil, nil)
	_, _, err := tr.Transform(ctx, []wire.Record{
		{Topic: "t", Partition: 0, Offset: 1, Timestamp: -1, Value: wire.String("ok")},
		{Topic: "t", Partition: 0, Offset: 2, Timestamp: -1, Value: wire.String("error")},
	})
	var ge *wasmhost.GuestError
	if !errors.As(err, &ge) || !ge.Retriable || !strings.Contains(ge.Message, "conformance: error requested") {
		t.Fatalf("TRANSFORM of an erroring batch: %v, want a retriable guest error", err)
	}
	// An error result leaves the instance usable.
	out, _, err := tr.Transform(ctx, []wire.Record{{Topic: "t", Partition: 0, Offset: 3, Timestamp: -1, Value: wire.String("ok")}})
	if err != nil || len(out) != 1 {
		t.Fatalf("TRANSFORM after an error result: %v %v", out, err)
	}
	if h := out[0].Record.Headers; len(h) != 1 || h[0].Key != "seen" {
		t.Errorf("default header setting: headers %+v, want seen=c", h)
	}
}

func testConverter(t *testing.T, e *env) {
	ctx := context.Background()
	c := e.open(t, "conformance.Converter", wire.KindConverter, wire.RoleConverter, map[string]string{"converter.type": "value"}, nil)
	values := []wire.TopicData{
		{Topic: "t", Value: wire.String("héllo")},
		{Topic: "t", Value: wire.Null()},
		{Topic: "t", Value: wire.Bytes([]byte{0, 255})},
		{Topic: "t", Value: wire.JSON([]byte(everyTypeSchema), []byte(everyTypePayload))},
		{Topic: "t", Value: wire.JSON(nil, []byte(`[1,"two",{"three":3.5}]`))},
	}
	bs, err := c.FromConnect(ctx, values)
	if err != nil {
		t.Fatal(err)
	}
	if string(bs[0]) != "héllo" || bs[1] != nil || !bytes.Equal(bs[2], []byte{0, 255}) {
		t.Errorf("FROM_CONNECT: %q", bs[:3])
	}
	sameData(t, "FROM_CONNECT struct payload", wire.JSON([]byte(everyTypeSchema), bs[3]), values[3].Value)
	sameData(t, "FROM_CONNECT schemaless payload", wire.JSON(nil, bs[4]), values[4].Value)
	data, err := c.ToConnect(ctx, []wire.TopicBytes{{Topic: "t", Bytes: []byte("xyz")}, {Topic: "t", Bytes: nil}, {Topic: "t", Bytes: []byte{}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []wire.Data{wire.String("xyz"), wire.Null(), wire.String("")}
	for i := range want {
		if data[i].Tag != want[i].Tag || string(data[i].Bytes) != string(want[i].Bytes) {
			t.Errorf("TO_CONNECT %d: %v %q, want %v %q", i, data[i].Tag, data[i].Bytes, want[i].Tag, want[i].Bytes)
		}
	}
}

func testPredicate(t *testing.T, e *env) {
	ctx := context.Background()
	p := e.open(t, "conformance.Predicate", wire.KindPredicate, wire.RolePredicate, map[string]string{"header": "match"}, nil)
	matches, failed, err := p.Test(ctx, []wire.Record{
		{Topic: "t", Partition: 0, Offset: 1, Timestamp: -1, Value: wire.String("a"), Headers: []wire.Header{{Key: "other", Value: wire.Null()}, {Key: "match", Value: wire.Null()}}},
		{Topic: "t", Partition: 0, Offset: 2, Timestamp: -1, Value: wire.String("b")},
		{Topic: "t", Partition: 0, Offset: 3, Timestamp: -1, Value: wire.String("fail"), Headers: []wire.Header{{Key: "match", Value: wire.Null()}}},
		{Topic: "t", Partition: 0, Offset: 4, Timestamp: -1, Value: wire.Null(), Headers: []wire.Header{{Key: "match", Value: wire.String("x")}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []bool{true, false, false, true}; !reflect.DeepEqual(matches, want) {
		t.Errorf("TEST = %v, want %v", matches, want)
	}
	if want := []wire.RecordFailure{{Input: 2, Class: wire.DataException, Message: "conformance: fail requested"}}; !reflect.DeepEqual(failed, want) {
		t.Errorf("failures %+v, want %+v", failed, want)
	}
}

func testTraps(t *testing.T, e *env) {
	ctx := context.Background()
	for _, tc := range []struct {
		class string
		kind  wire.Kind
		role  wire.Role
		cfg   map[string]string
		call  func(*wasmhost.Object, []wire.Record) error
	}{
		{"conformance.Transform", wire.KindTransformation, wire.RoleTransformation, nil,
			func(o *wasmhost.Object, rs []wire.Record) error { _, _, err := o.Transform(ctx, rs); return err }},
		{"conformance.Predicate", wire.KindPredicate, wire.RolePredicate, map[string]string{"header": "h"},
			func(o *wasmhost.Object, rs []wire.Record) error { _, _, err := o.Test(ctx, rs); return err }},
	} {
		o := e.open(t, tc.class, tc.kind, tc.role, tc.cfg, nil)
		err := tc.call(o, []wire.Record{{Topic: "t", Partition: 0, Offset: 1, Timestamp: -1, Value: wire.String("trap")}})
		var te *wasmhost.TrapError
		if !errors.As(err, &te) {
			t.Errorf("%s on a trapping record: %v, want a *wasmhost.TrapError", tc.class, err)
			continue
		}
		// The instance is discarded: the next call fails without running guest code.
		err = tc.call(o, []wire.Record{{Topic: "t", Partition: 0, Offset: 2, Timestamp: -1, Value: wire.String("ok")}})
		if err == nil {
			t.Errorf("%s after a trap: no error, want the discarded instance's", tc.class)
		}
		// A new session has a fresh instance that works.
		o = e.open(t, tc.class, tc.kind, tc.role, tc.cfg, nil)
		if err := tc.call(o, []wire.Record{{Topic: "t", Partition: 0, Offset: 2, Timestamp: -1, Value: wire.String("ok")}}); err != nil {
			t.Errorf("%s in a new session after a trap: %v", tc.class, err)
		}
	}
}

// sameData fails t unless got and want are the same Connect data: the same tag, and for JSON the
// same schema and value, whatever the spacing, member order of schemas and number spelling.
func sameData(t *testing.T, where string, got, want wire.Data) {
	t.Helper()
	if got.Tag != want.Tag {
		t.Errorf("%s: tag %d, want %d", where, got.Tag, want.Tag)
		return
	}
	if got.Tag != wire.TagJSON {
		if !bytes.Equal(got.Bytes, want.Bytes) {
			t.Errorf("%s: %q, want %q", where, got.Bytes, want.Bytes)
		}
		return
	}
	g, err1 := canonical(got)
	w, err2 := canonical(want)
	if err1 != nil || err2 != nil || g != w {
		t.Errorf("%s:\n got %s (%v)\nwant %s (%v)\n(raw schema %s\n payload %s)", where, g, err1, w, err2, got.Schema, got.Bytes)
	}
}

// canonical is data read and written again by the Go SDK's model.
func canonical(d wire.Data) (string, error) {
	s, v, err := connect.Decode(d)
	if err != nil {
		return "", err
	}
	if s == nil && v == nil {
		return "null", nil
	}
	e, err := connect.Encode(s, v)
	if err != nil {
		return "", err
	}
	if s == nil {
		return string(e.Bytes), nil
	}
	// A parsed schema writes its JSON as it was read; a clone writes it afresh.
	schema, err := s.Clone().JSON()
	return string(schema) + " " + string(e.Bytes), err
}

func sameJSON(t *testing.T, where string, got []byte, want string) {
	t.Helper()
	var g, w any
	if json.Unmarshal(got, &g) != nil || json.Unmarshal([]byte(want), &w) != nil || !reflect.DeepEqual(g, w) {
		t.Errorf("%s: %s, want %s", where, got, want)
	}
}
