//go:build e2e

package main

// Helpers for end-to-end tests: real broker and worker processes of the wasmconnect binary, driven
// over the Kafka protocol and the REST API, as a user would run them.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

var (
	binary     string // the wasmconnect binary under test
	pluginDir  string // build/plugins
	testPlugin string // build/testplugins
	cacheDir   string // shared wazero compilation cache, so each worker start does not recompile
)

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "wasmconnect-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	defer pluginbuild.Cleanup()
	binary = filepath.Join(tmp, "wasmconnect")
	cacheDir = filepath.Join(tmp, "cache")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build -o %s .: %v\n%s", binary, err, out)
		return 1
	}
	if pluginDir, err = pluginbuild.Dir("plugins/file", "plugins/transforms", "plugins/datagen", "plugins/http"); err == nil {
		testPlugin, err = pluginbuild.Dir("plugins/testdata/faulty")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// process is a child process whose output goes to a log file shown when the test fails.
type process struct {
	t    testing.TB
	name string
	dir  string
	args []string
	cmd  *exec.Cmd
	log  string
	mu   sync.Mutex
	done chan struct{}
}

func startProcess(t testing.TB, name string, args ...string) *process {
	t.Helper()
	return startProcessIn(t, "", name, args...)
}

// startProcessIn is startProcess with dir as the working directory ("" for the test's).
func startProcessIn(t testing.TB, dir, name string, args ...string) *process {
	t.Helper()
	p := &process{t: t, name: name, dir: dir, args: args, log: filepath.Join(t.TempDir(), name+".log")}
	p.start()
	t.Cleanup(func() {
		p.stop(syscall.SIGKILL)
		if t.Failed() {
			b, _ := os.ReadFile(p.log)
			if len(b) > 20000 {
				b = b[len(b)-20000:]
			}
			t.Logf("---- %s log (tail) ----\n%s", p.name, b)
		}
	})
	return p
}

func (p *process) start() {
	p.t.Helper()
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		p.t.Fatal(err)
	}
	cmd := exec.Command(binary, p.args...)
	cmd.Dir = p.dir
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); f.Close(); close(done) }()
	p.mu.Lock()
	p.cmd, p.done = cmd, done
	p.mu.Unlock()
}

// stop sends sig and waits for the process to exit.
func (p *process) stop(sig syscall.Signal) {
	cmd, done := p.running()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

// signal sends sig (SIGSTOP, SIGCONT, ...) to the process if it is running, without waiting.
func (p *process) signal(sig syscall.Signal) {
	if cmd, _ := p.running(); cmd != nil {
		cmd.Process.Signal(sig)
	}
}

// running returns the process's command and the channel closed when it exits, or a nil command
// when it was never started or has exited.
func (p *process) running() (*exec.Cmd, chan struct{}) {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return nil, nil
	}
	select {
	case <-done:
		return nil, nil
	default:
		return cmd, done
	}
}

func (p *process) logText() string {
	b, _ := os.ReadFile(p.log)
	return string(b)
}

// broker starts an embedded broker process and returns its address.
func startBroker(t testing.TB) (*process, string) {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	return startBrokerAt(t, addr), addr
}

