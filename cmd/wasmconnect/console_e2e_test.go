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

// TestWebConsole loads the worker's web console in headless Chromium, as an operator would, with
// authentication on: a reader sees the cluster, a connector created through REST and one declared
// in an HCL file, their tasks, masked secrets, state changes, sparklines and the reconciler's
// view, but no actions; an admin pauses a connector with the page's button, and the REST API shows
// it paused. Screenshots of each view are saved under build/screenshots.
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
	w := startWorkerNoWait(t, "worker", addr, map[string]string{
		"plugin.fs.allow": files, "connectors.dir": conns, "rest.auth.basic.file": creds,
	})
	waitFor(t, time.Minute, "health", func() bool { code, _ := w.call(t, "GET", "/health", nil); return code == 200 })
	admin := restClient{w.url, "alice", "alice-pw"}

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
	waitFor(t, 30*time.Second, "two connectors running, one failed", func() bool {
		return admin.taskState(t, "ui-source") == "RUNNING" && admin.taskState(t, "ui-sink") == "RUNNING" &&
			admin.taskState(t, "ui-broken") == "FAILED"
	})
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

	page := w.url + "/ui?refresh=300"
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
	signIn := func(user, password string) {
		t.Helper()
		must(browser.Navigate(page))
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

	// A reader: everything is shown, nothing can be changed.
	signIn("bob", "bob-pw")
	waitText(`#connectors tr[data-connector="ui-source"] .state-cell`, contains("RUNNING"))
	waitText(`#connectors tr[data-connector="ui-sink"] .state-cell`, contains("RUNNING"))
	waitText("#cluster", contains("this worker")) // the only worker leads
	waitText("#members", contains("ui-source-0"))
	if n, err := browser.Count("button[data-action]"); err != nil || n != 0 {
		t.Errorf("a read-only user is offered %d action buttons (%v)", n, err)
	}
	// Throughput of the pipeline, sampled from /metrics.
	waitText(`#connectors tr[data-connector="ui-source"] [data-spark="through"]`, contains("rec/s"))
	waitText(`#connectors tr[data-connector="ui-sink"] [data-spark="through"]`, contains("rec/s"))
	shot("console-reader.png")

	// An admin pauses the connector with the page's button.
	e, err := browser.Find("#signout")
	must(err)
	must(e.Click())
	signIn("alice", "alice-pw")
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
	must(browser.Navigate(page + "#/connectors/ui-source"))
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
	must(browser.Navigate(page + "#/reconciler"))
	waitText(`#reconciler tr[data-connector="ui-sink"]`, contains("sink.hcl"))
	waitText("#file-errors", contains("broken.hcl:"))
	shot("console-reconciler.png")
	// The failed task's trace, on its page and among the state changes.
	must(browser.Navigate(page + "#/connectors/ui-broken"))
	waitText(`#tasks tr[data-task="0"]`, contains("FAILED"))
	e, err = browser.WaitFor(`#tasks tr[data-task="0"] details summary`, 10*time.Second)
	must(err)
	must(e.Click())
	waitText(`#tasks tr[data-task="0"] details pre`, contains("plugin.fs.allow"))
	shot("console-failed-task.png")
	must(browser.Navigate(page + "#/changes"))
	waitText("#changes", contains("ui-sink-0"))
	waitText("#changes", contains("FAILED"))
	shot("console-changes.png")

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
