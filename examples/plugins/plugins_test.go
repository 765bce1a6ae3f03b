package plugins

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
	"github.com/wasmconnect/wasmconnect/wasmhost"
	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pluginbuild.Cleanup()
	os.Exit(code)
}

func host(t *testing.T, dir string) *wasmhost.Host {
	t.Helper()
	ctx := context.Background()
	h, err := wasmhost.New(ctx, wasmhost.Config{PluginPath: []string{dir}, CallTimeout: 5 * time.Second, MemoryLimitBytes: 16 << 20,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(ctx) })
	if errs := h.LoadErrors(); len(errs) > 0 {
		t.Fatal(errs)
	}
	mods, _ := filepath.Glob(filepath.Join(dir, "*.wasm"))
	for _, m := range mods {
		if fi, err := os.Stat(m); err == nil {
			t.Logf("%s: %d bytes", filepath.Base(m), fi.Size())
		}
	}
	return h
}

func open(t *testing.T, h *wasmhost.Host, class string, kind wire.Kind, role wire.Role, cfg map[string]string) *wasmhost.Object {
	t.Helper()
	p, err := h.Resolve(class, kind)
	if err != nil {
		t.Fatal(err)
	}
	s := h.NewSession(wasmhost.Env{Connector: "example"})
	t.Cleanup(func() { s.Close(context.Background()) })
	o, err := s.Open(context.Background(), p, role, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestCsvConverter(t *testing.T) {
	h := host(t, pluginbuild.DirOf(t, "examples/plugins/csv"))
	ctx := context.Background()
	c := open(t, h, "com.example.converters.CsvConverter", wire.KindConverter, wire.RoleConverter,
		map[string]string{"fields": "id, name,city", "converter.type": "value"})
	data, err := c.ToConnect(ctx, []wire.TopicBytes{{Topic: "people", Bytes: []byte("1,ada,london\n")}, {Topic: "people"}, {Topic: "people", Bytes: []byte("2,,")}})
	if err != nil {
		t.Fatal(err)
	}
	schema := `{"type":"struct","fields":[{"type":"string","optional":true,"field":"id"},{"type":"string","optional":true,"field":"name"},{"type":"string","optional":true,"field":"city"}],"optional":false,"name":"com.example.Csv"}`
	want := []wire.Data{wire.JSON([]byte(schema), []byte(`{"id":"1","name":"ada","city":"london"}`)), wire.Null(),
		wire.JSON([]byte(schema), []byte(`{"id":"2","name":"","city":""}`))}
	if !reflect.DeepEqual(data, want) {
		t.Errorf("TO_CONNECT:\n got %s\nwant %s", dump(data), dump(want))
	}
	bs, err := c.FromConnect(ctx, []wire.TopicData{{Topic: "people", Value: data[0]}, {Topic: "people", Value: wire.JSON(nil, []byte(`{"city":"paris","id":7}`))}})
	if err != nil {
		t.Fatal(err)
	}
	if string(bs[0]) != "1,ada,london" || string(bs[1]) != "7,,paris" {
		t.Errorf("FROM_CONNECT: %q", bs)
	}
	_, err = c.ToConnect(ctx, []wire.TopicBytes{{Topic: "people", Bytes: []byte("1,2,3,4")}})
	if err == nil || !strings.Contains(err.Error(), `the line "1,2,3,4" has more than 3 columns`) {
		t.Errorf("a line with too many columns: %v", err)
	}
	errs, err := h.Validate(ctx, c.Plugin(), map[string]string{"fields": "a", "separator": ";;"})
	if err != nil || len(errs["separator"]) != 1 {
		t.Errorf("a two-character separator: %v %v", errs, err)
	}
}

func dump(ds []wire.Data) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(string(d.Schema) + " " + string(d.Bytes) + "; ")
	}
	return b.String()
}

