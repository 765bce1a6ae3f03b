package file_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
	"github.com/wasmconnect/wasmconnect/wasmhost"
	"github.com/wasmconnect/wasmconnect/wasmhost/hosttest"
	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

// These tests run the file module (the Rust crate of this directory) in the worker's plugin host,
// through the WebAssembly boundary.

func TestMain(m *testing.M) {
	code := m.Run()
	pluginbuild.Cleanup()
	os.Exit(code)
}

// fixture is a plugin host with the file module that grants dir, and the log of its guests.
type fixture struct {
	t    *testing.T
	h    *wasmhost.Host
	dir  string
	logs *hosttest.Log
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	h, logs := hosttest.New(t, wasmhost.Config{PluginPath: []string{pluginbuild.DirOf(t, "plugins/file")}, FSAllow: []string{dir}})
	return &fixture{t: t, h: h, dir: dir, logs: logs}
}

type offsets map[string]string

func (o offsets) Offset(p []byte) ([]byte, bool) {
	v, ok := o[string(p)]
	return []byte(v), ok
}

// open opens plugin name in role with cfg in a new session whose stored offsets are offs.
func (f *fixture) open(name string, role wire.Role, cfg map[string]string, offs offsets) (*wasmhost.Object, error) {
	f.t.Helper()
	kind := wire.KindSource
	if strings.Contains(name, "Sink") {
		kind = wire.KindSink
	}
	p, err := f.h.Resolve(name, kind)
	if err != nil {
		f.t.Fatal(err)
	}
	ctx := context.Background()
	sess := f.h.NewSession(wasmhost.Env{Connector: "file", Offsets: offs})
	f.t.Cleanup(func() { sess.Close(ctx) })
	return sess.Open(ctx, p, role, cfg)
}

func (f *fixture) mustOpen(name string, cfg map[string]string, offs offsets) *wasmhost.Object {
	f.t.Helper()
	o, err := f.open(name, wire.RoleTask, cfg, offs)
	if err != nil {
		f.t.Fatal(err)
	}
	return o
}

// guestMessage is the plugin's own message of err.
func guestMessage(err error) string {
	var ge *wasmhost.GuestError
	if errors.As(err, &ge) {
		return ge.Message
	}
	if err == nil {
		return "<nil>"
	}
	return "not a guest error: " + err.Error()
}

