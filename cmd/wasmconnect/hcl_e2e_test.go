//go:build e2e

package main

// End-to-end tests of connectors as code: a worker reconciling a directory of HCL files, and the
// validate, plan and apply commands against a running worker.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

// reconcilerStatus is the body of GET /reconciler.
type reconcilerStatus struct {
	Active     bool `json:"active"`
	Runs       int  `json:"runs"`
	DriftCount int  `json:"drift_count"`
	FileErrors []struct {
		File    string `json:"file"`
		Line    int    `json:"line"`
		Column  int    `json:"column"`
		Message string `json:"message"`
	} `json:"file_errors"`
	Connectors map[string]struct {
		Result   string `json:"result"`
		Message  string `json:"message"`
		Attempts int    `json:"attempts"`
	} `json:"connectors"`
}

func (w *worker) reconciler(t *testing.T) reconcilerStatus {
	t.Helper()
	var st reconcilerStatus
	if err := json.Unmarshal(w.mustCall(t, 200, "GET", "/reconciler", nil), &st); err != nil {
		t.Fatal(err)
	}
	return st
}

func (w *worker) config(t testing.TB, name string) (map[string]string, bool) {
	t.Helper()
	code, b := w.call(t, "GET", "/connectors/"+name+"/config", nil)
	if code != 200 {
		return nil, false
	}
	var cfg map[string]string
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatalf("GET /connectors/%s/config: %v: %s", name, err, b)
	}
	return cfg, true
}

// mustConfig is config that fails the test unless the connector's config could be read, so that
// two failed reads never compare equal.
func (w *worker) mustConfig(t testing.TB, name string) map[string]string {
	t.Helper()
	cfg, ok := w.config(t, name)
	if !ok {
		t.Fatalf("GET /connectors/%s/config on %s failed", name, w.name)
	}
	return cfg
}

func writeHCL(t *testing.T, dir, name, src string) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	// A rewrite within the file system's timestamp granularity is still a change.
	later := time.Now().Add(time.Second)
	os.Chtimes(path, later, later)
}

func sourceHCL(name, file, topic string) string {
	return fmt.Sprintf("connector %q {\n  class     = \"FileStreamSource\"\n  tasks_max = 1\n  config = {\n    file  = %q\n    topic = %q\n  }\n}\n", name, file, topic)
}

