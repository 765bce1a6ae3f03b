//go:build !wasip1

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

func startSource(t *testing.T, dir string, cfg sdk.Config) *sourceTask {
	t.Helper()
	task := &sourceTask{now: func() time.Time { return time.UnixMilli(1700000000000) }}
	if err := task.Start(sdk.NewTaskContext("file-source", 0, dir), cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { task.Stop() })
	return task
}

func poll(t *testing.T, task *sourceTask) (lines []string, lastPos int64) {
	t.Helper()
	recs, err := task.Poll()
	if err != nil {
		t.Fatal(err)
	}
	lastPos = -1
	for i, r := range recs {
		if r.Topic != "lines" || r.Value.Tag != sdk.TagString || !r.Key.IsNull() || r.Partition != nil {
			t.Fatalf("record %d: %+v", i, r)
		}
		if r.SourcePartition[filenameField] != task.filename {
			t.Fatalf("record %d partition %v", i, r.SourcePartition)
		}
		lines = append(lines, string(r.Value.Bytes))
		if r.SourceOffset != nil {
			if i != len(recs)-1 {
				t.Fatalf("offset on record %d of %d", i, len(recs))
			}
			lastPos = r.SourceOffset[positionField].(int64)
		}
	}
	if len(recs) > 0 && lastPos < 0 {
		t.Fatal("no offset on the last record")
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
	dir := t.TempDir()
	path := filepath.Join(dir, "in.txt")
	appendFile(t, path, "a\nbb\r\nc\rdd")
	task := startSource(t, dir, sdk.Config{"file": path, "topic": "lines", "batch.size": "2000"})
	lines, pos := poll(t, task)
	if fmt.Sprint(lines) != "[a bb c]" || pos != 8 {
		t.Fatalf("lines %q pos %d", lines, pos)
	}
	if lines, _ := poll(t, task); lines != nil {
		t.Fatalf("partial line returned: %q", lines)
	}
	appendFile(t, path, "d\r")
	if lines, _ := poll(t, task); lines != nil { // a \r at the end may be followed by \n: wait
		t.Fatalf("got %q before the line ended", lines)
	}
	appendFile(t, path, "\nlast\n")
	lines, pos = poll(t, task)
	if fmt.Sprint(lines) != "[ddd last]" || pos != 18 {
		t.Fatalf("lines %q pos %d", lines, pos)
	}
	if lines, _ := poll(t, task); lines != nil {
		t.Fatalf("nothing new, got %q", lines)
	}
}

func TestSourceResumesFromStoredOffset(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "in.txt")
	appendFile(t, path, "one\ntwo\nthree\n")
	sdk.SetStoredOffset(map[string]any{"filename": path}, map[string]any{"position": 4})
	defer sdk.ResetStoredOffsets()
	task := startSource(t, dir, sdk.Config{"file": path, "topic": "lines"})
	if lines, pos := poll(t, task); fmt.Sprint(lines) != "[two three]" || pos != 14 {
		t.Fatalf("lines %q pos %d", lines, pos)
	}
	sdk.SetStoredOffset(map[string]any{"filename": path}, map[string]any{"position": "x"})
	err := (&sourceTask{}).Start(sdk.NewTaskContext("c", 0, dir), sdk.Config{"file": path, "topic": "lines"})
	if err == nil || err.Error() != "Offset position is the incorrect type" {
		t.Errorf("bad offset: %v", err)
	}
}

func TestSourceWaitsForMissingFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "later.txt")
	var logs bytes.Buffer
	sdk.SetLogOutput(&logs)
	defer sdk.SetLogOutput(os.Stderr)
	task := startSource(t, dir, sdk.Config{"file": path, "topic": "lines"})
	for range 3 {
		if lines, _ := poll(t, task); lines != nil {
			t.Fatalf("lines from a missing file: %q", lines)
		}
	}
	if n := strings.Count(logs.String(), "Couldn't find file "+path); n != 1 {
		t.Errorf("missing file logged %d times:\n%s", n, logs.String())
	}
	appendFile(t, path, "hello\n")
	if lines, pos := poll(t, task); fmt.Sprint(lines) != "[hello]" || pos != 6 {
		t.Fatalf("lines %q pos %d", lines, pos)
	}
}

func TestSourceLargeFileInBatches(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "big.txt")
	var b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&b, "line %d %s\n", i, strings.Repeat("x", i%50))
	}
	b.WriteString(strings.Repeat("y", 200000) + "\n") // a line longer than the read chunk
	appendFile(t, path, b.String())
	task := startSource(t, dir, sdk.Config{"file": path, "topic": "lines", "batch.size": "2000"})
	var all []string
	var sizes []int
	var pos int64
	for {
		lines, p := poll(t, task)
		if lines == nil {
			break
		}
		sizes, all, pos = append(sizes, len(lines)), append(all, lines...), p
	}
	if fmt.Sprint(sizes) != "[2000 2000 1001]" || pos != int64(b.Len()) {
		t.Fatalf("batches %v, last position %d of %d", sizes, pos, b.Len())
	}
	if strings.Join(all, "\n")+"\n" != b.String() {
		t.Fatal("lines differ from the file")
	}
}

func TestSourceConfigErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		cfg  sdk.Config
		want string
	}{
		{sdk.Config{"topic": "t"}, noStdinError},
		{sdk.Config{"file": "/etc/passwd", "topic": "t"}, `plugin.fs.allow does not grant access to "/etc/passwd" (granted: ` + dir + `)`},
	} {
		err := (&sourceTask{}).Start(sdk.NewTaskContext("c", 0, dir), tc.cfg)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Start(%v) = %v, want %s", tc.cfg, err, tc.want)
		}
	}
	errs := fileSource{}.Validate(sdk.Config{"file": "", "topic": "a,b", "batch.size": "0"})
	if len(errs) != 3 || errs["file"][0] != noStdinError || !strings.Contains(errs["topic"][0], "single topic") {
		t.Errorf("Validate: %v", errs)
	}
	cfgs, _ := fileSource{}.TaskConfigs(sdk.Config{"file": "f", "topic": "t"}, 3)
	if len(cfgs) != 1 || cfgs[0]["file"] != "f" {
		t.Errorf("TaskConfigs: %v", cfgs)
	}
}

func invoke(t *testing.T, op wire.Op, h int32, in any) []byte {
	t.Helper()
	var b []byte
	switch x := in.(type) {
	case nil:
	case []byte:
		b = x
	default:
		b, _ = json.Marshal(x)
	}
	out, err := sdk.Invoke(op, h, b)
	if err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	return out
}

func openHandle(t *testing.T, req wire.OpenRequest) int32 {
	t.Helper()
	var r wire.OpenResponse
	if err := json.Unmarshal(invoke(t, wire.OpOpen, 0, req), &r); err != nil {
		t.Fatal(err)
	}
	return r.Handle
}

