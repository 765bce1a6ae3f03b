//go:build e2e

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/runtime/rest/ui/webdriver"
)

// screenshots is where the console test saves what the browser showed: build/screenshots at the
// repository's root (not committed).
var screenshots = filepath.Join("..", "..", "build", "screenshots")

// TestWebConsole loads the web console of a two-worker cluster in headless Chromium, as an
// operator would, with authentication on: a reader on the leader sees every member and its work,
// connectors created through REST and one declared in an HCL file, throughput sparklines, but no
// actions; an admin on the other worker sees the work by worker and a link to the leader, pauses
// a connector with the page's button (the REST API shows it paused), and sees its tasks, its config
// with the secret masked, the state changes, a failed task's trace and the reconciler's view with
// a broken file. Screenshots of each view are saved under build/screenshots.
func TestWebConsole(t *testing.T) {
	os.Remove(filepath.Join(screenshots, "console-failed.png"))
	browser, err := webdriver.Start(t.TempDir())
	if err != nil {
		t.Fatalf("the web console is tested in a real browser, which could not start: %v", err)
	}
	defer browser.Close()

	_, addr := startBroker(t)
	files, conns := t.TempDir(), t.TempDir()
	creds := filepath.Join(t.TempDir(), "users")
	os.WriteFile(creds, []byte("alice:"+hashCLI(t, "password", "alice-pw")+":admin\nbob:"+hashCLI(t, "password", "bob-pw")+":read\n"), 0o600)
	writeHCL(t, conns, "sink.hcl", `connector "ui-sink" {
  class = "FileStreamSink"
  config = {
    topics = ["ui-lines"]
    file   = "`+filepath.Join(files, "out.txt")+`"
  }
}
`)
	props := map[string]string{"plugin.fs.allow": files, "connectors.dir": conns, "rest.auth.basic.file": creds}
	leader := startWorkerNoWait(t, "worker-1", addr, props)
	waitFor(t, time.Minute, "worker-1 healthy", func() bool { code, _ := leader.call(t, "GET", "/health", nil); return code == 200 })
	other := startWorkerNoWait(t, "worker-2", addr, props)
	waitFor(t, time.Minute, "worker-2 healthy", func() bool { code, _ := other.call(t, "GET", "/health", nil); return code == 200 })
	admin := restClient{leader.url, "alice", "alice-pw"}
	var group struct {
		Leader  bool `json:"leader"`
		Workers []struct {
			Assignment struct {
				Tasks []any `json:"tasks"`
			} `json:"assignment"`
		} `json:"workers"`
	}
	waitFor(t, 30*time.Second, "worker-1 leading both", func() bool {
		return admin.get(t, "/workers", &group) && group.Leader && len(group.Workers) == 2
	})

	in := filepath.Join(files, "in.txt")
	writeLines(t, in, "line-", 0, 2000)
	const secret = "hunter2-must-not-show"
	admin.must(t, 201, "POST", "/connectors", map[string]any{"name": "ui-source", "config": map[string]string{
		"connector.class": "FileStreamSource", "file": in, "topic": "ui-lines", "connection.password": secret,
	}})
	// A connector whose task fails: it may not read outside plugin.fs.allow.
	outside := filepath.Join(t.TempDir(), "outside.txt")
	os.WriteFile(outside, []byte("x\n"), 0o644)
	admin.must(t, 201, "POST", "/connectors", map[string]any{"name": "ui-broken", "config": map[string]string{
		"connector.class": "FileStreamSource", "file": outside, "topic": "ui-broken",
	}})
	waitFor(t, 30*time.Second, "two connectors running, one failed, each task on a worker", func() bool {
		tasks := 0
		if admin.get(t, "/workers", &group) {
			for _, m := range group.Workers {
				tasks += len(m.Assignment.Tasks)
			}
		}
		return tasks == 3 && admin.taskState(t, "ui-source") == "RUNNING" && admin.taskState(t, "ui-sink") == "RUNNING" &&
			admin.taskState(t, "ui-broken") == "FAILED"
	})
	// Which worker's /metrics counts each pipeline connector's records.
	runsOn := map[string]string{}
	for _, name := range []string{"ui-source", "ui-sink"} {
		var st status
		admin.get(t, "/connectors/"+name+"/status", &st)
		runsOn[name] = "http://" + st.Tasks[0].WorkerID
	}
	// Records keep flowing while the page samples the metrics.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for i := 2000; ; i += 100 {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
				appendLines(in, "line-", i, i+100)
			}
		}
	}()

	pageOf := func(w *worker) string { return w.url + "/ui?refresh=300" }
	must := func(err error) {
		t.Helper()
		if err != nil {
			logs, _ := browser.ConsoleLog()
			failed := filepath.Join(screenshots, "console-failed.png")
			browser.Screenshot(failed)
			t.Fatalf("%v\nbrowser console: %+v\nthe page then: %s", err, logs, failed)
		}
	}
	shot := func(name string) {
		t.Helper()
		path := filepath.Join(screenshots, name)
		must(browser.Screenshot(path))
		abs, _ := filepath.Abs(path)
		t.Logf("screenshot: %s", abs)
	}
	signIn := func(w *worker, user, password string) {
		t.Helper()
		must(browser.Navigate(pageOf(w)))
		_, err := browser.WaitFor("#signin", 10*time.Second)
		must(err)
		for id, text := range map[string]string{"#user": user, "#password": password} {
			e, err := browser.Find(id)
			must(err)
			must(e.Type(text))
		}
		e, err := browser.Find("#signin-submit")
		must(err)
		must(e.Click())
		_, err = browser.WaitFor("#who", 10*time.Second, func(s string) bool { return strings.HasPrefix(s, user+" ") })
		must(err)
	}
	waitText := func(css string, cond func(string) bool) string {
		t.Helper()
		e, err := browser.WaitFor(css, 20*time.Second, cond)
		must(err)
		s, err := e.Text()
		must(err)
		return s
	}
	contains := func(sub string) func(string) bool { return func(s string) bool { return strings.Contains(s, sub) } }
	// The throughput of the pipeline's connectors that run on w, sampled from w's /metrics.
	throughput := func(w *worker) {
		t.Helper()
		for name, url := range runsOn {
			if url == w.url {
				waitText(`#connectors tr[data-connector="`+name+`"] [data-spark="through"]`, contains("rec/s"))
			}
		}
		// The sink's lag, sampled from wasmconnect_sink_task_records_lag on the worker that runs it.
		if runsOn["ui-sink"] == w.url {
			waitText(`#connectors tr[data-connector="ui-sink"] [data-spark="lag"]`, contains("behind"))
		}
	}

	// A reader on the leader: everything is shown, nothing can be changed.
	signIn(leader, "bob", "bob-pw")
	waitText(`#connectors tr[data-connector="ui-source"] .state-cell`, contains("RUNNING"))
	waitText(`#connectors tr[data-connector="ui-sink"] .state-cell`, contains("RUNNING"))
	waitText("#leader", contains("this worker"))
	waitText("#members", contains(other.url))
	members := waitText("#members", contains(leader.url))
	for _, task := range []string{"ui-source-0", "ui-sink-0", "ui-broken-0"} {
		if !strings.Contains(members, task) {
			t.Errorf("the members table does not place %s:\n%s", task, members)
		}
	}
	if n, err := browser.Count("button[data-action]"); err != nil || n != 0 {
		t.Errorf("a read-only user is offered %d action buttons (%v)", n, err)
	}
	throughput(leader)
	shot("console-reader.png")
	e, err := browser.Find("#signout")
	must(err)
	must(e.Click())
	_, err = browser.WaitFor("#signin", 10*time.Second)
	must(err)

	// An admin on the other worker: the work by worker from the status, a link to the leader, and
	// a pause clicked on the page (forwarded to the leader) that the REST API shows.
	signIn(other, "alice", "alice-pw")
	waitText("#leader", contains(strings.TrimPrefix(leader.url, "http://")))
	waitText("#members", contains("ui-source-0"))
	throughput(other)
	e, err = browser.WaitFor(`button[data-action="pause"][data-connector="ui-source"]`, 10*time.Second)
	must(err)
	shot("console-admin.png")
	must(e.Click())
	waitFor(t, 20*time.Second, "ui-source PAUSED through REST", func() bool {
		var st status
		return admin.get(t, "/connectors/ui-source/status", &st) && st.Connector.State == "PAUSED" &&
			len(st.Tasks) > 0 && st.Tasks[0].State == "PAUSED"
	})
	waitText(`#connectors tr[data-connector="ui-source"] .state-cell`, contains("PAUSED"))
	waitText(`button[data-action="resume"][data-connector="ui-source"]`, contains("Resume"))

	// The connector's page: tasks with their worker, the config with the secret masked, and the
	// state changes, the pause among them.
	must(browser.Navigate(pageOf(other) + "#/connectors/ui-source"))
	waitText("#connector-state", contains("PAUSED"))
	waitText(`#tasks tr[data-task="0"]`, contains("127.0.0.1"))
	waitText(`#config tr[data-key="connection.password"]`, contains("[hidden]"))
	waitText(`#config tr[data-key="file"]`, contains(in))
	waitText("#changes", contains("PAUSED"))
	var html string
	must(browser.Eval(&html, "return document.documentElement.outerHTML"))
	if strings.Contains(html, secret) {
		t.Errorf("the connector's page shows the secret %q", secret)
	}
	shot("console-connector.png")

	// The reconciler's view, with a broken file reported at its position.
	writeHCL(t, conns, "broken.hcl", "connector \"x\" {\n  class = \n}\n")
	must(browser.Navigate(pageOf(other) + "#/reconciler"))
	waitText(`#reconciler tr[data-connector="ui-sink"]`, contains("sink.hcl"))
	waitText("#file-errors", contains("broken.hcl:"))
	shot("console-reconciler.png")
	// The failed task's trace, on its page and among the state changes.
	must(browser.Navigate(pageOf(other) + "#/connectors/ui-broken"))
	waitText(`#tasks tr[data-task="0"]`, contains("FAILED"))
	e, err = browser.WaitFor(`#tasks tr[data-task="0"] details summary`, 10*time.Second)
	must(err)
	must(e.Click())
	waitText(`#tasks tr[data-task="0"] details pre`, contains("plugin.fs.allow"))
	shot("console-failed-task.png")
	must(browser.Navigate(pageOf(other) + "#/changes"))
	waitText("#changes", contains("ui-sink-0"))
	waitText("#changes", contains("FAILED"))
	shot("console-changes.png")

	// Resume, and delete after the page asks again.
	click := func(css string) {
		t.Helper()
		e, err := browser.WaitFor(css, 10*time.Second)
		must(err)
		must(e.Click())
	}
	must(browser.Navigate(pageOf(other) + "#/"))
	click(`button[data-action="resume"][data-connector="ui-source"]`)
	waitFor(t, 20*time.Second, "ui-source RUNNING again through REST", func() bool { return admin.taskState(t, "ui-source") == "RUNNING" })
	click(`button[data-action="delete"][data-connector="ui-broken"]`)
	if code, _ := admin.call(t, "GET", "/connectors/ui-broken", nil); code != 200 {
		t.Fatalf("ui-broken is gone before the delete was confirmed: GET %d", code)
	}
	click(`button[data-action="confirm-delete"][data-connector="ui-broken"]`)
	waitFor(t, 20*time.Second, "ui-broken deleted through REST", func() bool {
		code, _ := admin.call(t, "GET", "/connectors/ui-broken", nil)
		return code == 404
	})
	waitFor(t, 10*time.Second, "ui-broken's row gone", func() bool {
		n, err := browser.Count(`#connectors tr[data-connector="ui-broken"]`)
		return err == nil && n == 0
	})

	// The page itself raised no error and broke no content policy.
	if s := waitText("#error", func(string) bool { return true }); s != "" {
		t.Errorf("the console shows an error: %s", s)
	}
	logs, err := browser.ConsoleLog()
	must(err)
	for _, l := range logs {
		// A 401 while signed out is how the page learns it needs credentials.
		if l.Level == "SEVERE" && !strings.Contains(l.Message, "401") {
			t.Errorf("browser console: %s %s", l.Level, l.Message)
		}
	}
}

// restClient calls the REST API as a user.
type restClient struct{ url, user, password string }

func (c restClient) call(t *testing.T, method, path string, body any) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.url+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth(c.user, c.password)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func (c restClient) must(t *testing.T, want int, method, path string, body any) []byte {
	t.Helper()
	code, b := c.call(t, method, path, body)
	if code != want {
		t.Fatalf("%s %s as %s: %d, want %d: %s", method, path, c.user, code, want, b)
	}
	return b
}

func (c restClient) get(t *testing.T, path string, out any) bool {
	t.Helper()
	code, b := c.call(t, "GET", path, nil)
	return code == 200 && json.Unmarshal(b, out) == nil
}

// taskState is the state of task 0 of a connector, or "" if it has none yet.
func (c restClient) taskState(t *testing.T, name string) string {
	t.Helper()
	var st status
	if !c.get(t, fmt.Sprintf("/connectors/%s/status", name), &st) || len(st.Tasks) == 0 {
		return ""
	}
	return st.Tasks[0].State
}
