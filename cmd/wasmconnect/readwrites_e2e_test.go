//go:build e2e

package main

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// A script that creates a connector and at once asks for its status and restarts its task, as
// scripts written against Kafka Connect do, succeeds on the leader and through a follower: the
// create answers once the connector has started, and a follower answers a forwarded write once it
// has read what the leader wrote.
func TestCreateThenAtOnceStatusAndTaskRestart(t *testing.T) {
	_, addr := startBroker(t)
	files := t.TempDir()
	props := map[string]string{"plugin.fs.allow": files}
	ws := []*worker{startWorker(t, "worker1", addr, props), startWorker(t, "worker2", addr, props)}
	leader := findLeader(t, ws)
	follower := ws[0]
	if follower == leader {
		follower = ws[1]
	}
	const perWorker = 20
	var failures, requests int
	var slowest time.Duration
	for i := range 2 * perWorker {
		w, role := leader, "leader"
		if i%2 == 1 {
			w, role = follower, "follower"
		}
		name := fmt.Sprintf("rw-%d", i)
		in := filepath.Join(files, name+".txt")
		writeLines(t, in, name+"-", 0, 10)
		start := time.Now()
		w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": name, "config": map[string]string{
			"connector.class": "FileStreamSource", "file": in, "topic": name,
		}})
		slowest = max(slowest, time.Since(start))
		requests += 2
		if code, b := w.call(t, "GET", "/connectors/"+name+"/status", nil); code != 200 {
			failures++
			t.Logf("%s on the %s: status right after the create: %d %s", name, role, code, b)
		}
		if code, b := w.call(t, "POST", "/connectors/"+name+"/tasks/0/restart", nil); code != 204 {
			failures++
			t.Logf("%s on the %s: task restart right after the create: %d %s", name, role, code, b)
		}
	}
	t.Logf("%d of %d follow-up requests failed; slowest create %v", failures, requests, slowest.Round(time.Millisecond))
	if failures > 0 {
		t.Fatalf("%d of %d requests right after a create failed", failures, requests)
	}
	// And the tasks do run: the restarts did not lose them.
	for i := range 2 * perWorker {
		leader.waitTaskState(t, fmt.Sprintf("rw-%d", i), "RUNNING", time.Minute)
	}
}