// runCLI runs the wasmconnect binary and returns its output and exit status. A run that has not
// ended after two minutes is killed, so that a command that should fail but hangs fails its test.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("%v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// One worker reconciling a directory: the connectors are created, an edit changes only its
// connector, a REST change is reverted, a REST-created connector survives, a deleted file deletes
// only its owned connector, a syntax error changes nothing and is reported with its position, a
// secret never reaches the config topic or the REST API, and a connector whose plugin is missing
// does not hold the others back.
func TestHCLConnectorsReconciled(t *testing.T) {
	_, addr := startBroker(t)
	files, conns := t.TempDir(), t.TempDir()
	in, otherIn := filepath.Join(files, "in.txt"), filepath.Join(files, "other-in.txt")
	secretOut := filepath.Join(files, "secret-out.txt")
	t.Setenv("WC_E2E_SINK_FILE", secretOut) // the worker inherits it; the files name only the variable

	writeHCL(t, conns, "source.hcl", sourceHCL("hcl-source", in, "hcl-lines"))
	writeHCL(t, conns, "sink.hcl", `connector "hcl-sink" {
  class = "FileStreamSink"
  config = {
    topics = ["hcl-lines"]
    file   = secret("env", "WC_E2E_SINK_FILE")
  }
}
`)
	writeHCL(t, conns, "other.hcl", sourceHCL("hcl-other", otherIn, "hcl-other"))
	w := startWorker(t, "worker", addr, map[string]string{
		"plugin.fs.allow":            files,
		"connectors.dir":             conns,
		"config.providers":           "env",
		"config.providers.env.class": "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
	})
	start := time.Now()

	// Three connectors reconciled into the running cluster, and working: the sink writes to the
	// file its secret names.
	for _, name := range []string{"hcl-source", "hcl-sink", "hcl-other"} {
		w.waitTaskState(t, name, "RUNNING", 30*time.Second)
	}
	t.Logf("three connectors running %v after the worker", time.Since(start).Round(time.Millisecond))
	writeLines(t, in, "line-", 0, 50)
	waitFor(t, 30*time.Second, "the lines in the file the secret names", func() bool { return countLines(secretOut) >= 50 })
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "rest-made", "config": map[string]string{
		"connector.class": "FileStreamSource", "file": filepath.Join(files, "rest.txt"), "topic": "rest"}})

	// The secret is a placeholder in the config topic, in GET .../config and in the task configs.
	for _, path := range []string{"/connectors/hcl-sink/config", "/connectors/hcl-sink/tasks", "/connectors/hcl-sink"} {
		b := w.mustCall(t, 200, "GET", path, nil)
		if !strings.Contains(string(b), "${env:WC_E2E_SINK_FILE}") || strings.Contains(string(b), secretOut) {
			t.Fatalf("GET %s: %s", path, b)
		}
	}
	raw, err := exec.Command("kcat", "-C", "-b", addr, "-t", "connect-configs", "-e", "-q").Output()
	if err != nil {
		t.Fatalf("kcat: %v", err)
	}
	if !strings.Contains(string(raw), "${env:WC_E2E_SINK_FILE}") || strings.Contains(string(raw), secretOut) {
		t.Fatalf("config topic: the secret's value is there, or its placeholder is not:\n%s", raw)
	}

	// Editing a file changes only its connector.
	srcBefore := w.mustConfig(t, "hcl-source")
	sinkBefore := w.mustConfig(t, "hcl-sink")
	writeHCL(t, conns, "other.hcl", sourceHCL("hcl-other", otherIn, "hcl-other-2"))
	waitFor(t, 15*time.Second, "hcl-other's new topic", func() bool {
		cfg, _ := w.config(t, "hcl-other")
		return cfg["topic"] == "hcl-other-2"
	})
	srcAfter := w.mustConfig(t, "hcl-source")
	sinkAfter := w.mustConfig(t, "hcl-sink")
	if !reflect.DeepEqual(srcBefore, srcAfter) || !reflect.DeepEqual(sinkBefore, sinkAfter) {
		t.Fatalf("other connectors changed:\n%v\n%v\n%v\n%v", srcBefore, srcAfter, sinkBefore, sinkAfter)
	}

	// A REST change to an owned connector is reverted, and counted as drift.
	drifted := map[string]string{}
	for k, v := range srcAfter {
		drifted[k] = v
	}
	drifted["topic"] = "changed-through-rest"
	w.mustCall(t, 200, "PUT", "/connectors/hcl-source/config", drifted)
	waitFor(t, 15*time.Second, "the REST change to be reverted", func() bool {
		cfg, _ := w.config(t, "hcl-source")
		return cfg["topic"] == "hcl-lines"
	})
	w.mustCall(t, 202, "PUT", "/connectors/hcl-other/pause", nil)
	waitFor(t, 15*time.Second, "the REST pause to be reverted", func() bool {
		s, ok := w.status(t, "hcl-other")
		return ok && s.Connector.State == "RUNNING" && w.reconciler(t).DriftCount >= 2
	})

	// Deleting a file deletes only its (owned) connector; the REST-created one stays.
	os.Remove(filepath.Join(conns, "other.hcl"))
	waitFor(t, 15*time.Second, "hcl-other to be deleted", func() bool {
		code, _ := w.call(t, "GET", "/connectors/hcl-other", nil)
		return code == 404
	})
	for _, name := range []string{"hcl-source", "hcl-sink", "rest-made"} {
		w.mustCall(t, 200, "GET", "/connectors/"+name, nil)
	}

	// A syntax error changes nothing and is reported with its line and column.
	writeHCL(t, conns, "source.hcl", "connector \"hcl-source\" {\n  class = \"FileStreamSource\"\n  config = {\n    file  = \"x\"\n    topic = \n  }\n}\n")
	var st reconcilerStatus
	waitFor(t, 15*time.Second, "the syntax error in GET /reconciler", func() bool {
		st = w.reconciler(t)
		return len(st.FileErrors) > 0
	})
	fe := st.FileErrors[0]
	if filepath.Base(fe.File) != "source.hcl" || fe.Line != 5 || fe.Column != 13 || !strings.Contains(fe.Message, "Expected the start of an expression") {
		t.Fatalf("file error %+v", fe)
	}
	pos := fmt.Sprintf("source.hcl:%d,%d:", fe.Line, fe.Column)
	waitFor(t, 5*time.Second, "the error in the worker log", func() bool { return strings.Contains(w.logText(), pos) })
	time.Sleep(2500 * time.Millisecond) // a poll or more with the bad file in place
	for _, name := range []string{"hcl-source", "hcl-sink"} {
		if s := w.waitTaskState(t, name, "RUNNING", time.Second); s.Connector.State != "RUNNING" {
			t.Fatalf("%s: %+v", name, s)
		}
	}
	if cfg := w.mustConfig(t, "hcl-source"); !reflect.DeepEqual(cfg, srcAfter) {
		t.Fatalf("hcl-source changed while its file was invalid: %v", cfg)
	}

	// A connector whose plugin is missing does not hold the others back.
	writeHCL(t, conns, "source.hcl", sourceHCL("hcl-source", in, "hcl-lines"))
	writeHCL(t, conns, "missing.hcl", "connector \"hcl-missing\" {\n  class = \"NoSuchConnector\"\n  config = { topic = \"x\" }\n}\n")
	writeHCL(t, conns, "late.hcl", sourceHCL("hcl-late", filepath.Join(files, "late.txt"), "hcl-late"))
	w.waitTaskState(t, "hcl-late", "RUNNING", 15*time.Second)
	waitFor(t, 10*time.Second, "hcl-missing reported as failed", func() bool {
		st = w.reconciler(t)
		c := st.Connectors["hcl-missing"]
		return len(st.FileErrors) == 0 && c.Result == "failed" && strings.Contains(c.Message, "NoSuchConnector") && c.Attempts >= 1
	})
	if st.Connectors["hcl-late"].Result == "failed" || !st.Active {
		t.Fatalf("status %+v", st)
	}
	metrics := string(w.mustCall(t, 200, "GET", "/metrics", nil))
	for _, want := range []string{"wasmconnect_reconcile_runs_total{", "wasmconnect_reconcile_drift_total{",
		`connector="hcl-missing",result="failed"} 1`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("GET /metrics lacks %s", want)
		}
	}
	t.Logf("whole test %v", time.Since(start).Round(time.Millisecond))
}