// TestThroughDispatcher drives the plugins through the SDK's ABI dispatch, as the host does.
func TestThroughDispatcher(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.txt"), filepath.Join(dir, "out.txt")
	appendFile(t, in, "x\ny\n")
	ctx := wire.OpenContext{Connector: "c", FSAllow: []string{dir}}

	var verrs wire.ValidateResponse
	_ = json.Unmarshal(invoke(t, wire.OpValidate, 0, wire.ValidateRequest{Plugin: "FileStreamSource", Config: map[string]string{"batch.size": "many"}}), &verrs)
	if verrs.Errors["file"][0] != `Missing required configuration "file" which has no default value.` ||
		verrs.Errors["topic"] == nil || verrs.Errors["batch.size"][0] != "Invalid value many for configuration batch.size: Not a number of type INT" {
		t.Errorf("validate: %v", verrs.Errors)
	}

	conn := openHandle(t, wire.OpenRequest{Plugin: "org.apache.kafka.connect.file.FileStreamSourceConnector", Role: wire.RoleConnector,
		Config: map[string]string{"file": in, "topic": "lines"}, Context: ctx})
	var tcs []map[string]string
	_ = json.Unmarshal(invoke(t, wire.OpTaskConfigs, conn, wire.TaskConfigsRequest{MaxTasks: 3}), &tcs)
	if len(tcs) != 1 || tcs[0]["batch.size"] != "2000" || tcs[0]["file"] != in {
		t.Fatalf("task configs: %v", tcs)
	}
	src := openHandle(t, wire.OpenRequest{Plugin: "FileStreamSource", Role: wire.RoleTask, Config: tcs[0], Context: ctx})
	recs, err := wire.DecodeRecords(invoke(t, wire.OpPoll, src, nil))
	if err != nil || len(recs) != 2 {
		t.Fatalf("poll: %v %v", recs, err)
	}
	if string(recs[0].SourceOffset) != "" || string(recs[1].SourcePartition) != `{"filename":"`+in+`"}` || string(recs[1].SourceOffset) != `{"position":4}` {
		t.Errorf("partition/offset: %q %q %q", recs[0].SourceOffset, recs[1].SourcePartition, recs[1].SourceOffset)
	}
	if recs[0].Topic != "lines" || recs[0].Partition != -1 || recs[0].Value.Tag != wire.TagString || string(recs[0].Value.Bytes) != "x" || recs[0].Key.Tag != wire.TagNull {
		t.Errorf("record: %+v", recs[0])
	}
	invoke(t, wire.OpCommit, src, nil)
	invoke(t, wire.OpClose, src, nil)

	appendFile(t, out, "existing\n")
	snk := openHandle(t, wire.OpenRequest{Plugin: "FileStreamSinkConnector", Role: wire.RoleTask, Config: map[string]string{"file": out}, Context: ctx})
	invoke(t, wire.OpPut, snk, wire.AppendRecords(nil, []wire.Record{
		{Topic: "t", Offset: 0, Value: wire.String("line")},
		{Topic: "t", Offset: 1, Value: wire.Bytes([]byte("raw"))},
		{Topic: "t", Offset: 2, Value: wire.JSON([]byte(`{"type":"string","optional":false}`), []byte(`"plain"`))},
		{Topic: "t", Offset: 3, Value: wire.JSON(nil, []byte(`{"a":1}`))},
		{Topic: "t", Offset: 4, Value: wire.Null()},
	}))
	invoke(t, wire.OpFlush, snk, []wire.TopicPartitionOffset{{Topic: "t", Partition: 0, Offset: 5}})
	got, _ := os.ReadFile(out)
	if string(got) != "existing\nline\nraw\nplain\n{\"a\":1}\nnull\n" {
		t.Errorf("sink file: %q", got)
	}
	invoke(t, wire.OpClose, snk, nil)

	_, err = sdk.Invoke(wire.OpOpen, 0, mustJSON(wire.OpenRequest{Plugin: "FileStreamSink", Role: wire.RoleTask, Config: map[string]string{"file": "/etc/x"}, Context: ctx}))
	if err == nil || err.Error() != `Couldn't find or create file '/etc/x' for FileStreamSinkTask: plugin.fs.allow does not grant access to "/etc/x" (granted: `+dir+`)` {
		t.Errorf("sink outside fs.allow: %v", err)
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// Lines are in the file once Put returns, as with Kafka's FileStreamSink, not at the next flush.
func TestSinkWritesEachPut(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.txt")
	task := &sinkTask{}
	if err := task.Start(sdk.NewTaskContext("c", 0, dir), sdk.Config{"file": out}); err != nil {
		t.Fatal(err)
	}
	if err := task.Put([]sdk.SinkRecord{{Value: sdk.String("a")}}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != "a\n" {
		t.Errorf("after put: %q", b)
	}
	if err := task.Flush(nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != "a\n" {
		t.Errorf("after flush: %q", b)
	}
	if err := task.Put([]sdk.SinkRecord{{Value: sdk.String("b")}}); err != nil {
		t.Fatal(err)
	}
	if err := task.Stop(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != "a\nb\n" {
		t.Errorf("after stop: %q", b)
	}
	if err := (&sinkTask{}).Start(sdk.NewTaskContext("c", 0, dir), sdk.Config{}); err == nil || err.Error() != noStdoutError {
		t.Errorf("no file: %v", err)
	}
}

// TestSinkWritesWholeLines puts more than the sink buffers without a flush: whatever reached the
// file must be whole lines, so a crash at any point leaves no line cut in two.
func TestSinkWritesWholeLines(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.txt")
	task := &sinkTask{}
	if err := task.Start(sdk.NewTaskContext("c", 0, dir), sdk.Config{"file": out}); err != nil {
		t.Fatal(err)
	}
	defer task.Stop()
	long := strings.Repeat("x", 999)
	for i := range 300 {
		if err := task.Put([]sdk.SinkRecord{{Value: sdk.String(fmt.Sprintf("%s-%04d", long, i))}}); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 0 && b[len(b)-1] != '\n' {
			t.Fatalf("after %d puts the file ends in a partial line (%d bytes): %q", i+1, len(b), b[bytes.LastIndexByte(b, '\n')+1:])
		}
	}
}

// TestSinkDropsPartialLastLineOnStart starts a sink on a file whose last line was cut short by a
// crash: the partial line is removed, so the record redelivered after the crash starts a line of
// its own instead of being appended to the stump.
func TestSinkDropsPartialLastLineOnStart(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct{ before, after string }{
		"partial last line":    {"line-1\nline-2\nline-", "line-1\nline-2\nline-3\n"},
		"only a partial line":  {"line-", "line-3\n"},
		"whole lines":          {"line-1\nline-2\n", "line-1\nline-2\nline-3\n"},
		"empty":                {"", "line-3\n"},
		"partial after 100 KB": {strings.Repeat("a", 100<<10) + "\n" + strings.Repeat("b", 70<<10), strings.Repeat("a", 100<<10) + "\nline-3\n"},
	} {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".txt")
			if err := os.WriteFile(out, []byte(tc.before), 0o644); err != nil {
				t.Fatal(err)
			}
			task := &sinkTask{}
			if err := task.Start(sdk.NewTaskContext("c", 0, dir), sdk.Config{"file": out}); err != nil {
				t.Fatal(err)
			}
			if err := task.Put([]sdk.SinkRecord{{Value: sdk.String("line-3")}}); err != nil {
				t.Fatal(err)
			}
			if err := task.Stop(); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(out); string(b) != tc.after {
				t.Errorf("file after restart and one put: %q, want %q", shorten(b), shorten([]byte(tc.after)))
			}
		})
	}
}

func shorten(b []byte) string {
	if len(b) > 40 {
		return fmt.Sprintf("%s...(%d bytes)...%s", b[:15], len(b)-30, b[len(b)-15:])
	}
	return string(b)
}
