package rest

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
)

// Request bodies are anyone's bytes. No body on any route with one may make the server fail: a bad
// body is a 4xx with a message, and a 500 (which the server answers for a handler's panic) means the
// server broke, since the fake herder behind it never fails.
func FuzzRequestBodies(f *testing.F) {
	routes := []struct{ method, path string }{
		{"POST", "/connectors"},
		{"PUT", "/connectors/src/config"},
		{"PATCH", "/connectors/src/config"},
		{"PUT", "/connector-plugins/FileStreamSource/config/validate"},
		{"PATCH", "/connectors/src/offsets"},
		{"PUT", "/admin/loggers/org.apache.kafka.connect"},
	}
	for i, body := range []string{
		`{"name":"x","config":{"connector.class":"FileStreamSource","tasks.max":"1"}}`,
		`{"connector.class":"FileStreamSource","tasks.max":"2","file":"/f"}`,
		`{"tasks.max":null,"file":"/g"}`,
		`{"connector.class":"FileStreamSource","topic":"t"}`,
		`{"offsets":[{"partition":{"filename":"/f"},"offset":{"position":1}}]}`,
		`{"level":"DEBUG"}`,
	} {
		f.Add(uint8(i), []byte(body))
	}
	h := newFake()
	h.conns["src"] = &fakeConn{config: map[string]string{"name": "src", "connector.class": "org.example.FileSource"}, target: connect.TargetStarted, tasks: 1}
	srv := New(h, WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))), WithRequestTimeout(2*time.Second))
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		r := routes[int(route)%len(routes)]
		req := httptest.NewRequest(r.method, r.path, strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code >= http.StatusInternalServerError {
			t.Fatalf("%s %s with body %q: %d %s", r.method, r.path, body, rec.Code, rec.Body.Bytes())
		}
	})
}