// poll polls the source task and checks the records' shape: topic lines, STRING values, null keys,
// a timestamp, and the partition and offset on the last record only.
func poll(t *testing.T, task *wasmhost.Object, file string) (lines []string, lastPos string) {
	t.Helper()
	recs, err := task.Poll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UnixMilli()
	for i, r := range recs {
		if r.Topic != "lines" || r.Value.Tag != wire.TagString || r.Key.Tag != wire.TagNull || r.Partition != -1 || r.Timestamp < now-60_000 || r.Timestamp > now {
			t.Fatalf("record %d: %+v", i, r)
		}
		lines = append(lines, string(r.Value.Bytes))
		if i < len(recs)-1 && (len(r.SourceOffset) > 0 || len(r.SourcePartition) > 0) {
			t.Fatalf("offset on record %d of %d", i, len(recs))
		}
	}
	if len(recs) > 0 {
		last := recs[len(recs)-1]
		if want := fmt.Sprintf(`{"filename":%q}`, file); string(last.SourcePartition) != want {
			t.Fatalf("partition %s, want %s", last.SourcePartition, want)
		}
		lastPos = string(last.SourceOffset)
	}
	return lines, lastPos
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func TestSourcePartialLineAndNewlines(t *testing.T) {
	f := newFixture(t)
	path := filepath.Join(f.dir, "in.txt")
	appendFile(t, path, "a\nbb\r\nc\rdd")
	task := f.mustOpen("FileStreamSource", map[string]string{"file": path, "topic": "lines", "batch.size": "2000"}, nil)
	lines, pos := poll(t, task, path)
	if fmt.Sprint(lines) != "[a bb c]" || pos != `{"position":8}` {
		t.Fatalf("lines %q pos %s", lines, pos)
	}
	if lines, _ := poll(t, task, path); lines != nil {
		t.Fatalf("partial line returned: %q", lines)
	}
	appendFile(t, path, "d\r")
	if lines, _ := poll(t, task, path); lines != nil { // a \r at the end may be followed by \n: wait
		t.Fatalf("got %q before the line ended", lines)
	}
	appendFile(t, path, "\nlast\n")
	lines, pos = poll(t, task, path)
	if fmt.Sprint(lines) != "[ddd last]" || pos != `{"position":18}` {
		t.Fatalf("lines %q pos %s", lines, pos)
	}
	if lines, _ := poll(t, task, path); lines != nil {
		t.Fatalf("nothing new, got %q", lines)
	}
}

func TestSourceResumesFromStoredOffset(t *testing.T) {
	f := newFixture(t)
	path := filepath.Join(f.dir, "in.txt")
	appendFile(t, path, "one\ntwo\nthree\n")
	part := fmt.Sprintf(`{"filename":%q}`, path)
	cfg := map[string]string{"file": path, "topic": "lines"}
	task := f.mustOpen("FileStreamSource", cfg, offsets{part: `{"position":4}`})
	if lines, pos := poll(t, task, path); fmt.Sprint(lines) != "[two three]" || pos != `{"position":14}` {
		t.Fatalf("lines %q pos %s", lines, pos)
	}
	// A position written by a JSON library that knows only doubles is read as well.
	task = f.mustOpen("FileStreamSource", cfg, offsets{part: `{"position":8.0}`})
	if lines, pos := poll(t, task, path); fmt.Sprint(lines) != "[three]" || pos != `{"position":14}` {
		t.Fatalf("lines %q pos %s", lines, pos)
	}
	for _, bad := range []string{`{"position":"x"}`, `{"position":1.5}`, `{}`} {
		_, err := f.open("FileStreamSource", wire.RoleTask, cfg, offsets{part: bad})
		if msg := guestMessage(err); msg != "Offset position is the incorrect type" {
			t.Errorf("stored offset %s: %s", bad, msg)
		}
	}
	_, err := f.open("FileStreamSource", wire.RoleTask, cfg, offsets{part: `[1]`})
	if msg := guestMessage(err); !strings.HasPrefix(msg, "reading the stored offset of "+path+": stored offset for source partition "+part+" is not a JSON object") {
		t.Errorf("stored offset not an object: %s", msg)
	}
}

func TestSourceWaitsForMissingFile(t *testing.T) {
	f := newFixture(t)
	path := filepath.Join(f.dir, "later.txt")
	task := f.mustOpen("FileStreamSource", map[string]string{"file": path, "topic": "lines"}, nil)
	for range 3 {
		if lines, _ := poll(t, task, path); lines != nil {
			t.Fatalf("lines from a missing file: %q", lines)
		}
	}
	if n := strings.Count(f.logs.String(), "Couldn't find file "+path+" for FileStreamSourceTask, waiting for it to be created"); n != 1 {
		t.Errorf("missing file logged %d times:\n%s", n, f.logs)
	}
	appendFile(t, path, "hello\n")
	if lines, pos := poll(t, task, path); fmt.Sprint(lines) != "[hello]" || pos != `{"position":6}` {
		t.Fatalf("lines %q pos %s", lines, pos)
	}
}

func TestSourceLargeFileInBatches(t *testing.T) {
	f := newFixture(t)
	path := filepath.Join(f.dir, "big.txt")
	var b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&b, "line %d %s\n", i, strings.Repeat("x", i%50))
	}
	b.WriteString(strings.Repeat("y", 200000) + "\n") // a line longer than the read chunk
	appendFile(t, path, b.String())
	task := f.mustOpen("FileStreamSource", map[string]string{"file": path, "topic": "lines", "batch.size": "2000"}, nil)
	var all []string
	var sizes []int
	var pos string
	for {
		lines, p := poll(t, task, path)
		if lines == nil {
			break
		}
		sizes, all, pos = append(sizes, len(lines)), append(all, lines...), p
	}
	if fmt.Sprint(sizes) != "[2000 2000 1001]" || pos != fmt.Sprintf(`{"position":%d}`, b.Len()) {
		t.Fatalf("batches %v, last position %s of %d", sizes, pos, b.Len())
	}
	if strings.Join(all, "\n")+"\n" != b.String() {
		t.Fatal("lines differ from the file")
	}
}

