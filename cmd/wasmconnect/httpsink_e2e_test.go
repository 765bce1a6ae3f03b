//go:build e2e

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// recordAPI is an HTTP API taking JSON arrays of {"id":n}: it counts the ids of the requests it
// answered 2xx, answers 500 to every failEvery-th request, and 400 to a request holding badID.
type recordAPI struct {
	*httptest.Server
	mu                sync.Mutex
	failEvery, badID  int
	requests, errors5 int
	ids               map[int]int
	first, last       time.Time
}

func newRecordAPI(t testing.TB, failEvery, badID int) *recordAPI {
	a := &recordAPI{failEvery: failEvery, badID: badID, ids: map[int]int{}}
	a.Server = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.Close)
	return a
}

func (a *recordAPI) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var recs []struct{ ID int }
	if err := json.Unmarshal(body, &recs); err != nil {
		http.Error(w, "not a JSON array of records: "+err.Error(), 422)
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.requests++
	if a.failEvery > 0 && a.requests%a.failEvery == 0 {
		a.errors5++
		http.Error(w, "injected failure", 500)
		return
	}
	for _, rec := range recs {
		if a.badID >= 0 && rec.ID == a.badID {
			http.Error(w, fmt.Sprintf("bad id %d", rec.ID), 400)
			return
		}
	}
	now := time.Now()
	if a.first.IsZero() {
		a.first = now
	}
	a.last = now
	for _, rec := range recs {
		a.ids[rec.ID]++
	}
	w.WriteHeader(204)
}

func (a *recordAPI) delivered() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.ids)
}

func (a *recordAPI) addr() string { return strings.TrimPrefix(a.URL, "http://") }

// produceIDs writes n records {"id":i} to topic.
func produceIDs(t testing.TB, addr, topic string, n int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	for i := range n {
		cl.Produce(ctx, &kgo.Record{Value: fmt.Appendf(nil, `{"id":%d}`, i)}, func(_ *kgo.Record, err error) {
			if err != nil {
				t.Error(err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

func httpSinkConfig(api *recordAPI, batch int) map[string]string {
	return map[string]string{
		"connector.class": "io.confluent.connect.http.HttpSinkConnector", "topics": "events", "tasks.max": "1",
		"http.api.url": api.URL + "/events", "batch.max.size": fmt.Sprint(batch), "batch.json.as.array": "true",
		"retry.backoff.ms": "10", "value.converter": "org.apache.kafka.connect.json.JsonConverter",
		"value.converter.schemas.enable": "false",
	}
}

// TestHTTPSinkDeliversEachBatchOnce sends 10,000 records in batches of 100 to an API that fails
// every 7th request with a 500 and rejects the batch holding record 4242 with a 400: every other
// record arrives in exactly one successful batch, and record 4242 goes to the dead letter queue
// with the status and body in its error headers.
func TestHTTPSinkDeliversEachBatchOnce(t *testing.T) {
	const n, bad = 10_000, 4242
	api := newRecordAPI(t, 7, bad)
	_, addr := startBroker(t)
	produceIDs(t, addr, "events", n)
	w := startWorker(t, "worker", addr, map[string]string{"plugin.net.allow": api.addr()})
	cfg := httpSinkConfig(api, 100)
	for k, v := range map[string]string{"errors.tolerance": "all", "errors.deadletterqueue.topic.name": "events-dlq",
		"errors.deadletterqueue.topic.replication.factor": "1", "errors.deadletterqueue.context.headers.enable": "true"} {
		cfg[k] = v
	}
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "http", "config": cfg})
	waitFor(t, time.Minute, fmt.Sprintf("%d records delivered", n-1), func() bool { return api.delivered() >= n-1 })
	dlq := consumeN(t, addr, "events-dlq", 1, 30*time.Second)
	time.Sleep(500 * time.Millisecond) // anything sent twice would come now
	api.mu.Lock()
	defer api.mu.Unlock()
	for id := range n {
		if c := api.ids[id]; (id == bad && c != 0) || (id != bad && c != 1) {
			t.Errorf("record %d arrived in %d successful batches", id, c)
		}
	}
	if api.errors5 == 0 {
		t.Errorf("no 500 was injected in %d requests", api.requests)
	}
	if len(dlq) != 1 || string(dlq[0].Value) != fmt.Sprintf(`{"id":%d}`, bad) {
		t.Fatalf("dead letter queue: %v", dlq)
	}
	headers := map[string]string{}
	for _, h := range dlq[0].Headers {
		headers[h.Key] = string(h.Value)
	}
	msg := headers["__connect.errors.exception.message"]
	if !strings.Contains(msg, "HTTP 400 Bad Request from POST "+api.URL+"/events: bad id 4242") || headers["__connect.errors.stage"] != "TASK_PUT" {
		t.Errorf("dead letter headers: %v", headers)
	}
	if s := w.mustStatus(t, "http"); s.Tasks[0].State != "RUNNING" {
		t.Errorf("task %+v", s.Tasks[0])
	}
	t.Logf("%d requests, %d injected 500s", api.requests, api.errors5)
}

// BenchmarkHTTPSinkVsLoopback measures the HTTP sink's records/s into the test API (from its first
// to its last successful request) next to the API's own loopback ceiling in the same run: a Go
// client in this process posting the same batches over one kept-alive connection, as one task does.
//
//	go test -tags e2e -run '^$' -bench HTTPSinkVsLoopback -benchtime 1x ./cmd/wasmconnect/
func BenchmarkHTTPSinkVsLoopback(b *testing.B) {
	const n = 200_000
	_, addr := startBroker(b)
	produceIDs(b, addr, "events", n)
	w := startWorker(b, "worker", addr, map[string]string{"plugin.net.allow": "127.0.0.1:*"})
	waitCompiled(b, w)
	for _, batch := range []int{1, 100, 1000} {
		records := n
		if batch == 1 {
			records = 20_000 // one request per record: the rest would take long
		}
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			api := newRecordAPI(b, 0, -1)
			cfg := httpSinkConfig(api, batch)
			name := fmt.Sprintf("http-%d", batch)
			w.mustCall(b, 201, "POST", "/connectors", map[string]any{"name": name, "config": cfg})
			waitFor(b, 5*time.Minute, "delivery", func() bool { return api.delivered() >= records })
			w.mustCall(b, 204, "DELETE", "/connectors/"+name, nil)
			api.mu.Lock()
			sink := float64(len(api.ids)) / api.last.Sub(api.first).Seconds()
			api.mu.Unlock()

			ceiling := newRecordAPI(b, 0, -1)
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			var body bytes.Buffer
			for i := 0; i < records; i += batch {
				body.Reset()
				body.WriteByte('[')
				for j := i; j < min(i+batch, records); j++ {
					if j > i {
						body.WriteByte(',')
					}
					fmt.Fprintf(&body, `{"id":%d}`, j)
				}
				body.WriteByte(']')
				resp, err := client.Post(ceiling.URL+"/events", "application/json", bytes.NewReader(body.Bytes()))
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			ceiling.mu.Lock()
			loop := float64(len(ceiling.ids)) / ceiling.last.Sub(ceiling.first).Seconds()
			ceiling.mu.Unlock()
			b.ReportMetric(sink, "sink-records/s")
			b.ReportMetric(loop, "loopback-records/s")
			b.ReportMetric(sink/loop, "sink/loopback")
		})
	}
}