// startBrokerAt starts an embedded broker process listening on addr.
func startBrokerAt(t testing.TB, addr string) *process {
	t.Helper()
	p := startProcess(t, "broker", "broker", "--listen", addr, "--data-dir", t.TempDir())
	waitFor(t, 30*time.Second, "broker to listen", func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return p
}

// worker is a worker process and its REST URL.
type worker struct {
	*process
	url string
}

// startWorker writes a properties file from the defaults plus overrides, starts a worker and waits
// until it is healthy.
func startWorker(t testing.TB, name, brokerAddr string, overrides map[string]string) *worker {
	t.Helper()
	w := startWorkerNoWait(t, name, brokerAddr, overrides)
	w.waitReady(t)
	return w
}

// startWorkerNoWait starts a worker without waiting for it to be healthy.
func startWorkerNoWait(t testing.TB, name, brokerAddr string, overrides map[string]string) *worker {
	t.Helper()
	file, port := writeWorkerProps(t, name, brokerAddr, overrides)
	return &worker{process: startProcess(t, name, "worker", "--config", file), url: fmt.Sprintf("http://127.0.0.1:%d", port)}
}

// writeWorkerProps writes a worker properties file from the defaults plus overrides and returns
// its path and the REST port it listens on.
func writeWorkerProps(t testing.TB, name, brokerAddr string, overrides map[string]string) (file string, port int) {
	t.Helper()
	port = freePort(t)
	props := map[string]string{
		"bootstrap.servers":                 brokerAddr,
		"group.id":                          "connect-cluster",
		"config.storage.topic":              "connect-configs",
		"offset.storage.topic":              "connect-offsets",
		"status.storage.topic":              "connect-status",
		"config.storage.replication.factor": "1",
		"offset.storage.replication.factor": "1",
		"status.storage.replication.factor": "1",
		"key.converter":                     "org.apache.kafka.connect.json.JsonConverter",
		"value.converter":                   "org.apache.kafka.connect.json.JsonConverter",
		"listeners":                         fmt.Sprintf("http://127.0.0.1:%d", port),
		"plugin.path":                       pluginDir,
		"plugin.cache.dir":                  cacheDir,
		"offset.flush.interval.ms":          "1000",
	}
	for k, v := range overrides {
		props[k] = v
	}
	var b strings.Builder
	for k, v := range props {
		fmt.Fprintf(&b, "%s=%s\n", k, v)
	}
	file = filepath.Join(t.TempDir(), name+".properties")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if l, ok := props["listeners"]; ok && overrides["listeners"] != "" {
		port = 0
		fmt.Sscanf(l[strings.LastIndex(l, ":")+1:], "%d", &port)
	}
	return file, port
}

// waitCompiled waits until the worker has compiled the plugin modules it had not seen before, in
// the background, so that a benchmark does not measure those compiles beside its own work. A worker
// whose modules all come from the cache logs the same line (modules=0 cached=N) at once: those
// compile from the cache, in tens of milliseconds, on first use.
func waitCompiled(t testing.TB, w *worker) {
	t.Helper()
	waitFor(t, 5*time.Minute, "the plugin modules compiled", func() bool { return strings.Contains(w.logText(), "plugin modules compiled") })
}

func (w *worker) waitReady(t testing.TB) {
	t.Helper()
	waitFor(t, 60*time.Second, w.name+" to be healthy (REST up, group joined)", func() bool {
		code, _ := w.call(t, "GET", "/health", nil)
		return code == 200
	})
}

// call sends a REST request and returns the status and body.
func (w *worker) call(t testing.TB, method, path string, body any) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, w.url+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// mustCall is call that fails the test unless the status is want.
func (w *worker) mustCall(t testing.TB, want int, method, path string, body any) []byte {
	t.Helper()
	code, b := w.call(t, method, path, body)
	if code != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, code, want, b)
	}
	return b
}

type status struct {
	Name      string `json:"name"`
	Connector struct {
		State    string `json:"state"`
		WorkerID string `json:"worker_id"`
		Trace    string `json:"trace"`
	} `json:"connector"`
	Tasks []struct {
		ID       int    `json:"id"`
		State    string `json:"state"`
		WorkerID string `json:"worker_id"`
		Trace    string `json:"trace"`
	} `json:"tasks"`
	Type string `json:"type"`
}

func (w *worker) status(t testing.TB, name string) (status, bool) {
	t.Helper()
	code, b := w.call(t, "GET", "/connectors/"+name+"/status", nil)
	var s status
	if code != 200 || json.Unmarshal(b, &s) != nil {
		return s, false
	}
	return s, true
}

// mustStatus is status that fails the test unless the status could be read and has a task.
func (w *worker) mustStatus(t testing.TB, name string) status {
	t.Helper()
	s, ok := w.status(t, name)
	if !ok || len(s.Tasks) == 0 {
		t.Fatalf("GET /connectors/%s/status on %s: no status with tasks (%+v)", name, w.name, s)
	}
	return s
}

// waitTaskState waits until task 0 of a connector is in state and returns the status.
func (w *worker) waitTaskState(t testing.TB, name, state string, timeout time.Duration) status {
	t.Helper()
	var last status
	waitFor(t, timeout, fmt.Sprintf("%s task 0 to be %s", name, state), func() bool {
		s, ok := w.status(t, name)
		last = s
		return ok && len(s.Tasks) > 0 && s.Tasks[0].State == state
	})
	return last
}

// waitFor polls cond until it holds, failing the test after timeout; the failure message ends with
// what detail returns then (the state that was waited on), if given.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool, detail ...func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			var more string
			for _, d := range detail {
				more += d()
			}
			t.Fatalf("timed out after %v waiting for %s%s", timeout, what, more)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// writeLines writes lines "<prefix><n>" for n in [from, to) to path, appending.
func writeLines(t testing.TB, path, prefix string, from, to int) {
	t.Helper()
	if err := appendLines(path, prefix, from, to); err != nil {
		t.Fatal(err)
	}
}

// appendLines is writeLines for goroutines other than the test's, which must not call t.Fatal.
func appendLines(path, prefix string, from, to int) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for i := from; i < to; i++ {
		fmt.Fprintf(w, "%s%d\n", prefix, i)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// countLines returns the number of complete lines in a file (0 if it does not exist).
func countLines(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return bytes.Count(b, []byte{'\n'})
}

func readLines(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
