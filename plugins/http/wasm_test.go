//go:build !wasip1

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
	"github.com/wasmconnect/wasmconnect/wasmhost"
	"github.com/wasmconnect/wasmconnect/wasmhost/hosttest"
	"github.com/wasmconnect/wasmconnect/wasmhost/netgrant"
	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

// The tests in this file build this package to WebAssembly and run it in the worker's plugin host,
// which grants the network of the test's HTTP server only, against that server.

func TestMain(m *testing.M) {
	code := m.Run()
	pluginbuild.Cleanup()
	os.Exit(code)
}

const class = "io.confluent.connect.http.HttpSinkConnector"

// apiServer is an HTTP API that records the requests it answered 2xx and answers what its answer
// func says (200 when it is nil).
type apiServer struct {
	*httptest.Server
	mu       sync.Mutex
	answer   func(n int, r *http.Request, body string) (status int, delay time.Duration)
	requests int      // every request
	ok       []string // the bodies answered 2xx
	headers  []http.Header
}

func newAPIServer(t testing.TB) *apiServer {
	a := &apiServer{}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		a.mu.Lock()
		a.requests++
		n, answer := a.requests, a.answer
		a.mu.Unlock()
		status, delay := 200, time.Duration(0)
		if answer != nil {
			status, delay = answer(n, r, string(b))
		}
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		if status/100 == 2 {
			a.mu.Lock()
			a.ok = append(a.ok, r.Method+" "+string(b))
			a.headers = append(a.headers, r.Header.Clone())
			a.mu.Unlock()
		}
		w.WriteHeader(status)
		fmt.Fprintf(w, "answer %d to request %d", status, n)
	}))
	t.Cleanup(a.Close)
	return a
}

func (a *apiServer) delivered() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.ok...)
}

func (a *apiServer) addr() string { return strings.TrimPrefix(a.URL, "http://") }

type fixture struct {
	t    testing.TB
	h    *wasmhost.Host
	logs *hosttest.Log
}

// newFixture is a plugin host with this module whose plugin.net.allow is grant.
func newFixture(t testing.TB, grant string) *fixture {
	t.Helper()
	g, err := netgrant.Parse(grant)
	if err != nil {
		t.Fatal(err)
	}
	h, logs := hosttest.New(t, wasmhost.Config{PluginPath: []string{pluginbuild.DirOf(t, "plugins/http")}, NetAllow: g})
	return &fixture{t: t, h: h, logs: logs}
}

func (f *fixture) open(cfg map[string]string) (*wasmhost.Object, error) {
	f.t.Helper()
	p, err := f.h.Resolve(class, wire.KindSink)
	if err != nil {
		f.t.Fatal(err)
	}
	ctx := context.Background()
	sess := f.h.NewSession(wasmhost.Env{Connector: "http"})
	f.t.Cleanup(func() { sess.Close(ctx) })
	return sess.Open(ctx, p, wire.RoleTask, cfg)
}

func (f *fixture) task(cfg map[string]string) *wasmhost.Object {
	f.t.Helper()
	o, err := f.open(cfg)
	if err != nil {
		f.t.Fatal(err)
	}
	return o
}

// records are JSON values {"id":i} for offsets from..to-1 of topic t partition 0.
func records(from, to int) []wire.Record {
	var out []wire.Record
	for i := from; i < to; i++ {
		out = append(out, wire.Record{Topic: "t", Offset: int64(i), Value: wire.JSON(nil, []byte(fmt.Sprintf(`{"id":%d}`, i)))})
	}
	return out
}

func guestMessage(err error) string {
	var ge *wasmhost.GuestError
	if errors.As(err, &ge) {
		return ge.Message
	}
	if err == nil {
		return "<nil>"
	}
	return "not a guest error: " + err.Error()
}

func isRetriable(err error) bool {
	var ge interface{ IsRetriable() bool }
	return errors.As(err, &ge) && ge.IsRetriable()
}

