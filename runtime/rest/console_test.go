package rest

import (
	"strings"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
)

// GET /session says who the credentials name and whether they may change anything, so the console
// offers actions only to admins; without credentials it is a 401 like any GET.
func TestSession(t *testing.T) {
	hs := newHarness(t)
	hs.expect("GET", "/session", "", 200, `{"auth":false,"role":"admin","may_change":true}`)

	auth := newHarness(t, WithAuth(testAuth(t)))
	for _, c := range []struct {
		name   string
		header map[string][]string
		code   int
		want   string
	}{
		{"admin", basic("alice", "alice-pw"), 200, `{"auth":true,"user":"alice","role":"admin","may_change":true}`},
		{"reader", basic("bob", "bob-pw"), 200, `{"auth":true,"user":"bob","role":"read","may_change":false}`},
		{"read token", bearer(readToken), 200, `{"auth":true,"user":"dash","role":"read","may_change":false}`},
		{"no credentials", nil, 401, ""},
		{"wrong password", basic("alice", "nope"), 401, ""},
	} {
		r := auth.send("GET", "/session", "", c.header)
		if r.code != c.code || (c.want != "" && r.body != c.want) {
			t.Errorf("%s: GET /session = %d %s, want %d %s", c.name, r.code, r.body, c.code, c.want)
		}
	}

	anon := newHarness(t, WithAuth(testAuth(t)), WithAnonymousRead(true))
	anon.expect("GET", "/session", "", 200, `{"auth":true,"role":"read","may_change":false}`)
}

// GET /state-changes answers the history newest first, filtered by ?connector=.
func TestStateChanges(t *testing.T) {
	newHarness(t).expect("GET", "/state-changes", "", 200, `[]`)

	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	zero := 0
	hs := newHarness(t, WithStateHistory(func() []connect.StateChange {
		return []connect.StateChange{
			{Time: at, Connector: "src", State: connect.StateRunning, WorkerID: "a:8083", Generation: 1},
			{Time: at.Add(time.Second), Connector: "snk", Task: &zero, State: connect.StateFailed, WorkerID: "a:8083", Generation: 1, Trace: "boom"},
			{Time: at.Add(2 * time.Second), Connector: "src", Task: &zero, State: connect.StateRunning, WorkerID: "b:8083", Generation: 2},
		}
	}))
	hs.expect("GET", "/state-changes", "", 200, `[`+
		`{"time":"2026-01-02T03:04:07Z","connector":"src","task":0,"state":"RUNNING","worker_id":"b:8083","generation":2},`+
		`{"time":"2026-01-02T03:04:06Z","connector":"snk","task":0,"state":"FAILED","worker_id":"a:8083","generation":1,"trace":"boom"},`+
		`{"time":"2026-01-02T03:04:05Z","connector":"src","state":"RUNNING","worker_id":"a:8083","generation":1}]`)
	hs.expect("GET", "/state-changes?connector=snk", "", 200,
		`[{"time":"2026-01-02T03:04:06Z","connector":"snk","task":0,"state":"FAILED","worker_id":"a:8083","generation":1,"trace":"boom"}]`)
}

// The console's files are served to anyone, even with authentication on (they hold no data), with
// a policy that allows the page nothing but its own files and this worker's API.
func TestConsoleServed(t *testing.T) {
	hs := newHarness(t, WithAuth(testAuth(t)))
	for path, ctype := range map[string]string{
		"/ui": "text/html", "/ui/": "text/html", "/ui/app.js": "text/javascript", "/ui/app.css": "text/css",
	} {
		r := hs.do("GET", path, "")
		if r.code != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), ctype) {
			t.Errorf("GET %s: %d %q, want 200 %s", path, r.code, r.header.Get("Content-Type"), ctype)
		}
		if csp := r.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "connect-src 'self'") {
			t.Errorf("GET %s: Content-Security-Policy %q", path, csp)
		}
	}
	if r := hs.do("GET", "/ui", ""); !strings.Contains(r.body, `src="/ui/app.js"`) {
		t.Errorf("GET /ui does not load the script:\n%s", r.body)
	}
	if r := hs.do("GET", "/ui/nope.js", ""); r.code != 404 {
		t.Errorf("GET /ui/nope.js: %d, want 404", r.code)
	}
	if r := hs.do("HEAD", "/ui/app.js", ""); r.code != 200 {
		t.Errorf("HEAD /ui/app.js: %d", r.code)
	}
	// Revalidation: the ETag of a file answers 304.
	r := hs.do("GET", "/ui/app.js", "")
	if r2 := hs.send("GET", "/ui/app.js", "", map[string][]string{"If-None-Match": {r.header.Get("ETag")}}); r.header.Get("ETag") == "" || r2.code != 304 {
		t.Errorf("GET /ui/app.js with If-None-Match %q: %d, want 304", r.header.Get("ETag"), r2.code)
	}
}