func TestSourceConfigErrors(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, tc := range []struct {
		cfg  map[string]string
		want string
	}{
		{map[string]string{"topic": "t", "file": " "}, `FileStreamSource requires "file": reading the standard input is not supported in the wasm sandbox`},
		{map[string]string{"file": "/etc/passwd", "topic": "t"}, `plugin.fs.allow does not grant access to "/etc/passwd" (granted: ` + f.dir + `)`},
		{map[string]string{"file": filepath.Join(f.dir, "in"), "topic": "t", "batch.size": "x"}, `Invalid value x for configuration batch.size: Not a number of type INT`},
	} {
		_, err := f.open("FileStreamSource", wire.RoleTask, tc.cfg, nil)
		if msg := guestMessage(err); msg != tc.want {
			t.Errorf("OPEN task %v:\n got %s\nwant %s", tc.cfg, msg, tc.want)
		}
	}
	src, _ := f.h.Resolve("org.apache.kafka.connect.file.FileStreamSourceConnector", wire.KindSource)
	errs, err := f.h.Validate(ctx, src, map[string]string{"file": "", "topic": "a,b", "batch.size": "0"})
	if err != nil || len(errs) != 3 || errs["file"][0] != `FileStreamSource requires "file": reading the standard input is not supported in the wasm sandbox` ||
		errs["topic"][0] != "'topic' in FileStreamSourceConnector configuration requires definition of a single topic" ||
		errs["batch.size"][0] != "Invalid value 0 for configuration batch.size: Value must be at least 1" {
		t.Errorf("Validate: %v %v", errs, err)
	}
	errs, err = f.h.Validate(ctx, src, map[string]string{"batch.size": "many", "topic": " "})
	if err != nil || errs["file"][0] != `Missing required configuration "file" which has no default value.` ||
		errs["batch.size"][0] != "Invalid value many for configuration batch.size: Not a number of type INT" ||
		errs["topic"][0] != "Invalid value  for configuration topic: String must be non-empty" {
		t.Errorf("Validate: %v %v", errs, err)
	}
	_, err = f.open("FileStreamSource", wire.RoleConnector, map[string]string{"topic": "t"}, nil)
	if msg := guestMessage(err); msg != `FileStreamSource: invalid configuration: Missing required configuration "file" which has no default value.` {
		t.Errorf("OPEN connector without file: %s", msg)
	}
	conn, err := f.open("FileStreamSourceConnector", wire.RoleConnector, map[string]string{"file": "f", "topic": "t"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfgs, err := conn.TaskConfigs(ctx, 3)
	if err != nil || len(cfgs) != 1 || cfgs[0]["file"] != "f" || cfgs[0]["batch.size"] != "2000" {
		t.Errorf("TaskConfigs: %v %v", cfgs, err)
	}
	if err := conn.Close(ctx); err != nil {
		t.Error(err)
	}
}

// TestDescriptor checks the classes, aliases and config definitions the module declares.
func TestDescriptor(t *testing.T) {
	f := newFixture(t)
	src, err := f.h.Resolve("org.apache.kafka.connect.file.FileStreamSourceConnector", wire.KindSource)
	if err != nil || src.Name != "FileStreamSource" || src.Version != "1.0.0" {
		t.Fatalf("source: %+v %v", src, err)
	}
	var keys []string
	for _, k := range src.Config {
		def := "null"
		if k.DefaultValue != nil {
			def = *k.DefaultValue
		}
		keys = append(keys, fmt.Sprintf("%s:%s:%v:%s:%s", k.Name, k.Type, k.Required, def, k.Importance))
	}
	if got := strings.Join(keys, " "); got != "file:STRING:true:null:HIGH topic:STRING:true:null:HIGH batch.size:INT:false:2000:LOW" {
		t.Errorf("source config: %s", got)
	}
	for _, name := range []string{"FileStreamSink", "FileStreamSinkConnector", "org.apache.kafka.connect.file.FileStreamSinkConnector"} {
		if p, err := f.h.Resolve(name, wire.KindSink); err != nil || p.Class != "org.apache.kafka.connect.file.FileStreamSinkConnector" {
			t.Errorf("%s: %+v %v", name, p, err)
		}
	}
}

func TestSinkWritesTextOfEachValue(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	out := filepath.Join(f.dir, "out.txt")
	appendFile(t, out, "existing\n")
	sink := f.mustOpen("FileStreamSinkConnector", map[string]string{"file": out}, nil)
	if err := sink.Put(ctx, []wire.Record{
		{Topic: "t", Offset: 0, Value: wire.String("line")},
		{Topic: "t", Offset: 1, Value: wire.Bytes([]byte("raw"))},
		{Topic: "t", Offset: 2, Value: wire.JSON([]byte(`{"type":"string","optional":false}`), []byte(`"plain"`))},
		{Topic: "t", Offset: 3, Value: wire.JSON(nil, []byte(`{"a":1}`))},
		{Topic: "t", Offset: 4, Value: wire.Null()},
		{Topic: "t", Offset: 5, Value: wire.JSON(nil, []byte(`"esc\"aped\u00e9"`))},
	}); err != nil {
		t.Fatal(err)
	}
	if err := sink.Flush(ctx, []wire.TopicPartitionOffset{{Topic: "t", Partition: 0, Offset: 6}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(out); string(got) != "existing\nline\nraw\nplain\n{\"a\":1}\nnull\nesc\"apedé\n" {
		t.Errorf("sink file: %q", got)
	}
	err := sink.Put(ctx, []wire.Record{{Topic: "t", Partition: 2, Offset: 7, Value: wire.JSON(nil, []byte(`"bad\x"`))}})
	if msg := guestMessage(err); !strings.HasPrefix(msg, "record t-2@7: invalid JSON string payload: ") {
		t.Errorf("bad JSON string: %s", msg)
	}
	_, err = f.open("FileStreamSink", wire.RoleTask, map[string]string{"file": "/etc/x"}, nil)
	if msg := guestMessage(err); msg != `Couldn't find or create file '/etc/x' for FileStreamSinkTask: plugin.fs.allow does not grant access to "/etc/x" (granted: `+f.dir+`)` {
		t.Errorf("sink outside fs.allow: %s", msg)
	}
	_, err = f.open("FileStreamSink", wire.RoleTask, map[string]string{"file": ""}, nil)
	if msg := guestMessage(err); msg != `FileStreamSink requires "file": writing to the standard output is not supported in the wasm sandbox` {
		t.Errorf("no file: %s", msg)
	}
}

// Lines are in the file once Put returns, as with Kafka's FileStreamSink, not at the next flush.
func TestSinkWritesEachPut(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	out := filepath.Join(f.dir, "out.txt")
	sink := f.mustOpen("FileStreamSink", map[string]string{"file": out}, nil)
	if err := sink.Put(ctx, []wire.Record{{Value: wire.String("a")}}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != "a\n" {
		t.Errorf("after put: %q", b)
	}
	if err := sink.Flush(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := sink.Put(ctx, []wire.Record{{Value: wire.String("b")}}); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != "a\nb\n" {
		t.Errorf("after close: %q", b)
	}
}

// TestSinkWritesWholeLines puts more than the sink buffers in one put: whatever reached the file
// must be whole lines, so a crash at any point leaves no line cut in two.
func TestSinkWritesWholeLines(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	out := filepath.Join(f.dir, "out.txt")
	sink := f.mustOpen("FileStreamSink", map[string]string{"file": out}, nil)
	long := strings.Repeat("x", 999)
	var want strings.Builder
	for i := range 30 {
		var recs []wire.Record
		for j := range 10 {
			v := fmt.Sprintf("%s-%04d", long, i*10+j)
			recs = append(recs, wire.Record{Value: wire.String(v)})
			want.WriteString(v + "\n")
		}
		if err := sink.Put(ctx, recs); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != want.String() {
			t.Fatalf("after %d puts the file holds %d bytes, want %d", i+1, len(b), want.Len())
		}
	}
}

// TestSinkDropsPartialLastLineOnStart starts a sink on a file whose last line was cut short by a
// crash: the partial line is removed, so the record redelivered after the crash starts a line of
// its own instead of being appended to the stump.
func TestSinkDropsPartialLastLineOnStart(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for name, tc := range map[string]struct{ before, after string }{
		"partial last line":    {"line-1\nline-2\nline-", "line-1\nline-2\nline-3\n"},
		"only a partial line":  {"line-", "line-3\n"},
		"whole lines":          {"line-1\nline-2\n", "line-1\nline-2\nline-3\n"},
		"empty":                {"", "line-3\n"},
		"partial after 100 KB": {strings.Repeat("a", 100<<10) + "\n" + strings.Repeat("b", 70<<10), strings.Repeat("a", 100<<10) + "\nline-3\n"},
	} {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(f.dir, strings.ReplaceAll(name, " ", "-")+".txt")
			if err := os.WriteFile(out, []byte(tc.before), 0o644); err != nil {
				t.Fatal(err)
			}
			sink := f.mustOpen("FileStreamSink", map[string]string{"file": out}, nil)
			if err := sink.Put(ctx, []wire.Record{{Value: wire.String("line-3")}}); err != nil {
				t.Fatal(err)
			}
			if err := sink.Close(ctx); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(out); string(b) != tc.after {
				t.Errorf("file after restart and one put: %q, want %q", shorten(b), shorten([]byte(tc.after)))
			}
		})
	}
	if !strings.Contains(f.logs.String(), "removed a partial last line of 5 bytes from ") {
		t.Errorf("the removal is not logged:\n%s", f.logs)
	}
}

func shorten(b []byte) string {
	if len(b) > 40 {
		return fmt.Sprintf("%s...(%d bytes)...%s", b[:15], len(b)-30, b[len(b)-15:])
	}
	return string(b)
}

// TestSourceMemoryBoundedByBatch reads a file several times the size of the guest's memory limit:
// the task must hold one batch of it at a time, not everything read so far.
func TestSourceMemoryBoundedByBatch(t *testing.T) {
	dir := t.TempDir()
	const limit = 8 << 20
	h, _ := hosttest.New(t, wasmhost.Config{PluginPath: []string{pluginbuild.DirOf(t, "plugins/file")}, FSAllow: []string{dir}, MemoryLimitBytes: limit})
	f := &fixture{t: t, h: h, dir: dir}
	path := filepath.Join(dir, "big.txt")
	var b strings.Builder
	line := strings.Repeat("x", 90)
	for i := 0; b.Len() < 4*limit; i++ {
		fmt.Fprintf(&b, "%09d %s\n", i, line)
	}
	appendFile(t, path, b.String())
	task := f.mustOpen("FileStreamSource", map[string]string{"file": path, "topic": "lines", "batch.size": "2000"}, nil)
	var n int
	var pos string
	for {
		lines, p := poll(t, task, path)
		if lines == nil {
			break
		}
		n, pos = n+len(lines), p
	}
	if want := b.Len() / 101; n != want || pos != fmt.Sprintf(`{"position":%d}`, b.Len()) {
		t.Fatalf("read %d lines up to %s, want %d up to %d", n, pos, want, b.Len())
	}
}
