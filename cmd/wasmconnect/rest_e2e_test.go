//go:build e2e

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestConnectorLifecycleAsToolsDriveIt drives a connector through the calls kcctl and the Terraform
// provider make, against a running worker.
func TestConnectorLifecycleAsToolsDriveIt(t *testing.T) {
	_, addr := startBroker(t)
	files := t.TempDir()
	w := startWorker(t, "worker", addr, map[string]string{"plugin.fs.allow": files})
	in := filepath.Join(files, "in.txt")
	writeLines(t, in, "l-", 0, 100)

	t.Run("kcctl", func(t *testing.T) {
		cfg := map[string]string{"connector.class": "FileStreamSource", "file": in, "topic": "kc", "tasks.max": "1"}
		w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "kc", "config": cfg})
		w.waitTaskState(t, "kc", "RUNNING", time.Minute)
		w.mustCall(t, 202, "PUT", "/connectors/kc/pause", nil)
		w.waitTaskState(t, "kc", "PAUSED", 30*time.Second)
		// Offsets can only be changed once the connector is stopped.
		if code, b := w.call(t, "DELETE", "/connectors/kc/offsets", nil); code != 400 || !strings.Contains(string(b), "STOPPED") {
			t.Fatalf("reset offsets of a paused connector: %d %s", code, b)
		}
		w.mustCall(t, 204, "PUT", "/connectors/kc/stop", nil)
		waitFor(t, 30*time.Second, "STOPPED with no tasks", func() bool {
			s, ok := w.status(t, "kc")
			return ok && s.Connector.State == "STOPPED" && len(s.Tasks) == 0
		})
		var offs struct {
			Offsets []struct {
				Partition map[string]any `json:"partition"`
				Offset    map[string]any `json:"offset"`
			} `json:"offsets"`
		}
		waitFor(t, 30*time.Second, "the source offset", func() bool {
			json.Unmarshal(w.mustCall(t, 200, "GET", "/connectors/kc/offsets", nil), &offs)
			return len(offs.Offsets) == 1 && offs.Offsets[0].Offset["position"] != nil
		})
		if offs.Offsets[0].Partition["filename"] != in {
			t.Fatalf("offsets %+v", offs)
		}
		// Rewind to the start of the 51st line, then resume: lines 50..99 come again.
		pos := int64(0)
		for i := 0; i < 50; i++ {
			pos += int64(len(fmt.Sprintf("l-%d\n", i)))
		}
		body := map[string]any{"offsets": []any{map[string]any{"partition": map[string]any{"filename": in}, "offset": map[string]any{"position": pos}}}}
		b := w.mustCall(t, 200, "PATCH", "/connectors/kc/offsets", body)
		if !strings.Contains(string(b), "altered successfully") {
			t.Fatalf("alter offsets: %s", b)
		}
		w.mustCall(t, 202, "PUT", "/connectors/kc/resume", nil)
		w.waitTaskState(t, "kc", "RUNNING", time.Minute)
		// The source resumed from the rewound position: the topic holds the 100 lines plus 50 again.
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		waitFor(t, 30*time.Second, "150 records in the topic", func() bool {
			ends, err := kadm.NewClient(cl).ListEndOffsets(context.Background(), "kc")
			var n int64
			ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
			return err == nil && n == 150
		})
		w.mustCall(t, 202, "POST", "/connectors/kc/restart?includeTasks=true&onlyFailed=true", nil)
		w.mustCall(t, 204, "DELETE", "/connectors/kc", nil)
		w.mustCall(t, 404, "GET", "/connectors/kc", nil)
	})

	t.Run("terraform", func(t *testing.T) {
		cfg := map[string]string{"connector.class": "FileStreamSink", "file": filepath.Join(files, "tf.txt"), "topics": "kc", "tasks.max": "1"}
		w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "tf", "config": cfg})
		waitFor(t, 30*time.Second, "GET to answer 200", func() bool { code, _ := w.call(t, "GET", "/connectors/tf", nil); return code == 200 })
		var got map[string]string
		json.Unmarshal(w.mustCall(t, 200, "GET", "/connectors/tf/config", nil), &got)
		want := map[string]string{"name": "tf"}
		for k, v := range cfg {
			want[k] = v
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("config read back %v, want exactly what was sent plus name: %v", got, want)
		}
		cfg["tasks.max"] = "2"
		w.mustCall(t, 200, "PUT", "/connectors/tf/config", cfg)
		json.Unmarshal(w.mustCall(t, 200, "GET", "/connectors/tf/config", nil), &got)
		if got["tasks.max"] != "2" {
			t.Fatalf("update not visible: %v", got)
		}
		w.mustCall(t, 204, "DELETE", "/connectors/tf", nil)
		waitFor(t, 30*time.Second, "GET to answer 404", func() bool { code, _ := w.call(t, "GET", "/connectors/tf", nil); return code == 404 })
	})
}

