package sdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// fakeHost records log lines and serves offsets from a map.
type fakeHost struct {
	mu      sync.Mutex
	logs    []string
	offsets map[string]string
}

func (h *fakeHost) log(level LogLevel, msg string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.logs = append(h.logs, level.String()+" "+msg)
}

func (h *fakeHost) offsetGet(p []byte) ([]byte, bool, error) {
	o, ok := h.offsets[string(p)]
	return []byte(o), ok, nil
}

// testSource is a scriptable source connector.
type testSource struct {
	validate func(Config) map[string][]string
	tasks    func(Config, int) ([]Config, error)
	poll     func(n int) ([]SourceRecord, error)
	started  *TaskContext
	startCfg Config
	stopped  bool
	commits  int
}

func (s *testSource) Validate(c Config) map[string][]string {
	if s.validate != nil {
		return s.validate(c)
	}
	return nil
}

func (s *testSource) TaskConfigs(c Config, n int) ([]Config, error) {
	if s.tasks != nil {
		return s.tasks(c, n)
	}
	return []Config{c}, nil
}

func (s *testSource) NewTask() SourceTask { return &testSourceTask{s: s} }

type testSourceTask struct {
	s     *testSource
	polls int
}

func (t *testSourceTask) Start(ctx *TaskContext, cfg Config) error {
	t.s.started, t.s.startCfg = ctx, cfg
	if cfg["fail.start"] == "true" {
		return errors.New("cannot start")
	}
	return nil
}

func (t *testSourceTask) Poll() ([]SourceRecord, error) {
	t.polls++
	if t.s.poll == nil {
		return nil, nil
	}
	return t.s.poll(t.polls)
}

func (t *testSourceTask) Commit() error { t.s.commits++; return nil }
func (t *testSourceTask) Stop() error   { t.s.stopped = true; return nil }

type testSink struct {
	put     []SinkRecord
	flushed []TopicPartitionOffset
}

func (s *testSink) Validate(Config) map[string][]string           { return nil }
func (s *testSink) TaskConfigs(c Config, n int) ([]Config, error) { return []Config{c}, nil }
func (s *testSink) NewTask() SinkTask                             { return &testSinkTask{s} }

type testSinkTask struct{ s *testSink }

func (t *testSinkTask) Start(*TaskContext, Config) error { return nil }
func (t *testSinkTask) Put(rs []SinkRecord) error        { t.s.put = append(t.s.put, rs...); return nil }
func (t *testSinkTask) Flush(o []TopicPartitionOffset) error {
	t.s.flushed = o
	return nil
}
func (t *testSinkTask) Stop() error { return nil }

type upperConverter struct{ isKey bool }

func (c *upperConverter) Configure(cfg Config, isKey bool) error {
	c.isKey = isKey
	if cfg["fail"] == "true" {
		return errors.New("bad converter config")
	}
	return nil
}

func (c *upperConverter) FromConnect(topic string, v Data) ([]byte, error) {
	if v.IsNull() {
		return nil, nil
	}
	return []byte(strings.ToUpper(string(v.Bytes))), nil
}

func (c *upperConverter) ToConnect(topic string, b []byte) (Data, error) {
	if b == nil {
		return Null(), nil
	}
	if string(b) == "boom" {
		panic("converter exploded")
	}
	return String(topic + ":" + string(b)), nil
}

func newTestDispatcher(t *testing.T) (*dispatcher, *testSource, *testSink, *fakeHost) {
	t.Helper()
	h := &fakeHost{offsets: map[string]string{}}
	d := newDispatcher(h)
	src, snk := &testSource{}, &testSink{}
	d.register(&plugin{kind: wire.KindSource, source: src, info: Info{
		Name: "TestSource", Class: "com.example.TestSourceConnector", Aliases: []string{"TestSourceConnector"}, Version: "1.2.3",
		Config: []ConfigDef{
			{Name: "topic", Required: true, Importance: High, Documentation: "The topic"},
			{Name: "batch.size", Type: TypeInt, Default: new("2000"), Importance: Low},
			{Name: "file", Default: nil},
			{Name: "mode", Default: new("a"), Validator: OneOf("a", "b")},
		},
	}})
	d.register(&plugin{kind: wire.KindSink, sink: snk, info: Info{Name: "TestSink"}})
	d.register(&plugin{kind: wire.KindConverter, newConverter: func() Converter { return &upperConverter{} }, info: Info{
		Name: "Upper", Class: "com.example.Upper",
		Config: []ConfigDef{{Name: "flag", Type: TypeBoolean, Default: new("false")}},
	}})
	return d, src, snk, h
}

