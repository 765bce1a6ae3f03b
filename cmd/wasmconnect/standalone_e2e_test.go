//go:build e2e

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func writeProps(t *testing.T, path string, props map[string]string) {
	t.Helper()
	var b strings.Builder
	for k, v := range props {
		fmt.Fprintf(&b, "%s=%s\n", k, v)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestStandalone runs connect-standalone style: no group, no internal topics, the connectors from
// .properties files, source offsets in a local file that survive a restart.
func TestStandalone(t *testing.T) {
	_, addr := startBroker(t)
	dir := t.TempDir()
	port := freePort(t)
	in, out := filepath.Join(dir, "in.txt"), filepath.Join(dir, "out.txt")
	writeProps(t, filepath.Join(dir, "worker.properties"), map[string]string{
		"bootstrap.servers":            addr,
		"key.converter":                "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":              "org.apache.kafka.connect.storage.StringConverter",
		"offset.storage.file.filename": filepath.Join(dir, "offsets"),
		"offset.flush.interval.ms":     "500",
		"listeners":                    fmt.Sprintf("http://127.0.0.1:%d", port),
		"plugin.path":                  pluginDir,
		"plugin.cache.dir":             cacheDir,
		"plugin.fs.allow":              dir,
		// A Kafka worker file's keys that do nothing here: the worker starts, and names them.
		"access.control.allow.origin": "*",
		"worker.unsync.backoff.ms":    "300000",
	})
	writeProps(t, filepath.Join(dir, "source.properties"), map[string]string{
		"name": "local-file-source", "connector.class": "FileStreamSource", "tasks.max": "1", "file": in, "topic": "standalone-test",
	})
	writeProps(t, filepath.Join(dir, "sink.properties"), map[string]string{
		"name": "local-file-sink", "connector.class": "FileStreamSink", "tasks.max": "1", "file": out, "topics": "standalone-test",
	})
	writeLines(t, in, "s-", 0, 1000)
	w := &worker{process: startProcess(t, "standalone", "standalone",
		filepath.Join(dir, "worker.properties"), filepath.Join(dir, "source.properties"), filepath.Join(dir, "sink.properties")),
		url: fmt.Sprintf("http://127.0.0.1:%d", port)}
	w.waitReady(t)
	for _, key := range []string{"access.control.allow.origin", "worker.unsync.backoff.ms"} {
		want := fmt.Sprintf(`level=WARN msg="%s is accepted for compatibility but has no effect: `, key)
		if log := w.logText(); !strings.Contains(log, want) {
			t.Errorf("the worker's log lacks a warning naming %s (%s...); log:\n%s", key, want, log)
		}
	}
	waitFor(t, time.Minute, "1000 lines through the standalone worker", func() bool { return countLines(out) >= 1000 })
	if s := w.waitTaskState(t, "local-file-source", "RUNNING", 10*time.Second); s.Connector.State != "RUNNING" {
		t.Fatalf("status %+v", s)
	}
	waitFor(t, 30*time.Second, "the offsets file", func() bool {
		b, err := os.ReadFile(filepath.Join(dir, "offsets"))
		return err == nil && len(b) > 0
	})

	w.stop(syscall.SIGTERM)
	writeLines(t, in, "s-", 1000, 2000)
	w.start()
	w.waitReady(t)
	waitFor(t, time.Minute, "2000 lines after the restart", func() bool { return countLines(out) >= 2000 })
	time.Sleep(time.Second)
	if n := countLines(out); n != 2000 {
		t.Fatalf("%d lines in the sink file after a graceful restart, want exactly 2000 (the source resumes from its offset file)", n)
	}
}
