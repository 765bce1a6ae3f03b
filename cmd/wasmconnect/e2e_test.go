//go:build e2e

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// pipeline creates a file source (the seed request of Kafka's quick start, unchanged) and a file
// sink on one topic and returns the input and output paths.
func pipeline(t *testing.T, w *worker, dir, name, topic string) (in, out string) {
	t.Helper()
	in, out = filepath.Join(dir, name+"-in.txt"), filepath.Join(dir, name+"-out.txt")
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{
		"name": name + "-source",
		"config": map[string]string{
			"connector.class": "FileStreamSource", "tasks.max": "3", "file": in, "topic": topic,
		},
	})
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{
		"name": name + "-sink",
		"config": map[string]string{
			"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector", "tasks.max": "1",
			"file": out, "topics": topic,
		},
	})
	return in, out
}

func TestFilePipelineEndToEnd(t *testing.T) {
	_, addr := startBroker(t)
	files := t.TempDir()
	w := startWorker(t, "worker", addr, map[string]string{"plugin.fs.allow": files})

	const n = 100_000
	in := filepath.Join(files, "file-source-distributed-in.txt")
	writeLines(t, in, "line-", 0, n)
	out := filepath.Join(files, "out.txt")
	b := w.mustCall(t, 201, "POST", "/connectors", json.RawMessage(fmt.Sprintf(
		`{"name":"file-source-distributed","config":{"connector.class":"FileStreamSource","tasks.max":"3","file":%q,"topic":"connect-test-distributed"}}`, in)))
	var info struct {
		Name   string            `json:"name"`
		Config map[string]string `json:"config"`
		Tasks  []any             `json:"tasks"`
		Type   string            `json:"type"`
	}
	if err := json.Unmarshal(b, &info); err != nil || info.Name != "file-source-distributed" || info.Type != "source" || info.Config["name"] != "file-source-distributed" {
		t.Fatalf("create response %s (%v)", b, err)
	}
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "file-sink", "config": map[string]string{
		"connector.class": "FileStreamSink", "file": out, "topics": "connect-test-distributed",
	}})

	waitFor(t, 3*time.Minute, "all lines in the sink file", func() bool { return countLines(out) >= n })
	got := readLines(t, out)
	if len(got) != n {
		t.Fatalf("sink file has %d lines, want %d", len(got), n)
	}
	for i, l := range got {
		if l != fmt.Sprintf("line-%d", i) {
			t.Fatalf("line %d is %q, want %q", i, l, fmt.Sprintf("line-%d", i))
		}
	}

	// The status has Kafka Connect's shape; FileStreamSource makes one task whatever tasks.max says.
	s := w.waitTaskState(t, "file-source-distributed", "RUNNING", 10*time.Second)
	if s.Name != "file-source-distributed" || s.Type != "source" || s.Connector.State != "RUNNING" ||
		s.Connector.WorkerID == "" || len(s.Tasks) != 1 || s.Tasks[0].WorkerID != s.Connector.WorkerID {
		t.Fatalf("status %+v", s)
	}

	// A client we did not write reads the same records.
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Fatalf("kcat is needed for the interoperability check (apt-get install kcat): %v", err)
	}
	cmd := exec.Command(kcat, "-C", "-b", addr, "-t", "connect-test-distributed", "-e", "-q", "-f", "%s\n")
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("kcat: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	if len(lines) != n {
		t.Fatalf("kcat read %d records, want %d", len(lines), n)
	}
	for _, i := range []int{0, n / 2, n - 1} {
		want := fmt.Sprintf(`{"schema":{"type":"string","optional":false},"payload":"line-%d"}`, i)
		if lines[i] != want {
			t.Fatalf("kcat record %d = %s, want %s", i, lines[i], want)
		}
	}
}