func TestMaskField(t *testing.T) {
	h := host(t, pluginbuild.DirOf(t, "examples/plugins/mask"))
	ctx := context.Background()
	m := open(t, h, "com.example.transforms.MaskField", wire.KindTransformation, wire.RoleTransformation, map[string]string{"fields": "ssn,card"})
	schema := `{"type":"struct","fields":[{"type":"string","optional":false,"field":"name"},{"type":"string","optional":true,"field":"ssn"}],"optional":false}`
	in := []wire.Record{
		{Topic: "t", Partition: 0, Offset: 1, Timestamp: -1, Value: wire.JSON([]byte(schema), []byte(`{"name":"ada","ssn":"123-45-6789"}`))},
		{Topic: "t", Partition: 0, Offset: 2, Timestamp: -1, Value: wire.JSON(nil, []byte(`{"card":"4111","n":1}`))},
		{Topic: "t", Partition: 0, Offset: 3, Timestamp: -1, Value: wire.Null()},
		{Topic: "t", Partition: 0, Offset: 4, Timestamp: -1, Value: wire.String("plain")},
	}
	out, failed, err := m.Transform(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 3 || string(out[0].Record.Value.Bytes) != `{"name":"ada","ssn":"****"}` || string(out[1].Record.Value.Bytes) != `{"card":"****","n":1}` || !out[2].Unchanged {
		t.Errorf("TRANSFORM: %+v", out)
	}
	if len(failed) != 1 || failed[0].Input != 3 || !strings.Contains(failed[0].Message, "not JSON") {
		t.Errorf("failures: %+v", failed)
	}
}

func TestHasKey(t *testing.T) {
	wat2wasm, err := exec.LookPath("wat2wasm")
	if err != nil {
		pluginbuild.Missing(t, "wat2wasm", "apt-get install wabt")
	}
	dir := t.TempDir()
	if out, err := exec.Command(wat2wasm, "haskey/haskey.wat", "-o", filepath.Join(dir, "haskey.wasm")).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm: %v\n%s", err, out)
	}
	h := host(t, dir)
	p := open(t, h, "com.example.predicates.HasKey", wire.KindPredicate, wire.RolePredicate, nil)
	big := make([]wire.Record, 3000)
	for i := range big {
		big[i] = wire.Record{Topic: "t", Partition: 0, Offset: int64(i), Timestamp: -1, Value: wire.String("v"),
			Headers: []wire.Header{{Key: "h", Value: wire.JSON([]byte(`{"type":"string","optional":false}`), []byte(`"x"`))}}}
		if i%3 == 0 {
			big[i].Key = wire.Bytes([]byte{byte(i)})
		}
	}
	for round := 0; round < 3; round++ { // the module's buffers are reused across calls
		matches, failed, err := p.Test(context.Background(), big)
		if err != nil || len(failed) != 0 {
			t.Fatalf("TEST: %v %v", failed, err)
		}
		for i, m := range matches {
			if m != (i%3 == 0) {
				t.Fatalf("record %d: match %v, want %v", i, m, i%3 == 0)
			}
		}
	}
}

// offsets are a session's stored source offsets: source partition JSON -> offset JSON.
type offsets map[string]string

func (o offsets) Offset(p []byte) ([]byte, bool) {
	v, ok := o[string(p)]
	return []byte(v), ok
}

const peopleSchema = `{"type":"struct","fields":[{"type":"int64","optional":true,"field":"id"},{"type":"string","optional":false,"field":"name"},{"type":"string","optional":true,"field":"city"}],"optional":false,"name":"com.example.Person"}`