func call(t *testing.T, d *dispatcher, op wire.Op, h int32, in []byte) []byte {
	t.Helper()
	out, err := d.handle(op, h, in)
	if err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	return append([]byte(nil), out...)
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func open(t *testing.T, d *dispatcher, plugin string, role wire.Role, cfg map[string]string) int32 {
	t.Helper()
	out, err := d.handle(wire.OpOpen, 0, mustJSON(wire.OpenRequest{Plugin: plugin, Role: role, Config: cfg,
		Context: wire.OpenContext{Connector: "c1", Task: 2, FSAllow: []string{"/data/"}}}))
	if err != nil {
		t.Fatalf("open %s as %s: %v", plugin, role, err)
	}
	var r wire.OpenResponse
	if err := json.Unmarshal(out, &r); err != nil || r.Handle <= 0 {
		t.Fatalf("open response %s: %v", out, err)
	}
	return r.Handle
}

func TestDescribe(t *testing.T) {
	d, _, _, _ := newTestDispatcher(t)
	var desc map[string]any
	if err := json.Unmarshal(d.describe(), &desc); err != nil {
		t.Fatal(err)
	}
	if desc["abi"] != float64(1) {
		t.Errorf("abi = %v", desc["abi"])
	}
	plugins := desc["plugins"].([]any)
	if len(plugins) != 3 {
		t.Fatalf("plugins: %v", plugins)
	}
	src := plugins[0].(map[string]any)
	want := map[string]any{"name": "TestSource", "class": "com.example.TestSourceConnector", "kind": "source", "version": "1.2.3",
		"aliases": []any{"TestSourceConnector"}}
	for k, v := range want {
		if !reflect.DeepEqual(src[k], v) {
			t.Errorf("%s = %v, want %v", k, src[k], v)
		}
	}
	cfg := src["config"].([]any)
	topic := cfg[0].(map[string]any)
	wantTopic := map[string]any{"name": "topic", "type": "STRING", "required": true, "default_value": nil, "importance": "HIGH",
		"documentation": "The topic", "group": nil, "order": float64(-1), "width": "NONE", "display_name": "topic", "dependents": []any{}}
	if !reflect.DeepEqual(topic, wantTopic) {
		t.Errorf("topic key:\n got %v\nwant %v", topic, wantTopic)
	}
	batch := cfg[1].(map[string]any)
	if batch["default_value"] != "2000" || batch["required"] != false || batch["type"] != "INT" {
		t.Errorf("batch.size key: %v", batch)
	}
	if file := cfg[2].(map[string]any); file["default_value"] != nil || file["required"] != false || file["importance"] != "MEDIUM" {
		t.Errorf("file key: %v", file)
	}
	sink := plugins[1].(map[string]any)
	if sink["class"] != "TestSink" || sink["version"] != "undefined" || !reflect.DeepEqual(sink["config"], []any{}) {
		t.Errorf("sink: %v", sink)
	}
	if _, ok := sink["aliases"]; ok {
		t.Errorf("sink has aliases: %v", sink)
	}
}

func TestOpenClose(t *testing.T) {
	d, src, _, _ := newTestDispatcher(t)
	for _, name := range []string{"TestSource", "com.example.TestSourceConnector", "TestSourceConnector"} {
		h := open(t, d, name, wire.RoleConnector, map[string]string{"topic": "t"})
		call(t, d, wire.OpClose, h, nil)
		if _, err := d.handle(wire.OpClose, h, nil); err == nil || !strings.Contains(err.Error(), "no open object with handle") {
			t.Errorf("second close: %v", err)
		}
	}
	h := open(t, d, "TestSource", wire.RoleTask, map[string]string{"topic": "t"})
	if src.started == nil || src.started.Connector() != "c1" || src.started.Task() != 2 || !reflect.DeepEqual(src.started.FSAllow(), []string{"/data"}) {
		t.Fatalf("task context: %+v", src.started)
	}
	if src.startCfg["batch.size"] != "2000" || src.startCfg["topic"] != "t" {
		t.Errorf("task config with defaults: %v", src.startCfg)
	}
	if _, ok := src.startCfg["file"]; ok {
		t.Errorf("null default was filled in: %v", src.startCfg)
	}
	h2 := open(t, d, "TestSource", wire.RoleTask, map[string]string{"topic": "t"})
	if h2 == h {
		t.Fatalf("handles not unique: %d", h)
	}
	call(t, d, wire.OpCommit, h, nil)
	call(t, d, wire.OpClose, h, nil)
	if !src.stopped || src.commits != 1 {
		t.Errorf("stopped=%v commits=%d", src.stopped, src.commits)
	}

	for _, tc := range []struct {
		plugin string
		role   wire.Role
		cfg    map[string]string
		want   string
	}{
		{"Nope", wire.RoleTask, nil, `this module has no plugin "Nope" (it has [TestSource TestSink Upper])`},
		{"Upper", wire.RoleTask, nil, `Upper is a converter plugin and cannot be opened as "task"`},
		{"TestSource", wire.RoleConverter, nil, `TestSource is a source plugin and cannot be opened as "converter"`},
		{"TestSource", wire.RoleConnector, map[string]string{"batch.size": "x"},
			`TestSource: invalid configuration: Invalid value x for configuration batch.size: Not a number of type INT; Missing required configuration "topic" which has no default value.`},
		{"TestSource", wire.RoleTask, map[string]string{"fail.start": "true"}, "cannot start"},
		{"Upper", wire.RoleConverter, map[string]string{"fail": "true"}, "bad converter config"},
		{"Upper", wire.RoleConverter, map[string]string{"flag": "yes"}, "Upper: invalid configuration: Invalid value yes for configuration flag: Expected value to be either true or false"},
	} {
		_, err := d.handle(wire.OpOpen, 0, mustJSON(wire.OpenRequest{Plugin: tc.plugin, Role: tc.role, Config: tc.cfg}))
		if err == nil || err.Error() != tc.want {
			t.Errorf("open %s as %s: got %v\nwant %s", tc.plugin, tc.role, err, tc.want)
		}
	}
	if _, err := d.handle(wire.OpOpen, 0, []byte("{")); err == nil {
		t.Error("bad JSON accepted")
	}
	if _, err := d.handle(wire.OpOpen, 5, nil); err == nil {
		t.Error("OPEN with a handle accepted")
	}
}

func TestValidate(t *testing.T) {
	d, src, _, _ := newTestDispatcher(t)
	src.validate = func(c Config) map[string][]string {
		errs := map[string][]string{}
		if c["topic"] == "bad" {
			errs["topic"] = []string{"topic must not be bad"}
		}
		if _, err := c.Int("batch.size", 0); err != nil {
			errs["batch.size"] = []string{err.Error()} // the same message as the SDK's: reported once
		}
		errs["empty"] = nil
		return errs
	}
	validate := func(cfg map[string]string) map[string][]string {
		out := call(t, d, wire.OpValidate, 0, mustJSON(wire.ValidateRequest{Plugin: "TestSource", Config: cfg}))
		var r wire.ValidateResponse
		if err := json.Unmarshal(out, &r); err != nil || r.Errors == nil {
			t.Fatalf("validate response %s: %v", out, err)
		}
		return r.Errors
	}
	if errs := validate(map[string]string{"topic": "t"}); len(errs) != 0 {
		t.Errorf("valid config: %v", errs)
	}
	got := validate(map[string]string{"batch.size": "12x", "mode": "c"})
	want := map[string][]string{
		"topic":      {`Missing required configuration "topic" which has no default value.`},
		"batch.size": {"Invalid value 12x for configuration batch.size: Not a number of type INT"},
		"mode":       {"Invalid value c for configuration mode: String must be one of: a, b"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n got %v\nwant %v", got, want)
	}
	if got := validate(map[string]string{"topic": "bad", "batch.size": " 7 "}); !reflect.DeepEqual(got, map[string][]string{"topic": {"topic must not be bad"}}) {
		t.Errorf("plugin errors: %v", got)
	}
	out := call(t, d, wire.OpValidate, 0, mustJSON(wire.ValidateRequest{Plugin: "TestSource", Config: map[string]string{"topic": "t"}}))
	if string(out) != `{"errors":{}}` {
		t.Errorf("valid response = %s", out)
	}
}

func TestTaskConfigs(t *testing.T) {
	d, src, _, _ := newTestDispatcher(t)
	src.tasks = func(c Config, n int) ([]Config, error) {
		if c["topic"] == "many" {
			return make([]Config, n+1), nil
		}
		var out []Config
		for _, g := range Split([]string{"a", "b", "c", "d", "e"}, n) {
			tc := c.Clone()
			tc["items"] = strings.Join(g, ",")
			out = append(out, tc)
		}
		return out, nil
	}
	h := open(t, d, "TestSource", wire.RoleConnector, map[string]string{"topic": "t"})
	var cfgs []map[string]string
	if err := json.Unmarshal(call(t, d, wire.OpTaskConfigs, h, []byte(`{"max_tasks":2}`)), &cfgs); err != nil {
		t.Fatal(err)
	}
	if len(cfgs) != 2 || cfgs[0]["items"] != "a,b,c" || cfgs[1]["items"] != "d,e" || cfgs[0]["batch.size"] != "2000" {
		t.Errorf("task configs: %v", cfgs)
	}
	if err := json.Unmarshal(call(t, d, wire.OpTaskConfigs, h, []byte(`{"max_tasks":9}`)), &cfgs); err != nil || len(cfgs) != 5 {
		t.Errorf("9 tasks max: %v %v", cfgs, err)
	}
	if _, err := d.handle(wire.OpTaskConfigs, h, []byte(`{"max_tasks":0}`)); err == nil {
		t.Error("max_tasks 0 accepted")
	}
	h2 := open(t, d, "TestSource", wire.RoleConnector, map[string]string{"topic": "many"})
	if _, err := d.handle(wire.OpTaskConfigs, h2, []byte(`{"max_tasks":3}`)); err == nil || !strings.Contains(err.Error(), "generated 4 task configs, more than tasks.max (3)") {
		t.Errorf("too many task configs: %v", err)
	}
	ht := open(t, d, "TestSource", wire.RoleTask, map[string]string{"topic": "t"})
	if _, err := d.handle(wire.OpTaskConfigs, ht, []byte(`{"max_tasks":1}`)); err == nil || err.Error() != "TASK_CONFIGS is not supported by a source task of TestSource" {
		t.Errorf("TASK_CONFIGS on a task: %v", err)
	}
}

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		n, groups int
		want      string
	}{
		{5, 2, "[[0 1 2] [3 4]]"}, {5, 5, "[[0] [1] [2] [3] [4]]"}, {2, 4, "[[0] [1]]"}, {0, 3, "[]"}, {7, 3, "[[0 1 2] [3 4] [5 6]]"},
	} {
		items := make([]int, tc.n)
		for i := range items {
			items[i] = i
		}
		if got := fmt.Sprint(Split(items, tc.groups)); got != tc.want {
			t.Errorf("Split(%d items, %d) = %s, want %s", tc.n, tc.groups, got, tc.want)
		}
	}
}