func TestWorkerKilledMidStreamResumesFromOffsets(t *testing.T) {
	_, addr := startBroker(t)
	files := t.TempDir()
	props := map[string]string{"plugin.fs.allow": files}
	w := startWorker(t, "worker", addr, props)
	in, out := pipeline(t, w, files, "kill", "kill-topic")

	const total = 60_000
	// The file grows while the worker is killed and restarted: 1000 lines every 100 ms.
	fed := make(chan error, 1)
	go func() {
		for i := 0; i < total; i += 1000 {
			if err := appendLines(in, "k-", i, i+1000); err != nil {
				fed <- err
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		fed <- nil
	}()
	waitFor(t, 2*time.Minute, "some lines through the pipeline", func() bool { return countLines(out) > 5000 })
	// Kill once both sides have committed at least once, so that the duplicates measure what was
	// in flight since a commit, not a kill before the first one.
	waitFor(t, time.Minute, "a committed source offset and sink position", func() bool {
		return committed(t, w, "kill-source", "position") && committed(t, w, "kill-sink", "kafka_offset")
	})
	w.stop(syscall.SIGKILL)

	// With the worker dead, what it committed and what it wrote are fixed: read them from Kafka.
	cp := readCommitted(t, addr, "kill-source", "kill-topic", "connect-kill-sink")
	fromLine := linesBefore(t, in, cp.sourcePosition)
	inSink := countLines(out)
	// After the restart the source re-sends lines [fromLine, topicEnd) and the sink re-writes
	// records [sinkCommitted, inSink): nothing else may come twice.
	bound := (cp.topicEnd - fromLine) + (inSink - cp.sinkCommitted)
	t.Logf("at the kill: source committed line %d of %d in the topic, sink committed record %d of %d in its file; at most %d duplicates",
		fromLine, cp.topicEnd, cp.sinkCommitted, inSink, bound)
	if fromLine == 0 || cp.sinkCommitted == 0 {
		t.Fatalf("nothing committed before the kill: %+v", cp)
	}

	w.start()
	w.waitReady(t)
	if err := <-fed; err != nil {
		t.Fatalf("feeding the source file: %v", err)
	}
	waitFor(t, 3*time.Minute, "every line after the restart", func() bool { return countLines(out) >= total })
	time.Sleep(2 * time.Second) // let anything still in flight land, to count duplicates honestly

	got := readLines(t, out)
	seen := make(map[string]int, total)
	for _, l := range got {
		seen[l]++
	}
	for i := 0; i < total; i++ {
		if seen[fmt.Sprintf("k-%d", i)] == 0 {
			t.Fatalf("line k-%d was lost (sink file has %d lines)", i, len(got))
		}
	}
	dups := len(got) - total
	t.Logf("%d lines in total, %d duplicates", len(got), dups)
	// At-least-once: the restarted tasks resume from their committed offsets, so the duplicates
	// are what was in flight after the last commits, never a replay from an earlier point.
	if dups > bound {
		t.Fatalf("%d duplicates, more than the %d written after the last commits: a task did not resume from its committed offset", dups, bound)
	}
}

// committedPositions is what a dead worker left in Kafka for a file source and a file sink.
type committedPositions struct {
	sourcePosition int64 // the source's committed byte position in its file
	topicEnd       int   // records in the topic between them
	sinkCommitted  int   // the sink's committed offset in the topic
}

// readCommitted reads the source's last offset from the offsets topic, the topic's end offset and
// the sink's consumer group offset (one partition each) with a Kafka client of its own.
func readCommitted(t *testing.T, addr, source, topic, sinkGroup string) committedPositions {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics("connect-offsets"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(ctx, "connect-offsets", topic)
	if err != nil || ends.Error() != nil {
		t.Fatalf("end offsets: %v %v", err, ends.Error())
	}
	var cp committedPositions
	if o, ok := ends.Lookup(topic, 0); ok {
		cp.topicEnd = int(o.Offset)
	}
	// Read every partition of the offsets topic up to its end; the last offset for the source wins.
	starts, err := adm.ListStartOffsets(ctx, "connect-offsets")
	if err != nil || starts.Error() != nil {
		t.Fatalf("start offsets: %v %v", err, starts.Error())
	}
	last := map[int32]int64{} // partition -> offset of its last record, for those not read yet
	ends.Each(func(o kadm.ListedOffset) {
		if s, _ := starts.Lookup(o.Topic, o.Partition); o.Topic == "connect-offsets" && o.Offset > s.Offset {
			last[o.Partition] = o.Offset - 1
		}
	})
	for len(last) > 0 {
		fs := cl.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			t.Fatalf("reading connect-offsets: %v", err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if end, ok := last[r.Partition]; ok && r.Offset >= end {
				delete(last, r.Partition)
			}
			var key []json.RawMessage
			if json.Unmarshal(r.Key, &key) != nil || len(key) != 2 || string(key[0]) != strconv.Quote(source) {
				return
			}
			var off struct {
				Position int64 `json:"position"`
			}
			if r.Value != nil && json.Unmarshal(r.Value, &off) == nil {
				cp.sourcePosition = off.Position
			}
		})
	}
	groups, err := adm.FetchOffsets(ctx, sinkGroup)
	if err != nil || groups.Error() != nil {
		t.Fatalf("offsets of group %s: %v %v", sinkGroup, err, groups.Error())
	}
	if o, ok := groups.Lookup(topic, 0); ok {
		cp.sinkCommitted = int(o.At)
	}
	return cp
}

// linesBefore counts the lines of a file that end before byte position pos.
func linesBefore(t *testing.T, path string, pos int64) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if pos > int64(len(b)) {
		t.Fatalf("committed position %d is past the end of %s (%d bytes)", pos, path, len(b))
	}
	return bytes.Count(b[:pos], []byte{'\n'})
}

func TestMisbehavingPluginsFailOnlyTheirTask(t *testing.T) {
	_, addr := startBroker(t)
	files := t.TempDir()
	w := startWorker(t, "worker", addr, map[string]string{
		"plugin.fs.allow":         files,
		"plugin.path":             pluginDir + "," + testPlugin,
		"plugin.call.timeout.ms":  "2000",
		"plugin.memory.max.bytes": fmt.Sprint(64 << 20),
	})
	in, out := pipeline(t, w, files, "healthy", "healthy-topic")
	writeLines(t, in, "h-", 0, 1000)
	waitFor(t, time.Minute, "healthy pipeline", func() bool { return countLines(out) >= 1000 })

	faults := map[string]string{
		"trap": "unreachable",
		"loop": "timeout",
		"oom":  "memory",
	}
	for fault := range faults {
		w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "faulty-" + fault, "config": map[string]string{
			"connector.class": "wasmconnect.testing.FaultySource", "fault": fault, "topic": "faulty", "after.polls": "2",
		}})
	}
	for fault, want := range faults {
		s := w.waitTaskState(t, "faulty-"+fault, "FAILED", time.Minute)
		if trace := strings.ToLower(s.Tasks[0].Trace); !strings.Contains(trace, want) {
			t.Errorf("faulty-%s trace does not mention %q:\n%s", fault, want, s.Tasks[0].Trace)
		}
	}
	// The healthy connector kept running and still moves data.
	writeLines(t, in, "h-", 1000, 2000)
	waitFor(t, time.Minute, "healthy pipeline after the faults", func() bool { return countLines(out) >= 2000 })
	if s := w.mustStatus(t, "healthy-source"); s.Tasks[0].State != "RUNNING" {
		t.Fatalf("healthy source is %s", s.Tasks[0].State)
	}
}

