//go:build e2e

package main

// End-to-end tests of a worker's start: what it says when a setting keeps it from starting, and
// how it waits for a broker that is not up yet.

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// A worker that cannot start exits non-zero, without a panic, and its last line names the
// setting at fault and the cause.
func TestStartupErrorsNameTheSettingAndTheCause(t *testing.T) {
	_, addr := startBroker(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	missing := filepath.Join(t.TempDir(), "missing")
	for _, tc := range []struct {
		name      string
		overrides map[string]string
		want      []string
		within    time.Duration
	}{
		{"port in use", map[string]string{"listeners": "http://" + taken.Addr().String()},
			[]string{"listeners", taken.Addr().String(), "address already in use"}, 30 * time.Second},
		{"missing plugin.fs.allow directory", map[string]string{"plugin.fs.allow": missing},
			[]string{"plugin.fs.allow", missing, "no such file or directory"}, 30 * time.Second},
		// Nothing listens on a port just freed: every attempt is refused.
		{"unreachable broker", map[string]string{"bootstrap.servers": fmt.Sprintf("127.0.0.1:%d", freePort(t)), "default.api.timeout.ms": "3000"},
			[]string{"bootstrap.servers", "default.api.timeout.ms", "connection refused"}, 30 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			props, _ := writeWorkerProps(t, "worker", addr, tc.overrides)
			start := time.Now()
			_, stderr, code := runCLI(t, "worker", "--config", props)
			took := time.Since(start)
			last := lastLine(stderr)
			if code == 0 || strings.Contains(stderr, "panic") {
				t.Fatalf("exit code %d; stderr:\n%s", code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(last, w) {
					t.Errorf("last line %q lacks %q; stderr:\n%s", last, w, stderr)
				}
			}
			if took > tc.within {
				t.Errorf("took %v to give up, want under %v", took, tc.within)
			}
			t.Logf("exit %d after %v: %s", code, took.Round(time.Millisecond), last)
		})
	}
}

// A worker started before its broker says so within a few seconds, naming bootstrap.servers and
// the cause, keeps trying, and joins once the broker is up.
func TestWorkerStartedBeforeTheBrokerWaitsForIt(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	w := startWorkerNoWait(t, "worker", addr, nil)
	start := time.Now()
	waitFor(t, 5*time.Second, "a warning naming bootstrap.servers and the cause", func() bool {
		log := w.logText()
		return strings.Contains(log, "bootstrap.servers="+addr) && strings.Contains(log, "connection refused")
	})
	t.Logf("reported after %v", time.Since(start).Round(time.Millisecond))
	time.Sleep(6 * time.Second) // past one retry: the worker must still be waiting, not gone
	select {
	case <-w.done:
		t.Fatalf("the worker exited while its broker was coming up:\n%s", w.logText())
	default:
	}
	if n := strings.Count(w.logText(), "Kafka not reachable yet"); n < 2 {
		t.Errorf("%d warnings after %v, want one per retry", n, time.Since(start).Round(time.Second))
	}
	startBrokerAt(t, addr)
	w.waitReady(t)
	t.Logf("healthy %v after the worker started", time.Since(start).Round(time.Millisecond))
	if log := w.logText(); strings.Contains(log, "panic") {
		t.Fatalf("log has a panic:\n%s", log)
	}
}

// A worker logs "plugin modules compiled" once the modules it had not seen are compiled, and a
// worker restarted on the same plugin.cache.dir, whose modules all come from the cache, logs it
// too (modules=0 cached=1): waitCompiled, which benchmarks use, waited five minutes for it there.
func TestWarmWorkerLogsModulesCompiled(t *testing.T) {
	_, addr := startBroker(t)
	plugins := t.TempDir() // the file module alone, so that the cold compile takes a moment only
	if err := os.Symlink(filepath.Join(pluginDir, "file.wasm"), filepath.Join(plugins, "file.wasm")); err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{"plugin.path": plugins, "plugin.cache.dir": t.TempDir()}
	for _, want := range []string{"modules=1 cached=0", "modules=0 cached=1"} {
		w := startWorker(t, "worker", addr, settings)
		waitCompiled(t, w)
		if log := w.logText(); !strings.Contains(log, want) {
			t.Errorf("the line plugin modules compiled does not say %s:\n%s", want, log)
		}
		w.stop(syscall.SIGTERM)
	}
}

// A worker that cannot join its group compiles its plugin modules all the same, a few seconds after
// it serves requests, so that a module that does not compile is reported at start-up: here the
// group's other member is paused (SIGSTOP) with a 60 s session, which holds the rebalance the new
// worker's join starts for that long, and the new worker logs "plugin modules compiled" while its
// GET /health still answers 503 "starting".
func TestWorkerThatHasNotJoinedCompilesItsModules(t *testing.T) {
	_, addr := startBroker(t)
	long := map[string]string{"session.timeout.ms": "60000", "rebalance.timeout.ms": "60000"}
	first := startWorker(t, "first", addr, long)
	first.signal(syscall.SIGSTOP)

	plugins := t.TempDir() // the file module alone, not in this worker's cache: one compile to do
	if err := os.Symlink(filepath.Join(pluginDir, "file.wasm"), filepath.Join(plugins, "file.wasm")); err != nil {
		t.Fatal(err)
	}
	w := startWorkerNoWait(t, "second", addr, map[string]string{"plugin.path": plugins, "plugin.cache.dir": t.TempDir()})
	waitFor(t, 30*time.Second, "the second worker to serve", func() bool {
		code, _ := w.call(t, "GET", "/health", nil)
		return code != 0
	})
	waitFor(t, 30*time.Second, "the plugin modules compiled", func() bool { return strings.Contains(w.logText(), "plugin modules compiled") })
	if code, body := w.call(t, "GET", "/health", nil); code != 503 {
		t.Errorf("GET /health after the compile: %d %s, want 503: the worker joined, so the test shows nothing", code, body)
	}
	if log := w.logText(); !strings.Contains(log, "compiling the plugin modules before the group join") || !strings.Contains(log, "modules=1 cached=0") {
		t.Errorf("the log does not say the modules were compiled before the join:\n%s", log)
	}
}