// plan shows the diff (exit 2) without secret values, apply applies it, a saved plan is applied
// only while it is current, and validate reports positions.
func TestHCLPlanApplyValidate(t *testing.T) {
	_, addr := startBroker(t)
	files, dir := t.TempDir(), t.TempDir()
	t.Setenv("WC_PLAN_SINK_FILE", filepath.Join(files, "plan-out.txt"))
	w := startWorker(t, "worker", addr, map[string]string{
		"plugin.fs.allow": files, "config.providers": "env", "config.providers.env.class": "EnvVarConfigProvider",
	})
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "manual", "config": map[string]string{
		"connector.class": "FileStreamSource", "file": filepath.Join(files, "manual.txt"), "topic": "manual"}})
	in := filepath.Join(files, "plan-in.txt")
	writeHCL(t, dir, "source.hcl", sourceHCL("plan-source", in, "plan-a"))
	writeHCL(t, dir, "sink.hcl", `connector "plan-sink" {
  class = "FileStreamSink"
  state = "paused"
  config = {
    topics              = "plan-a"
    file                = secret("env", "WC_PLAN_SINK_FILE")
    "ssl.key.password"  = null
  }
}
`)
	url := "--url=" + w.url
	out, errOut, code := runCLI(t, "plan", dir, url)
	if code != 2 || !strings.Contains(out, "+ create plan-source") || !strings.Contains(out, "+ create plan-sink") ||
		!strings.Contains(out, `file                   = "${env:WC_PLAN_SINK_FILE}"`) || !strings.Contains(out, "initial state PAUSED") ||
		!strings.Contains(out, "Plan: 2 to create.") || strings.Contains(out, "manual") || strings.Contains(out, files+"/plan-out.txt") {
		t.Fatalf("plan: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = runCLI(t, "apply", dir, url)
	if code != 0 || !strings.Contains(out, "plan-source: create") || !strings.Contains(out, "plan-sink: create") {
		t.Fatalf("apply: exit %d\n%s%s", code, out, errOut)
	}
	w.waitTaskState(t, "plan-source", "RUNNING", 15*time.Second)
	waitFor(t, 15*time.Second, "plan-sink paused", func() bool {
		s, ok := w.status(t, "plan-sink")
		return ok && s.Connector.State == "PAUSED"
	})
	if out, _, code = runCLI(t, "plan", dir, url); code != 0 || !strings.Contains(out, "No changes. 2 in sync.") {
		t.Fatalf("plan after apply: exit %d\n%s", code, out)
	}

	// A change shows only the changed key of the changed connector.
	writeHCL(t, dir, "source.hcl", sourceHCL("plan-source", in, "plan-b"))
	planFile := filepath.Join(t.TempDir(), "plan.json")
	out, errOut, code = runCLI(t, "plan", dir, url, "--out", planFile)
	if code != 2 || !strings.Contains(out, "~ update plan-source") || !strings.Contains(out, `~ topic `) ||
		!strings.Contains(out, `"plan-a" -> "plan-b"`) || strings.Contains(out, "plan-sink") || !strings.Contains(out, "Plan: 1 to update. 1 in sync.") {
		t.Fatalf("plan: exit %d\n%s%s", code, out, errOut)
	}
	// The saved plan is applied as it is; once applied, it is stale.
	if out, errOut, code = runCLI(t, "apply", dir, url, "--plan", planFile); code != 0 || !strings.Contains(out, "plan-source: update") {
		t.Fatalf("apply --plan: exit %d\n%s%s", code, out, errOut)
	}
	if cfg := w.mustConfig(t, "plan-source"); cfg["topic"] != "plan-b" {
		t.Fatalf("config %v", cfg)
	}
	if _, errOut, code = runCLI(t, "apply", dir, url, "--plan", planFile); code != 1 || !strings.Contains(errOut, "is stale") {
		t.Fatalf("stale plan: exit %d\n%s", code, errOut)
	}

	// Deleting a file deletes its connector, never the REST-created one.
	os.Remove(filepath.Join(dir, "sink.hcl"))
	out, _, code = runCLI(t, "apply", dir, url)
	if code != 0 || !strings.Contains(out, "- delete plan-sink") || !strings.Contains(out, "plan-sink: delete") || strings.Contains(out, "manual") {
		t.Fatalf("apply: exit %d\n%s", code, out)
	}
	w.mustCall(t, 200, "GET", "/connectors/manual", nil)
	w.mustCall(t, 404, "GET", "/connectors/plan-sink", nil)

	// validate: syntax errors with positions, then configs checked against the plugins.
	bad := t.TempDir()
	writeHCL(t, bad, "two.hcl", "connector \"x\" {\n  class = \"FileStreamSource\"\n  state = running\"\n}\n")
	if _, errOut, code = runCLI(t, "validate", bad); code != 1 || !strings.Contains(errOut, "two.hcl:3,") {
		t.Fatalf("validate: exit %d\n%s", code, errOut)
	}
	writeHCL(t, bad, "two.hcl", "connector \"x\" {\n  class = \"FileStreamSource\"\n  config = {\n    file = \"/tmp/x\"\n    \"batch.size\" = \"many\"\n  }\n}\n")
	if _, errOut, code = runCLI(t, "validate", bad, "--plugin-path", pluginDir); code != 1 ||
		!strings.Contains(errOut, `two.hcl:1,1: connector "x": topic:`) || !strings.Contains(errOut, `two.hcl:5,5: connector "x": batch.size:`) {
		t.Fatalf("validate: exit %d\n%s", code, errOut)
	}
	if out, errOut, code = runCLI(t, "validate", dir, "--plugin-path", pluginDir); code != 0 || !strings.Contains(out, "1 connector(s) valid") {
		t.Fatalf("validate: exit %d\n%s%s", code, out, errOut)
	}
}

// TestHCLReconciledByTheLeaderOnly runs two workers that both have connectors.dir: the leader
// reconciles, the other serves, and GET /reconciler on either shows the leader's state.
func TestHCLReconciledByTheLeaderOnly(t *testing.T) {
	_, addr := startBroker(t)
	files, conns := t.TempDir(), t.TempDir()
	writeHCL(t, conns, "source.hcl", sourceHCL("two-source", filepath.Join(files, "in.txt"), "two-lines"))
	props := map[string]string{"plugin.fs.allow": files, "connectors.dir": conns}
	a := startWorker(t, "worker-a", addr, props)
	b := startWorker(t, "worker-b", addr, props)
	a.waitTaskState(t, "two-source", "RUNNING", time.Minute)

	leader := findLeader(t, []*worker{a, b})
	follower := a
	if leader == a {
		follower = b
	}
	// GET /reconciler on either worker shows the leader's active reconciler (a follower forwards).
	for _, w := range []*worker{a, b} {
		if s := w.reconciler(t); !s.Active || s.Runs == 0 {
			t.Errorf("GET /reconciler on %s: %+v, want the leader's active reconciler", w.name, s)
		}
	}
	// Each worker's own /metrics says who reconciles: the leader ran, the follower never did, even
	// after a few more of the leader's polls.
	time.Sleep(2 * time.Second)
	if runs := metricValue(t, leader, "wasmconnect_reconcile_runs_total"); runs == 0 {
		t.Errorf("the leader %s has not reconciled (runs %v)", leader.name, runs)
	}
	for name, want := range map[string]float64{"wasmconnect_reconcile_runs_total": 0, "wasmconnect_reconcile_active": 0} {
		if got := metricValue(t, follower, name); got != want {
			t.Errorf("follower %s: %s = %v, want %v", follower.name, name, got, want)
		}
	}

	// Kill the leader: the other worker takes the reconciling over.
	leader.stop(syscall.SIGKILL)
	writeHCL(t, conns, "later.hcl", sourceHCL("two-later", filepath.Join(files, "later.txt"), "two-later"))
	follower.waitTaskState(t, "two-later", "RUNNING", time.Minute)
	if runs := metricValue(t, follower, "wasmconnect_reconcile_runs_total"); runs == 0 {
		t.Errorf("%s leads now but its own runs counter is 0", follower.name)
	}
}

// metricValue reads one series of a worker's own GET /metrics (never forwarded), failing the test if
// the series is missing. Labels are ignored: each worker has one series of the name.
func metricValue(t *testing.T, w *worker, name string) float64 {
	t.Helper()
	body := string(w.mustCall(t, 200, "GET", "/metrics", nil))
	for _, line := range strings.Split(body, "\n") {
		rest, ok := strings.CutPrefix(line, name)
		if !ok || (rest == "" || (rest[0] != '{' && rest[0] != ' ')) {
			continue
		}
		var v float64
		if _, err := fmt.Sscan(rest[strings.LastIndexByte(rest, ' ')+1:], &v); err != nil {
			t.Fatalf("%s on %s: %q: %v", name, w.name, line, err)
		}
		return v
	}
	t.Fatalf("GET /metrics on %s has no %s", w.name, name)
	return 0
}
