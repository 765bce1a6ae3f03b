//go:build e2e

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// healthBody is GET /health with the checks a reader sees.
type healthBody struct {
	Status  string `json:"status"`
	Message string `json:"message"`
	Checks  []struct {
		Name     string   `json:"name"`
		Status   string   `json:"status"`
		Detail   string   `json:"detail"`
		Problems []string `json:"problems"`
	} `json:"checks"`
}

// configProblems returns the problems of the "config topic" check of GET /health, and whether the
// worker answered 200.
func (w *worker) configProblems(t testing.TB) ([]string, bool) {
	t.Helper()
	code, b := w.call(t, "GET", "/health", nil)
	var h healthBody
	if err := json.Unmarshal(b, &h); err != nil {
		return nil, false
	}
	for _, c := range h.Checks {
		if c.Name == "config topic" {
			return c.Problems, code == 200
		}
	}
	return nil, code == 200
}

// flows creates a file pipeline and waits until its lines arrive.
func flows(t *testing.T, w *worker, dir, name string) (in, out string) {
	t.Helper()
	in, out = pipeline(t, w, dir, name, name+"-topic")
	writeLines(t, in, name+"-", 0, 100)
	waitFor(t, time.Minute, name+" lines to arrive", func() bool { return countLines(out) >= 100 })
	return in, out
}

// A connector name or config that the internal topics cannot hold is refused before anything is
// written: a 32,768-byte name is a 400 naming the limit, a config over the config topic's
// max.message.bytes a 413 with both sizes, on the leader and on a follower that forwards. Before,
// the name was accepted (201) and then no worker could form the group again.
func TestOversizedConnectorInputIsRefused(t *testing.T) {
	_, addr := startBroker(t)
	files := t.TempDir()
	props := map[string]string{"plugin.fs.allow": files}
	ws := []*worker{startWorker(t, "worker1", addr, props), startWorker(t, "worker2", addr, props)}

	source := map[string]string{"connector.class": "FileStreamSource", "file": files + "/x.txt", "topic": "x"}
	for _, w := range ws {
		code, b := w.call(t, "POST", "/connectors", map[string]any{"name": strings.Repeat("n", 32768), "config": source})
		if code != 400 || !strings.Contains(string(b), "Connector name is 32768 bytes long; the limit is 32733 bytes") {
			t.Errorf("%s: a 32768-byte name: %d %.300s", w.name, code, b)
		}

		big := map[string]string{"x.blob": strings.Repeat("b", 1100000)}
		for k, v := range source {
			big[k] = v
		}
		code, b = w.call(t, "POST", "/connectors", map[string]any{"name": "big", "config": big})
		if code != 413 || !strings.Contains(string(b), "more than the 1048588 bytes the topic holds (max.message.bytes of topic connect-configs)") {
			t.Errorf("%s: a 1.1 MB config: %d %.300s", w.name, code, b)
		}
		code, b = w.call(t, "PUT", "/connectors/big/config", big)
		if code != 413 {
			t.Errorf("%s: PUT of a 1.1 MB config: %d %.300s", w.name, code, b)
		}
	}

	// The cluster goes on: a pipeline is created and runs, and DELETE works.
	flows(t, ws[1], files, "after")
	ws[0].mustCall(t, 204, "DELETE", "/connectors/after-source", nil)
	waitFor(t, 30*time.Second, "after-source to be gone", func() bool {
		code, _ := ws[1].call(t, "GET", "/connectors/after-source", nil)
		return code == 404
	})
	var names []string
	if err := json.Unmarshal(ws[1].mustCall(t, 200, "GET", "/connectors", nil), &names); err != nil || len(names) != 1 || names[0] != "after-sink" {
		t.Errorf("connectors %v (%v), want [after-sink]", names, err)
	}
	for _, w := range ws {
		if problems, ok := w.configProblems(t); !ok || len(problems) != 0 {
			t.Errorf("%s: /health healthy %v, config problems %q", w.name, ok, problems)
		}
	}
}

// A record in the config topic that cannot be read is skipped: every worker stays in the group
// and runs the other connectors, lists the record in GET /health with its offset, after a restart
// too, and DELETE removes a skipped connector. The records are written with a plain Kafka client:
// garbage, and the 32,768-byte name that a worker used to accept and could then not assign.
func TestUnreadableConfigRecordsAreSkipped(t *testing.T) {
	_, addr := startBroker(t)
	files := t.TempDir()
	props := map[string]string{"plugin.fs.allow": files}
	ws := []*worker{startWorker(t, "worker1", addr, props), startWorker(t, "worker2", addr, props)}
	in, out := flows(t, ws[0], files, "before")

	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	long := strings.Repeat("n", 32768)
	var offsets []int64
	for _, kv := range [][2]string{
		{"connector-garbage", "not json at all"},
		{"connector-" + long, fmt.Sprintf(`{"properties":{"connector.class":"FileStreamSource","file":%q,"topic":"long","name":%q}}`, files+"/long.txt", long)},
	} {
		r, err := cl.ProduceSync(ctx, &kgo.Record{Topic: "connect-configs", Key: []byte(kv[0]), Value: []byte(kv[1])}).First()
		if err != nil {
			t.Fatal(err)
		}
		offsets = append(offsets, r.Offset)
	}
	listed := func(w *worker) bool {
		problems, healthy := w.configProblems(t)
		return healthy && len(problems) == 2 &&
			strings.HasPrefix(problems[0], fmt.Sprintf(`offset %d, key "connector-garbage"`, offsets[0])) &&
			strings.HasPrefix(problems[1], fmt.Sprintf(`offset %d, key "connector-nnn`, offsets[1]))
	}
	for _, w := range ws {
		waitFor(t, 30*time.Second, w.name+" to list both records in /health", func() bool { return listed(w) })
	}

	// The group is whole: a new pipeline is created through either worker and runs, the old one
	// still moves data.
	flows(t, ws[1], files, "after")
	writeLines(t, in, "before-", 100, 200)
	waitFor(t, time.Minute, "the first pipeline to go on", func() bool { return countLines(out) >= 200 })

	// A worker that restarts reads the records again, skips them again and joins again.
	ws[1].stop(syscall.SIGTERM)
	ws[1].start()
	ws[1].waitReady(t)
	waitFor(t, 30*time.Second, "worker2 to list both records after its restart", func() bool { return listed(ws[1]) })

	// DELETE removes a skipped connector, on any worker.
	ws[1].mustCall(t, 204, "DELETE", "/connectors/garbage", nil)
	ws[0].mustCall(t, 204, "DELETE", "/connectors/"+long, nil)
	for _, w := range ws {
		waitFor(t, 30*time.Second, w.name+" to list no skipped record", func() bool {
			problems, healthy := w.configProblems(t)
			return healthy && len(problems) == 0
		})
	}
	ws[0].mustCall(t, 404, "DELETE", "/connectors/garbage", nil)
}