// TestRESTAuthentication runs a worker with basic authentication: writes need the admin role.
func TestRESTAuthentication(t *testing.T) {
	_, addr := startBroker(t)
	// The hashes come from `wasmconnect hash password`, as an operator makes them.
	adminHash, readerHash := hashCLI(t, "password", "s3cret"), hashCLI(t, "password", "look")
	creds := filepath.Join(t.TempDir(), "users")
	os.WriteFile(creds, []byte("admin:"+adminHash+":admin\nreader:"+readerHash+":read\n"), 0o600)
	tokens := filepath.Join(t.TempDir(), "tokens")
	os.WriteFile(tokens, []byte("ci:"+hashCLI(t, "token", "ci-token-1")+":read\n"), 0o600)
	w := startWorkerNoWait(t, "worker", addr, map[string]string{"rest.auth.basic.file": creds, "rest.auth.tokens.file": tokens})
	waitFor(t, time.Minute, "health", func() bool { code, _ := w.call(t, "GET", "/health", nil); return code == 200 })

	do := func(method, path, user, pass string) int {
		req, _ := http.NewRequest(method, w.url+path, strings.NewReader(`{"name":"x","config":{"connector.class":"FileStreamSource","topic":"t","file":"/nope"}}`))
		req.Header.Set("Content-Type", "application/json")
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct{ method, path string }{
		{"POST", "/connectors"}, {"PUT", "/connectors/x/config"}, {"DELETE", "/connectors/x"},
		{"PUT", "/connectors/x/pause"}, {"POST", "/connectors/x/restart"},
	} {
		if got := do(c.method, c.path, "", ""); got != 401 {
			t.Errorf("%s %s without credentials: %d, want 401", c.method, c.path, got)
		}
		if got := do(c.method, c.path, "reader", "look"); got != 403 {
			t.Errorf("%s %s as a read-only user: %d, want 403", c.method, c.path, got)
		}
	}
	if got := do("GET", "/connectors", "reader", "look"); got != 200 {
		t.Errorf("GET /connectors as reader: %d", got)
	}
	if got := do("GET", "/connectors", "admin", "wrong"); got != 401 {
		t.Errorf("wrong password: %d", got)
	}
	for token, want := range map[string]int{"ci-token-1": 200, "ci-token-2": 401} {
		req, _ := http.NewRequest("GET", w.url+"/connectors", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET /connectors with bearer token %s: %d, want %d", token, resp.StatusCode, want)
		}
	}
}

// hashCLI runs `wasmconnect hash kind` with secret on stdin and returns the hash it prints.
func hashCLI(t *testing.T, kind, secret string) string {
	t.Helper()
	cmd := exec.Command(binary, "hash", kind)
	cmd.Stdin = strings.NewReader(secret + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("wasmconnect hash %s: %v", kind, err)
	}
	return strings.TrimSpace(string(out))
}
