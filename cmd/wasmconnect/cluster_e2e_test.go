//go:build e2e

package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// clusterStatus is every connector's status as one worker reports it.
func (w *worker) allStatuses(t testing.TB) (map[string]status, bool) {
	t.Helper()
	code, b := w.call(t, "GET", "/connectors?expand=status", nil)
	if code != 200 {
		return nil, false
	}
	var raw map[string]struct {
		Status status `json:"status"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, false
	}
	out := make(map[string]status, len(raw))
	for k, v := range raw {
		out[k] = v.Status
	}
	return out, true
}

// taskSpread counts RUNNING tasks per worker id; ok is false unless every task of every connector
// is RUNNING and none names a worker in dead.
func taskSpread(st map[string]status, wantTasks int, dead ...string) (spread map[string]int, ok bool) {
	spread = map[string]int{}
	n := 0
	for _, s := range st {
		for _, tk := range s.Tasks {
			if tk.State != "RUNNING" {
				return spread, false
			}
			for _, d := range dead {
				if tk.WorkerID == d {
					return spread, false
				}
			}
			spread[tk.WorkerID]++
			n++
		}
	}
	return spread, n == wantTasks
}

func imbalance(spread map[string]int, workers int) int {
	if len(spread) < workers {
		return 1 << 30
	}
	lo, hi := 1<<30, 0
	for _, n := range spread {
		lo, hi = min(lo, n), max(hi, n)
	}
	return hi - lo
}

// waitSpread waits until every task runs, none on a dead worker, spread over live workers with at
// most one task of difference, and returns how long it took.
func waitSpread(t *testing.T, w *worker, tasks, live int, timeout time.Duration, dead ...string) (time.Duration, map[string]int) {
	t.Helper()
	start := time.Now()
	var last map[string]int
	waitFor(t, timeout, fmt.Sprintf("%d tasks RUNNING on %d workers within one task of each other", tasks, live), func() bool {
		st, ok := w.allStatuses(t)
		if !ok {
			return false
		}
		spread, all := taskSpread(st, tasks, dead...)
		last = spread
		return all && imbalance(spread, live) <= 1
	})
	return time.Since(start), last
}

func workerID(w *worker) string { return strings.TrimPrefix(w.url, "http://") }

// TestCluster runs one broker and three worker processes through Kafka Connect's distributed-mode
// life: forming a cluster, spreading work, a kill -9, a restart, a graceful stop, a worker with a
// different converter, and REST writes sent to followers.
func TestCluster(t *testing.T) {
	_, addr := startBroker(t)
	files := t.TempDir()
	props := map[string]string{
		"plugin.fs.allow": files,
		"plugin.path":     pluginDir + "," + testPlugin,
	}
	var ws []*worker
	for i := 1; i <= 3; i++ {
		ws = append(ws, startWorker(t, fmt.Sprintf("worker%d", i), addr, props))
	}

	// Six connectors of three tasks each, created through different workers (followers forward
	// the write to the leader).
	const conns, perConn = 6, 3
	for i := 0; i < conns; i++ {
		ws[i%3].mustCall(t, 201, "POST", "/connectors", map[string]any{"name": fmt.Sprintf("gen-%d", i), "config": map[string]string{
			"connector.class": "FaultySource", "tasks.max": fmt.Sprint(perConn), "topic": "gen", "poll.interval.ms": "200",
		}})
	}
	// A file pipeline whose every line must survive what follows.
	in, out := pipeline(t, ws[1], files, "cluster", "cluster-lines")
	tasks := conns*perConn + 2

	took, spread := waitSpread(t, ws[0], tasks, 3, 2*time.Minute)
	t.Logf("formed: %d tasks spread %v after %v", tasks, spread, took.Round(100*time.Millisecond))

	// Any worker answers with the same view.
	var views []string
	for _, w := range ws {
		b := w.mustCall(t, 200, "GET", "/connectors", nil)
		views = append(views, string(b))
	}
	if views[0] != views[1] || views[1] != views[2] {
		t.Fatalf("workers disagree on the connectors: %q", views)
	}
	var cfgs []map[string]string
	for _, w := range ws {
		cfgs = append(cfgs, w.mustConfig(t, "gen-3"))
	}
	if !reflect.DeepEqual(cfgs[0], cfgs[1]) || !reflect.DeepEqual(cfgs[1], cfgs[2]) {
		t.Fatalf("workers disagree on a config: %v", cfgs)
	}

	lines := 0
	feed := func(n int) {
		writeLines(t, in, "c-", lines, lines+n)
		lines += n
	}
	feed(5000)

	t.Run("kill -9 of a worker", func(t *testing.T) {
		victim := ws[2]
		victim.stop(syscall.SIGKILL)
		feed(5000)
		took, spread := waitSpread(t, ws[0], tasks, 2, 2*time.Minute, workerID(victim))
		t.Logf("FAILOVER kill -9: all %d tasks RUNNING on the 2 survivors %v after %.1f s", tasks, spread, took.Seconds())
		// The documented bound: session.timeout.ms (10 s) + scheduled.rebalance.max.delay.ms (3 s)
		// + a rebalance and task start; generous for a loaded CI machine.
		if took > 25*time.Second {
			t.Errorf("failover after kill -9 took %v, want well under 30 s", took)
		}

		victim.start()
		victim.waitReady(t)
		took, spread = waitSpread(t, ws[0], tasks, 3, 2*time.Minute)
		t.Logf("restarted worker rejoined: spread %v after %.1f s", spread, took.Seconds())
	})

	t.Run("SIGTERM of a worker", func(t *testing.T) {
		victim := ws[1]
		start := time.Now()
		victim.stop(syscall.SIGTERM)
		stopped := time.Since(start)
		feed(5000)
		took, spread := waitSpread(t, ws[0], tasks, 2, time.Minute, workerID(victim))
		t.Logf("FAILOVER SIGTERM: worker exited after %.1f s, all %d tasks RUNNING on the 2 others %v %.1f s after the signal",
			stopped.Seconds(), tasks, spread, (stopped + took).Seconds())
		if stopped+took > 5*time.Second {
			t.Errorf("tasks of a gracefully stopped worker took %v to run elsewhere, want at most 5 s", stopped+took)
		}
		victim.start()
		victim.waitReady(t)
		waitSpread(t, ws[0], tasks, 3, 2*time.Minute)
	})

	t.Run("worker with different settings is refused", func(t *testing.T) {
		odd := map[string]string{"value.converter": "org.apache.kafka.connect.storage.StringConverter"}
		for k, v := range props {
			odd[k] = v
		}
		port := freePort(t)
		odd["listeners"] = fmt.Sprintf("http://127.0.0.1:%d", port)
		w4 := startWorkerNoWait(t, "worker4", addr, odd)
		waitFor(t, time.Minute, "the refusal in worker4's log", func() bool {
			return strings.Contains(w4.logText(), "value.converter")
		})
		code, body := w4.call(t, "GET", "/health", nil)
		if code == 200 || !strings.Contains(string(body), "value.converter") {
			t.Errorf("worker4 /health: %d %s", code, body)
		}
		for _, line := range strings.Split(w4.logText(), "\n") {
			if strings.Contains(line, "value.converter") {
				t.Logf("worker4 says: %s", line)
				break
			}
		}
		// The cluster is unaffected: the same tasks on the same three workers.
		waitSpread(t, ws[0], tasks, 3, 30*time.Second, workerID(w4))
		w4.stop(syscall.SIGTERM)
	})

	t.Run("leader dies while a rebalance is under way", func(t *testing.T) {
		leader := findLeader(t, ws)
		var follower *worker
		for _, w := range ws {
			if w != leader {
				follower = w
				break
			}
		}
		// A new connector (through a follower) starts a rebalance; kill the leader right away.
		follower.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "late", "config": map[string]string{
			"connector.class": "FaultySource", "tasks.max": "2", "topic": "gen", "poll.interval.ms": "200",
		}})
		leader.stop(syscall.SIGKILL)
		feed(5000)
		took, spread := waitSpread(t, follower, tasks+2, 2, 2*time.Minute, workerID(leader))
		t.Logf("after the leader's death: %d tasks on %v after %.1f s", tasks+2, spread, took.Seconds())
		leader.start()
		leader.waitReady(t)
		waitSpread(t, follower, tasks+2, 3, 2*time.Minute)
	})

	// Nothing the pipeline was given is lost.
	waitFor(t, 2*time.Minute, "every line in the sink file", func() bool { return countLines(out) >= lines })
	seen := map[string]bool{}
	for _, l := range readLines(t, out) {
		seen[l] = true
	}
	var missing []string
	for i := 0; i < lines; i++ {
		if l := fmt.Sprintf("c-%d", i); !seen[l] {
			missing = append(missing, l)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		t.Fatalf("%d lines lost, e.g. %v", len(missing), missing[:min(5, len(missing))])
	}
	t.Logf("pipeline: %d lines in, %d lines out (%d duplicates)", lines, countLines(out), countLines(out)-lines)
}

// findLeader asks each worker's GET /workers who leads.
func findLeader(t *testing.T, ws []*worker) *worker {
	t.Helper()
	for _, w := range ws {
		code, b := w.call(t, "GET", "/workers", nil)
		if code != 200 {
			continue
		}
		var view struct {
			Leader string `json:"leader_url"`
		}
		if json.Unmarshal(b, &view) == nil && view.Leader != "" {
			for _, c := range ws {
				if strings.TrimSuffix(view.Leader, "/") == c.url {
					return c
				}
			}
		}
	}
	t.Fatal("no worker names a leader in GET /workers")
	return nil
}