// TestBatchesAsJSONArrays checks batch.max.size with batch.json.as.array, the method, the headers
// and basic authentication.
func TestBatchesAsJSONArrays(t *testing.T) {
	api := newAPIServer(t)
	f := newFixture(t, api.addr())
	task := f.task(map[string]string{"http.api.url": api.URL + "/in", "request.method": "put", "batch.max.size": "3", "batch.json.as.array": "true",
		"headers": "X-One: 1|X-Two:two", "auth.type": "BASIC", "connection.user": "u", "connection.password": "p"})
	recs := records(0, 7)
	recs = append(recs, wire.Record{Topic: "t", Offset: 7, Value: wire.String(`say "hi"`)}, wire.Record{Topic: "t", Offset: 8}) // a tombstone is ignored
	if err := task.Put(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	want := []string{`PUT [{"id":0},{"id":1},{"id":2}]`, `PUT [{"id":3},{"id":4},{"id":5}]`, `PUT [{"id":6},"say \"hi\""]`}
	if got := api.delivered(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("delivered:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	h := api.headers[0]
	if h.Get("X-One") != "1" || h.Get("X-Two") != "two" || h.Get("Content-Type") != "application/json" || h.Get("Authorization") != "Basic dTpw" {
		t.Errorf("headers %v", h)
	}
}

// TestOneRecordPerRequest checks the default of one record per request, their text, and bearer
// authentication.
func TestOneRecordPerRequest(t *testing.T) {
	api := newAPIServer(t)
	f := newFixture(t, api.addr())
	task := f.task(map[string]string{"http.api.url": api.URL, "auth.type": "bearer", "bearer.token": "tok"})
	if err := task.Put(context.Background(), append(records(0, 2), wire.Record{Topic: "t", Offset: 2, Value: wire.String("plain")})); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(api.delivered(), "|"); got != `POST {"id":0}|POST {"id":1}|POST plain` {
		t.Fatalf("delivered %s", got)
	}
	if h := api.headers[2]; h.Get("Authorization") != "Bearer tok" || h.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Errorf("headers %v", h)
	}
}

// TestRetriesServerErrorsAndTimeouts checks that 500s, 503s and a response slower than
// http.request.timeout.ms are retried until the API takes the request, which it then has once.
func TestRetriesServerErrorsAndTimeouts(t *testing.T) {
	api := newAPIServer(t)
	api.answer = func(n int, _ *http.Request, _ string) (int, time.Duration) {
		switch n {
		case 1:
			return 500, 0
		case 2:
			return 503, 0
		case 3:
			return 200, 2 * time.Second // after the request timeout: not delivered
		}
		return 200, 0
	}
	f := newFixture(t, api.addr())
	task := f.task(map[string]string{"http.api.url": api.URL, "batch.max.size": "10", "batch.json.as.array": "true",
		"retry.backoff.ms": "10", "http.request.timeout.ms": "300"})
	start := time.Now()
	if err := task.Put(context.Background(), records(0, 3)); err != nil {
		t.Fatal(err)
	}
	if got := api.delivered(); len(got) != 1 || got[0] != `POST [{"id":0},{"id":1},{"id":2}]` || api.requests != 4 {
		t.Fatalf("%d requests, delivered %v", api.requests, got)
	}
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Errorf("the PUT took %v: the slow response was waited for", d)
	}
	for _, want := range []string{"HTTP 500 Internal Server Error", "HTTP 503 Service Unavailable", "no response within 300ms", "retry 3 of 10"} {
		if !strings.Contains(f.logs.String(), want) {
			t.Errorf("log lacks %q", want)
		}
	}
}

// TestRetriesRunOut checks that a request that keeps failing fails the PUT after max.retries, with
// the last response in the error.
func TestRetriesRunOut(t *testing.T) {
	api := newAPIServer(t)
	api.answer = func(int, *http.Request, string) (int, time.Duration) { return 502, 0 }
	f := newFixture(t, api.addr())
	task := f.task(map[string]string{"http.api.url": api.URL, "max.retries": "2", "retry.backoff.ms": "1"})
	err := task.Put(context.Background(), records(0, 1))
	want := "POST " + api.URL + " failed after 2 retries (max.retries): HTTP 502 Bad Gateway from POST " + api.URL + ": answer 502 to request 3"
	if msg := guestMessage(err); msg != want || isRetriable(err) || api.requests != 3 {
		t.Fatalf("%d requests; PUT: %s (retriable %v)\nwant %s", api.requests, msg, isRetriable(err), want)
	}
}

// TestRejectedRecordsAreFoundAndOthersSentOnce checks that a 400 fails the PUT with the status and
// body, after the other requests of the PUT were sent, and that when the worker then puts the
// batch again and its records one at a time (errors.tolerance=all), the records already delivered
// are not sent again and only the rejected one fails.
func TestRejectedRecordsAreFoundAndOthersSentOnce(t *testing.T) {
	api := newAPIServer(t)
	api.answer = func(_ int, _ *http.Request, body string) (int, time.Duration) {
		if strings.Contains(body, `"id":4}`) {
			return 400, 0
		}
		return 200, 0
	}
	f := newFixture(t, api.addr())
	task := f.task(map[string]string{"http.api.url": api.URL, "batch.max.size": "3", "batch.json.as.array": "true"})
	ctx := context.Background()
	recs := records(0, 9)
	err := task.Put(ctx, recs)
	want := "HTTP 400 Bad Request from POST " + api.URL + ": answer 400 to request 2"
	if msg := guestMessage(err); msg != want || isRetriable(err) {
		t.Fatalf("PUT: %s\nwant %s", msg, want)
	}
	// The worker's isolation puts the whole batch again first: the rejected request is the only
	// one sent again.
	if msg := guestMessage(task.Put(ctx, recs)); !strings.HasPrefix(msg, "HTTP 400 Bad Request") || len(api.delivered()) != 2 {
		t.Fatalf("PUT again: %s, %d delivered", msg, len(api.delivered()))
	}
	var failed []int
	for i := range recs {
		if err := task.Put(ctx, recs[i:i+1]); err != nil {
			if !strings.HasPrefix(guestMessage(err), "HTTP 400 Bad Request") {
				t.Errorf("record %d: %v", i, err)
			}
			failed = append(failed, i)
		}
	}
	got := api.delivered()
	wantDelivered := []string{`POST [{"id":0},{"id":1},{"id":2}]`, `POST [{"id":6},{"id":7},{"id":8}]`, `POST [{"id":3}]`, `POST [{"id":5}]`}
	if fmt.Sprint(failed) != "[4]" || strings.Join(got, "\n") != strings.Join(wantDelivered, "\n") {
		t.Fatalf("failed %v, delivered:\n%s\nwant\n%s", failed, strings.Join(got, "\n"), strings.Join(wantDelivered, "\n"))
	}
	// Flushed records are forgotten: put again (a rebalance), they are sent again.
	if err := task.Flush(ctx, []wire.TopicPartitionOffset{{Topic: "t", Partition: 0, Offset: 9}}); err != nil {
		t.Fatal(err)
	}
	if err := task.Put(ctx, recs[:1]); err != nil || len(api.delivered()) != 5 {
		t.Fatalf("after flush: %v, %d delivered", err, len(api.delivered()))
	}
}

// TestNetworkGrant checks that the plugin reaches only what plugin.net.allow grants.
func TestNetworkGrant(t *testing.T) {
	api, other := newAPIServer(t), newAPIServer(t)
	f := newFixture(t, other.addr())
	task := f.task(map[string]string{"http.api.url": api.URL, "max.retries": "0"})
	err := task.Put(context.Background(), records(0, 1))
	want := fmt.Sprintf("plugin.net.allow does not grant %s (granted: %s)", api.addr(), other.addr())
	if msg := guestMessage(err); !strings.Contains(msg, want) || api.requests != 0 {
		t.Fatalf("PUT: %s\nwant it to contain %s", msg, want)
	}
}

// TestBadConfigs checks the messages of /validate and that a task refuses the same configs.
func TestBadConfigs(t *testing.T) {
	f := newFixture(t, "")
	p, err := f.h.Resolve("HttpSink", wire.KindSink)
	if err != nil || p.Class != class {
		t.Fatalf("%+v %v", p, err)
	}
	for _, tc := range []struct {
		cfg       map[string]string
		key, want string
	}{
		{map[string]string{}, "http.api.url", `Missing required configuration "http.api.url" which has no default value.`},
		{map[string]string{"http.api.url": "localhost:80"}, "http.api.url", "Invalid value localhost:80 for configuration http.api.url: not an http:// URL with a host"},
		{map[string]string{"http.api.url": "https://api.example"}, "http.api.url",
			"Invalid value https://api.example for configuration http.api.url: https is not supported yet (the plugin has no trust store): use http://"},
		{map[string]string{"http.api.url": "http://a", "request.method": "GET"}, "request.method", "Invalid value GET for configuration request.method: String must be one of (case insensitive): POST, PUT, PATCH"},
		{map[string]string{"http.api.url": "http://a", "auth.type": "BASIC"}, "connection.user", "connection.user is required with auth.type=BASIC"},
		{map[string]string{"http.api.url": "http://a", "auth.type": "OAUTH2"}, "auth.type",
			"auth.type=OAUTH2 is not supported by this plugin: use BASIC, BEARER, or an Authorization header in headers"},
		{map[string]string{"http.api.url": "http://a", "headers": "X-A:1|nocolon"}, "headers",
			`Invalid value for configuration headers: "nocolon" is not a header Name:Value (headers are separated by "|")`},
		{map[string]string{"http.api.url": "http://a", "batch.max.size": "0"}, "batch.max.size", "Invalid value 0 for configuration batch.max.size: Value must be at least 1"},
		{map[string]string{"http.api.url": "http://a", "retry.on.status.codes": "500-4"}, "retry.on.status.codes",
			`Invalid value 500-4 for configuration retry.on.status.codes: "500-4" is not a status code or a range of them`},
		{map[string]string{"http.api.url": "http://a", "behavior.on.null.values": "delete"}, "behavior.on.null.values",
			"behavior.on.null.values=delete is not supported by this plugin: use ignore or fail"},
	} {
		errs, err := f.h.Validate(context.Background(), p, tc.cfg)
		if err != nil || len(errs[tc.key]) == 0 || errs[tc.key][0] != tc.want {
			t.Errorf("Validate %v: %v %v\nwant %s: %s", tc.cfg, errs, err, tc.key, tc.want)
		}
		if _, err := f.open(tc.cfg); !strings.Contains(guestMessage(err), tc.want) {
			t.Errorf("OPEN task %v: %s\nwant it to contain %s", tc.cfg, guestMessage(err), tc.want)
		}
	}
}

// BenchmarkPut measures PUTs of 1,000 records through the boundary to a local API, one request per
// PUT (a JSON array) or one per record.
func BenchmarkPut(b *testing.B) {
	for _, batch := range []int{1000, 1} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			api := newAPIServer(b)
			f := newFixture(b, api.addr())
			task := f.task(map[string]string{"http.api.url": api.URL, "batch.max.size": fmt.Sprint(batch), "batch.json.as.array": "true"})
			recs := records(0, 1000)
			b.ResetTimer()
			for i := range b.N {
				for j := range recs {
					recs[j].Offset = int64(i*len(recs) + j)
				}
				if err := task.Put(context.Background(), recs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(recs))/b.Elapsed().Seconds(), "records/s")
		})
	}
}
