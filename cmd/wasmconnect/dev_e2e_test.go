//go:build e2e

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDevRunsTheReadmeQuickStart runs `wasmconnect dev` the way `make run` does, with the shipped
// examples/dev.properties and examples/connectors (only the ports and the plugin directory moved so
// that tests can run side by side), then follows the README's quick start: the pipeline it creates
// with curl must copy the file through Kafka, the example HCL connectors must be reconciled (the
// data generator writes orders), and a stop with Ctrl-C and a new start must resume where the
// connectors stopped.
func TestDevRunsTheReadmeQuickStart(t *testing.T) {
	root := t.TempDir()
	port, brokerAddr := freePort(t), fmt.Sprintf("127.0.0.1:%d", freePort(t))
	devProperties(t, root, port)
	p := startProcessIn(t, root, "dev", "dev", "--config", "examples/dev.properties", "--broker", brokerAddr)
	w := &worker{process: p, url: fmt.Sprintf("http://127.0.0.1:%d", port)}
	w.waitReady(t)

	files := filepath.Join(root, "data", "files")
	in, out := filepath.Join(files, "in.txt"), filepath.Join(files, "out.txt")
	writeLines(t, in, "line ", 1, 1001) // seq 1 1000 | sed 's/^/line /' > data/files/in.txt
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "file-source", "config": map[string]string{
		"connector.class": "FileStreamSource", "tasks.max": "1", "file": in, "topic": "lines"}})
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "file-sink", "config": map[string]string{
		"connector.class": "FileStreamSink", "tasks.max": "1", "file": out, "topics": "lines"}})

	s := w.waitTaskState(t, "file-source", "RUNNING", 30*time.Second)
	if s.Type != "source" || s.Connector.State != "RUNNING" || s.Connector.WorkerID != fmt.Sprintf("127.0.0.1:%d", port) {
		t.Fatalf("file-source status %+v, want the README's", s)
	}
	waitFor(t, time.Minute, "1000 lines in data/files/out.txt", func() bool { return countLines(out) >= 1000 })
	assertLines(t, out, "line ", 1, 1001)

	// kcat -C -b 127.0.0.1:9092 -t lines -e -q | head -3
	raw, err := exec.Command("kcat", "-C", "-b", brokerAddr, "-t", "lines", "-e", "-q").Output()
	if err != nil {
		t.Fatalf("kcat -C -t lines: %v", err)
	}
	records := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	if want := `{"schema":{"type":"string","optional":false},"payload":"line 1"}`; len(records) != 1000 || records[0] != want {
		t.Fatalf("kcat read %d records, the first %q; want 1000, the first %s", len(records), records[0], want)
	}

	// The example connectors of examples/connectors/*.hcl: a source, a sink and a paused archive.
	orders := filepath.Join(files, "orders.txt")
	writeLines(t, orders, "order-", 1, 101)
	waitFor(t, time.Minute, "the example orders in orders-out.txt", func() bool {
		return countLines(filepath.Join(files, "orders-out.txt")) >= 100
	})
	assertLines(t, filepath.Join(files, "orders-out.txt"), "order-", 1, 101)
	if s, ok := w.status(t, "example-orders-archive"); !ok || s.Connector.State != "PAUSED" {
		t.Fatalf("example-orders-archive status %+v (read: %v), want PAUSED as its file declares", s, ok)
	}

	// The example data generator: orders with their schema in topic datagen-orders.
	generated := consumeN(t, brokerAddr, "datagen-orders", 2, time.Minute)
	if len(generated) < 2 {
		t.Fatalf("%d records in datagen-orders after a minute, want 2", len(generated))
	}
	for i, r := range generated {
		if !strings.HasPrefix(string(r.Value), `{"schema":{"type":"struct","fields":[{"type":"int64","optional":false,"field":"ordertime"}`) ||
			!strings.Contains(string(r.Value), `"name":"ksql.orders"},"payload":{"ordertime":`) {
			t.Fatalf("datagen-orders record %d: %s", i, r.Value)
		}
	}

	// Ctrl-C, start again, append: the new lines follow, none twice.
	p.stop(syscall.SIGINT)
	if log := p.logText(); strings.Contains(log, "panic") {
		t.Fatalf("dev panicked on SIGINT:\n%s", log)
	}
	p.start()
	w.waitReady(t)
	writeLines(t, in, "line ", 1001, 1101)
	waitFor(t, time.Minute, "the appended lines in out.txt after a restart", func() bool { return countLines(out) >= 1100 })
	time.Sleep(2 * time.Second) // a replay would arrive within the offset flush interval's batch
	assertLines(t, out, "line ", 1, 1101)
}

// devProperties lays out in root what `make run` finds in the repository: examples/dev.properties
// with the REST port moved, examples/connectors, and the built plugins in build/plugins.
func devProperties(t *testing.T, root string, port int) {
	t.Helper()
	b, err := os.ReadFile("../../examples/dev.properties")
	if err != nil {
		t.Fatal(err)
	}
	props := string(b)
	for _, line := range []string{"listeners=http://127.0.0.1:8083\n", "plugin.path=build/plugins\n", "plugin.fs.allow=data/files\n", "connectors.dir=examples/connectors\n"} {
		if !strings.Contains(props, line) {
			t.Fatalf("examples/dev.properties no longer has %q: update this test with the README", line)
		}
	}
	props = strings.Replace(props, "listeners=http://127.0.0.1:8083\n", fmt.Sprintf("listeners=http://127.0.0.1:%d\n", port), 1)
	props += "plugin.cache.dir=" + cacheDir + "\n"
	for _, dir := range []string{"examples/connectors", "build"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "examples", "dev.properties"), []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	hcl, err := filepath.Glob("../../examples/connectors/*.hcl")
	if err != nil || len(hcl) == 0 {
		t.Fatalf("examples/connectors/*.hcl: %v (%d files)", err, len(hcl))
	}
	for _, f := range hcl {
		b, err := os.ReadFile(f)
		if err == nil {
			err = os.WriteFile(filepath.Join(root, "examples", "connectors", filepath.Base(f)), b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(pluginDir, filepath.Join(root, "build", "plugins")); err != nil {
		t.Fatal(err)
	}
}

// assertLines checks that path holds exactly the lines "<prefix><n>" for n in [from, to), in order.
func assertLines(t *testing.T, path, prefix string, from, to int) {
	t.Helper()
	got := readLines(t, path)
	if len(got) != to-from {
		t.Fatalf("%s has %d lines, want %d", filepath.Base(path), len(got), to-from)
	}
	for i, l := range got {
		if want := fmt.Sprintf("%s%d", prefix, from+i); l != want {
			t.Fatalf("%s line %d is %q, want %q", filepath.Base(path), i+1, l, want)
		}
	}
}

func TestVersion(t *testing.T) {
	out, err := exec.Command(binary, "version").Output()
	if err != nil {
		t.Fatalf("wasmconnect version: %v", err)
	}
	if !regexp.MustCompile(`^wasmconnect \S+ \(Kafka Connect \d+\.\d+\.\d+ REST API, plugin ABI v\d+\)\n$`).Match(out) {
		t.Fatalf("wasmconnect version printed %q", out)
	}
}