func TestFileOutsideGrantedDirectoriesIsAClearError(t *testing.T) {
	_, addr := startBroker(t)
	granted, other := t.TempDir(), t.TempDir()
	secret := filepath.Join(other, "secret.txt")
	if err := os.WriteFile(secret, []byte("do not read\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := startWorker(t, "worker", addr, map[string]string{"plugin.fs.allow": granted})
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "escape", "config": map[string]string{
		"connector.class": "FileStreamSource", "file": secret, "topic": "escape",
	}})
	s := w.waitTaskState(t, "escape", "FAILED", time.Minute)
	if !strings.Contains(s.Tasks[0].Trace, "plugin.fs.allow") || !strings.Contains(s.Tasks[0].Trace, secret) {
		t.Fatalf("trace does not explain the denied path:\n%s", s.Tasks[0].Trace)
	}
}

// committed reports whether GET /connectors/{name}/offsets shows an offset with a positive key.
func committed(t *testing.T, w *worker, name, key string) bool {
	code, b := w.call(t, "GET", "/connectors/"+name+"/offsets", nil)
	if code != 200 {
		return false
	}
	var offs struct {
		Offsets []struct {
			Offset map[string]float64 `json:"offset"`
		} `json:"offsets"`
	}
	if json.Unmarshal(b, &offs) != nil {
		return false
	}
	for _, o := range offs.Offsets {
		if o.Offset[key] > 0 {
			return true
		}
	}
	return false
}
