//go:build e2e

package main

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"
)

// With log.format=json every line a worker writes is one JSON object with slog's time, level and
// msg, so that log shippers need no parsing rules; a bad value stops the worker at start.
func TestWorkerLogsJSON(t *testing.T) {
	_, addr := startBroker(t)
	w := startWorker(t, "worker", addr, map[string]string{"log.format": "json"})
	w.stop(syscall.SIGTERM)
	started := false
	for i, line := range strings.Split(strings.TrimSpace(w.logText()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %d is not JSON (%v): %s", i+1, err, line)
		}
		if rec["time"] == nil || rec["level"] == nil || rec["msg"] == nil {
			t.Fatalf("log line %d lacks time, level or msg: %s", i+1, line)
		}
		started = started || rec["msg"] == "worker started"
	}
	if !started {
		t.Fatal(`no "worker started" line in the JSON log`)
	}

	file, _ := writeWorkerProps(t, "bad", addr, map[string]string{"log.format": "yaml"})
	_, stderr, code := runCLI(t, "worker", "--config", file)
	if code == 0 || !strings.Contains(stderr, `invalid value "yaml" for log.format: want text or json`) {
		t.Fatalf("log.format=yaml: exit %d, stderr %s", code, stderr)
	}
}