func decodeRecords(t *testing.T, b []byte) []wire.Record {
	t.Helper()
	rs, err := wire.DecodeRecords(b)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func TestPollEncodesOffsetOnLastRecordPerPartition(t *testing.T) {
	d, src, _, _ := newTestDispatcher(t)
	pa := map[string]any{"filename": "a"}
	ts := time.UnixMilli(1700000000123)
	src.poll = func(n int) ([]SourceRecord, error) {
		switch n {
		case 1:
			pb := map[string]any{"filename": "b"}
			return []SourceRecord{
				{Topic: "t", Value: String("a1"), SourcePartition: pa, SourceOffset: map[string]any{"position": 1}, Timestamp: ts},
				{Topic: "t", Value: String("b1"), SourcePartition: pb, SourceOffset: map[string]any{"position": 10}},
				{Topic: "t", Value: String("a2"), SourcePartition: map[string]any{"filename": "a"}, SourceOffset: map[string]any{"position": 2}},
				{Topic: "u", Partition: new(int32(3)), Value: String("b2"), SourcePartition: pb, SourceOffset: map[string]any{"position": 20}},
				{Topic: "t", Value: String("a3"), SourcePartition: pa}, // no offset: carries nothing
				{Topic: "t", Key: Bytes([]byte("k")), Value: Null(), Headers: []Header{{Key: "h", Value: String("v")}}},
			}, nil
		case 2:
			pa["filename"] = "changed" // the same map mutated: the cache must not return stale JSON
			return []SourceRecord{{Topic: "t", Value: String("x"), SourcePartition: pa, SourceOffset: map[string]any{"position": int64(1) << 60}}}, nil
		}
		return nil, nil
	}
	h := open(t, d, "TestSource", wire.RoleTask, map[string]string{"topic": "t"})
	rs := decodeRecords(t, call(t, d, wire.OpPoll, h, nil))
	if len(rs) != 6 {
		t.Fatalf("got %d records", len(rs))
	}
	type po struct{ p, o string }
	var got []po
	for _, r := range rs {
		got = append(got, po{string(r.SourcePartition), string(r.SourceOffset)})
	}
	want := []po{{}, {}, {`{"filename":"a"}`, `{"position":2}`}, {`{"filename":"b"}`, `{"position":20}`}, {}, {}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("partitions/offsets:\n got %q\nwant %q", got, want)
	}
	if r := rs[0]; r.Topic != "t" || r.Partition != -1 || r.Offset != -1 || r.Timestamp != 1700000000123 || string(r.Value.Bytes) != "a1" || r.Value.Tag != wire.TagString {
		t.Errorf("record 0: %+v", r)
	}
	if r := rs[1]; r.Timestamp != -1 {
		t.Errorf("zero time: %d", r.Timestamp)
	}
	if r := rs[3]; r.Partition != 3 || r.Topic != "u" {
		t.Errorf("record 3: %+v", r)
	}
	if r := rs[5]; r.Key.Tag != wire.TagBytes || !r.Value.IsNull() || len(r.Headers) != 1 || r.Headers[0].Key != "h" {
		t.Errorf("record 5: %+v", r)
	}
	rs = decodeRecords(t, call(t, d, wire.OpPoll, h, nil))
	if len(rs) != 1 || string(rs[0].SourcePartition) != `{"filename":"changed"}` || string(rs[0].SourceOffset) != `{"position":1152921504606846976}` {
		t.Errorf("second poll: %+v", rs)
	}
	if out := call(t, d, wire.OpPoll, h, nil); string(out) != "\x00\x00\x00\x00" {
		t.Errorf("empty poll = %q", out)
	}
}

func TestPanicBecomesError(t *testing.T) {
	d, src, _, _ := newTestDispatcher(t)
	src.poll = func(n int) ([]SourceRecord, error) {
		if n == 1 {
			var m map[string]int
			m["x"] = 1 // runtime error: assignment to entry in nil map
		}
		return []SourceRecord{{Topic: "t", Value: String("ok")}}, nil
	}
	h := open(t, d, "TestSource", wire.RoleTask, map[string]string{"topic": "t"})
	_, err := d.handle(wire.OpPoll, h, nil)
	var pe *PanicError
	if !errors.As(err, &pe) {
		t.Fatalf("got %v, want a *PanicError", err)
	}
	msg := err.Error()
	for _, s := range []string{"TestSource: panic during POLL: assignment to entry in nil map", "goroutine", "dispatch_test.go"} {
		if !strings.Contains(msg, s) {
			t.Errorf("panic error lacks %q:\n%s", s, msg)
		}
	}
	if errorFlags(err) != wire.ResultError {
		t.Errorf("flags %x", errorFlags(err))
	}
	// The dispatcher is still usable: the lock was released and the object kept.
	if rs := decodeRecords(t, call(t, d, wire.OpPoll, h, nil)); len(rs) != 1 {
		t.Errorf("poll after panic: %v", rs)
	}
	// A panic in a converter during TO_CONNECT.
	c := open(t, d, "Upper", wire.RoleConverter, nil)
	_, err = d.handle(wire.OpToConnect, c, wire.AppendTopicBytesBatch(nil, []wire.TopicBytes{{Topic: "t", Bytes: []byte("boom")}}))
	if !errors.As(err, &pe) || pe.Plugin != "Upper" || pe.Op != "TO_CONNECT" || pe.Value != "converter exploded" {
		t.Errorf("converter panic: %v", err)
	}
}

func TestRetriableErrors(t *testing.T) {
	d, src, _, _ := newTestDispatcher(t)
	src.poll = func(n int) ([]SourceRecord, error) {
		if n == 1 {
			return nil, Retriable(fmt.Errorf("wrapped: %w", errors.New("timeout")))
		}
		return nil, errors.New("fatal")
	}
	h := open(t, d, "TestSource", wire.RoleTask, map[string]string{"topic": "t"})
	_, err := d.handle(wire.OpPoll, h, nil)
	if !IsRetriable(err) || errorFlags(err) != wire.ResultError|wire.ResultRetriable || string(errorMessage(err)) != "wrapped: timeout" {
		t.Errorf("retriable: %v flags %x", err, errorFlags(err))
	}
	_, err = d.handle(wire.OpPoll, h, nil)
	if IsRetriable(err) || errorFlags(err) != wire.ResultError {
		t.Errorf("fatal: %v", err)
	}
	if Retriable(nil) != nil {
		t.Error("Retriable(nil) != nil")
	}
	if string(errorMessage(errors.New(""))) == "" {
		t.Error("empty error message")
	}
}

func TestSinkPutAndFlush(t *testing.T) {
	d, _, snk, _ := newTestDispatcher(t)
	h := open(t, d, "TestSink", wire.RoleTask, nil)
	in := wire.AppendRecords(nil, []wire.Record{
		{Topic: "t", Partition: 1, Offset: 41, Timestamp: 1700000000000, Value: wire.String("v1")},
		{Topic: "t", Partition: 1, Offset: 42, Timestamp: -1, Key: wire.Bytes([]byte("k")), Value: wire.Null()},
	})
	call(t, d, wire.OpPut, h, in)
	for i := range in {
		in[i] = 0 // the host reuses its buffer
	}
	if len(snk.put) != 2 {
		t.Fatalf("put %d records", len(snk.put))
	}
	r := snk.put[0]
	if r.Topic != "t" || r.Partition != 1 || r.Offset != 41 || !r.Timestamp.Equal(time.UnixMilli(1700000000000)) || string(r.Value.Bytes) != "v1" {
		t.Errorf("record 0: %+v", r)
	}
	if r := snk.put[1]; !r.Timestamp.IsZero() || string(r.Key.Bytes) != "k" || !r.Value.IsNull() {
		t.Errorf("record 1: %+v", r)
	}
	call(t, d, wire.OpFlush, h, []byte(`[{"topic":"t","partition":1,"offset":43}]`))
	if !reflect.DeepEqual(snk.flushed, []TopicPartitionOffset{{Topic: "t", Partition: 1, Offset: 43}}) {
		t.Errorf("flushed %v", snk.flushed)
	}
	if _, err := d.handle(wire.OpPut, h, []byte{1, 2}); err == nil {
		t.Error("truncated batch accepted")
	}
	if _, err := d.handle(wire.OpPoll, h, nil); err == nil || err.Error() != "POLL is not supported by a sink task of TestSink" {
		t.Errorf("POLL on a sink: %v", err)
	}
	if _, err := d.handle(wire.Op(99), h, nil); err == nil || err.Error() != "unknown operation 99" {
		t.Errorf("unknown op: %v", err)
	}
	if _, err := d.handle(wire.Op(99), 12345, nil); err == nil || err.Error() != "unknown operation 99" {
		t.Errorf("unknown op, unknown handle: %v", err)
	}
}

func TestConverterOps(t *testing.T) {
	d, _, _, _ := newTestDispatcher(t)
	h := open(t, d, "Upper", wire.RoleConverter, map[string]string{"converter.type": "key"})
	out := call(t, d, wire.OpFromConnect, h, wire.AppendDataBatch(nil, []wire.TopicData{{Topic: "t", Value: wire.String("ab")}, {Topic: "t", Value: wire.Null()}}))
	bs, err := wire.DecodeBytesBatch(out)
	if err != nil || len(bs) != 2 || string(bs[0]) != "AB" || bs[1] != nil {
		t.Errorf("FROM_CONNECT: %q %v", bs, err)
	}
	out = call(t, d, wire.OpToConnect, h, wire.AppendTopicBytesBatch(nil, []wire.TopicBytes{{Topic: "t", Bytes: []byte("x")}, {Topic: "u"}}))
	ds, err := wire.DecodeDataBatch(out)
	if err != nil || len(ds) != 2 || string(ds[0].Value.Bytes) != "t:x" || ds[0].Topic != "t" || !ds[1].Value.IsNull() {
		t.Errorf("TO_CONNECT: %+v %v", ds, err)
	}
}

func TestTaskContextOffset(t *testing.T) {
	h := &fakeHost{offsets: map[string]string{`{"filename":"/data/a","n":1}`: `{"position":9007199254740993,"f":1.5,"s":"x"}`}}
	ctx := &TaskContext{host: h}
	off, ok, err := ctx.Offset(map[string]any{"n": 1, "filename": "/data/a"})
	if err != nil || !ok {
		t.Fatalf("offset: %v %v", ok, err)
	}
	if !reflect.DeepEqual(off, map[string]any{"position": int64(9007199254740993), "f": 1.5, "s": "x"}) {
		t.Errorf("offset = %#v", off)
	}
	if _, ok, err := ctx.Offset(map[string]any{"filename": "other"}); ok || err != nil {
		t.Errorf("missing offset: %v %v", ok, err)
	}
	h.offsets[`{"x":1}`] = `[1]`
	if _, _, err := ctx.Offset(map[string]any{"x": 1}); err == nil {
		t.Error("non-object offset accepted")
	}
	ctx.Logf(LevelWarn, "hello %d", 7)
	if !reflect.DeepEqual(h.logs, []string{"WARN hello 7"}) {
		t.Errorf("logs %v", h.logs)
	}
}

type committingTask struct {
	testSourceTask
	committed [][]CommittedOffset
}

func (t *committingTask) CommitOffsets(c []CommittedOffset) error {
	t.committed = append(t.committed, c)
	return nil
}

// TestCommitOffsetsGetsTheStoredOffsets: a task that implements OffsetCommitter is told, on COMMIT,
// the offsets the host stored, decoded as TaskContext.Offset decodes them; an empty input is none.
func TestCommitOffsetsGetsTheStoredOffsets(t *testing.T) {
	task := &committingTask{testSourceTask: testSourceTask{s: &testSource{}}}
	o := &sourceTaskObject{p: &plugin{info: Info{Name: "TestSource"}, kind: wire.KindSource}, task: task}
	d := &dispatcher{objects: map[int32]object{7: o}}
	in := wire.AppendCommitted(nil, map[string][]byte{`{"server":"db"}`: []byte(`{"lsn":123,"snapshot":"INITIAL"}`)})
	if _, err := d.handle(wire.OpCommit, 7, in); err != nil {
		t.Fatal(err)
	}
	if _, err := d.handle(wire.OpCommit, 7, nil); err != nil {
		t.Fatal(err)
	}
	want := [][]CommittedOffset{{{Partition: map[string]any{"server": "db"}, Offset: map[string]any{"lsn": int64(123), "snapshot": "INITIAL"}}}, {}}
	if !reflect.DeepEqual(task.committed, want) {
		t.Fatalf("CommitOffsets got %#v, want %#v", task.committed, want)
	}
	if task.s.commits != 0 {
		t.Fatalf("Commit called %d times besides CommitOffsets", task.s.commits)
	}
}
