package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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
	fed := make(chan struct{})
	go func() {
		defer close(fed)
		for i := 0; i < total; i += 1000 {
			writeLines(t, in, "k-", i, i+1000)
			time.Sleep(100 * time.Millisecond)
		}
	}()
	waitFor(t, 2*time.Minute, "some lines through the pipeline", func() bool { return countLines(out) > 5000 })
	// Kill once both sides have committed at least once, so that the duplicates measure what was
	// in flight since a commit, not a kill before the first one.
	waitFor(t, time.Minute, "a committed source offset and sink position", func() bool {
		return committed(t, w, "kill-source", "position") && committed(t, w, "kill-sink", "kafka_offset")
	})
	w.stop(syscall.SIGKILL)
	written := countLines(out)

	w.start()
	w.waitReady(t)
	<-fed
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
	t.Logf("killed after %d lines reached the sink; %d lines in total, %d duplicates", written, len(got), dups)
	// At-least-once: duplicates are bounded by what was in flight since the last offset commit
	// (offset.flush.interval.ms=1000 here), never a replay of the whole file.
	if dups > total/2 {
		t.Fatalf("%d duplicates: the source did not resume from its committed offset", dups)
	}
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
	if s, _ := w.status(t, "healthy-source"); s.Tasks[0].State != "RUNNING" {
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