func TestJsonLinesSource(t *testing.T) {
	files := t.TempDir()
	in := filepath.Join(files, "people.jsonl")
	lines := `{"id":1,"name":"ada","city":"london"}` + "\n\n" + `{"name":"bob","id":2}` + "\r\n" + `{"id":null,"name":"cy","city":"paris"}` + "\n" +
		`{"id":"four","name":"dee"}` + "\n" + `{"id":5,"name":"ed"`
	if err := os.WriteFile(in, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := wasmhost.New(context.Background(), wasmhost.Config{PluginPath: []string{pluginbuild.DirOf(t, "examples/plugins/jsonlines")}, FSAllow: []string{files},
		CallTimeout: 5 * time.Second, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	t.Cleanup(func() { h.Close(ctx) })
	p, err := h.Resolve("com.example.sources.JsonLinesSource", wire.KindSource)
	if err != nil {
		t.Fatal(err)
	}
	cfg := map[string]string{"file": in, "topic": "people", "value.schema": peopleSchema, "key.field": "id", "batch.size": "2"}
	start := func(offs offsets) *wasmhost.Object {
		s := h.NewSession(wasmhost.Env{Connector: "people", Offsets: offs})
		t.Cleanup(func() { s.Close(ctx) })
		o, err := s.Open(ctx, p, wire.RoleTask, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	task := start(nil)
	recs, err := task.Poll(ctx)
	if err != nil || len(recs) != 2 {
		t.Fatalf("first poll: %d records, %v", len(recs), err)
	}
	wantKey := wire.JSON([]byte(`{"type":"int64","optional":true}`), []byte("1"))
	if !reflect.DeepEqual(recs[0].Key, wantKey) || recs[0].Topic != "people" ||
		!reflect.DeepEqual(recs[1].Value, wire.JSON([]byte(peopleSchema), []byte(`{"id":2,"name":"bob","city":null}`))) {
		t.Errorf("records: key %s %s, value %s", recs[0].Key.Schema, recs[0].Key.Bytes, recs[1].Value.Bytes)
	}
	if len(recs[0].SourceOffset) != 0 || string(recs[1].SourcePartition) != `{"filename":"`+in+`"}` {
		t.Errorf("source partition and offset: %q %q / %q %q", recs[0].SourcePartition, recs[0].SourceOffset, recs[1].SourcePartition, recs[1].SourceOffset)
	}
	offs := offsets{string(recs[1].SourcePartition): string(recs[1].SourceOffset)}

	// The records before a line that does not fit its schema go out; the next poll fails the task,
	// naming the file, line and cause.
	recs, err = task.Poll(ctx)
	if err != nil || len(recs) != 1 || string(recs[0].Value.Bytes) != `{"id":null,"name":"cy","city":"paris"}` || recs[0].Key.Tag != wire.TagNull {
		t.Errorf("the poll that reaches the bad line (a null key field is a null key): %+v, %v", recs, err)
	}
	recs, err = task.Poll(ctx)
	if err == nil || !strings.Contains(err.Error(), in+" line 5 (byte 101): Invalid value for schema type INT64 at id") {
		t.Errorf("the poll of the bad line: %d records, %v", len(recs), err)
	}

	// A task started from the stored offset goes on after bob.
	recs, err = start(offs).Poll(ctx)
	if err != nil || len(recs) != 1 || string(recs[0].Value.Bytes) != `{"id":null,"name":"cy","city":"paris"}` {
		t.Fatalf("after a restart: %+v, %v", recs, err)
	}

	for key, bad := range map[string]map[string]string{
		"value.schema": {"value.schema": `{"type":"string"}`},
		"key.field":    {"value.schema": peopleSchema, "key.field": "ssn"},
	} {
		errs, err := h.Validate(ctx, p, map[string]string{"file": in, "topic": "t", "value.schema": bad["value.schema"], "key.field": bad["key.field"]})
		if err != nil || len(errs[key]) != 1 {
			t.Errorf("validate %v: %v %v", bad, errs, err)
		}
	}
}

func TestFieldEquals(t *testing.T) {
	h := host(t, pluginbuild.DirOf(t, "examples/plugins/fieldequals"))
	p := open(t, h, "com.example.predicates.FieldEquals", wire.KindPredicate, wire.RolePredicate, map[string]string{"field": "city", "value": "paris"})
	rec := func(d wire.Data) wire.Record { return wire.Record{Topic: "t", Partition: 0, Timestamp: -1, Value: d} }
	in := []wire.Record{
		rec(wire.JSON([]byte(peopleSchema), []byte(`{"id":3,"name":"cy","city":"paris"}`))),
		rec(wire.JSON([]byte(peopleSchema), []byte(`{"id":1,"name":"ada","city":"london"}`))),
		rec(wire.JSON(nil, []byte(`{"city":"paris"}`))),
		rec(wire.JSON(nil, []byte(`{"town":"paris"}`))),
		rec(wire.String("paris")),
		rec(wire.Null()),
		rec(wire.JSON(nil, []byte(`{"city":`))),
	}
	matches, failed, err := p.Test(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if want := []bool{true, false, true, false, false, false}; !reflect.DeepEqual(matches[:6], want) {
		t.Errorf("matches %v, want %v", matches, want)
	}
	if len(failed) != 1 || failed[0].Input != 6 || !strings.Contains(failed[0].Message, "not valid JSON") {
		t.Errorf("failures: %+v", failed)
	}
	if _, err := h.Validate(context.Background(), p.Plugin(), map[string]string{"field": "city"}); err != nil {
		t.Fatal(err)
	}
	if errs, _ := h.Validate(context.Background(), p.Plugin(), map[string]string{"field": "city"}); len(errs["value"]) != 1 {
		t.Errorf("a missing value: %v", errs)
	}
}
