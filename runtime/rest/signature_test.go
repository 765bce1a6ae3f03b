package rest

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

// signed sends a request signed with key (after mutate, which may tamper with it).
func (hs *harness) signed(method, path, body string, key []byte, mutate func(*http.Request)) result {
	hs.t.Helper()
	req, err := http.NewRequest(method, hs.srv.URL+path, strings.NewReader(body))
	if err != nil {
		hs.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	SignRequest(req, key, []byte(body))
	if mutate != nil {
		mutate(req)
	}
	return hs.roundTrip(req)
}

func TestInternalSignature(t *testing.T) {
	var key atomic.Pointer[[]byte]
	key.Store(&testKey)
	keyFunc := func() []byte { return *key.Load() }
	hs := newHarness(t, WithAuth(testAuth(t)), WithInternalKey(keyFunc))
	create := `{"name":"fwd","config":{"connector.class":"org.example.FileSink"}}`

	// A signed forwarded request needs no user credentials: the forwarding worker checked them.
	r := hs.signed("POST", "/connectors?forward=true", create, testKey, nil)
	if r.code != 201 {
		t.Fatalf("signed: %d %s", r.code, r.body)
	}
	if p, ok := PrincipalFromContext(hs.h.lastReq.Context()); !ok || !p.Internal || p.Role != RoleAdmin {
		t.Errorf("principal %+v", p)
	}
	// Signed requests without a body, and with a trailing slash, verify too.
	if r := hs.signed("DELETE", "/connectors/fwd/?forward=false", "", testKey, nil); r.code != 204 {
		t.Errorf("signed delete: %d %s", r.code, r.body)
	}
	if r := hs.signed("GET", "/connectors?forward=true", "", testKey, nil); r.code != 200 {
		t.Errorf("signed get: %d %s", r.code, r.body)
	}

	invalid := errJSON(403, "Internal request contained invalid signature.")
	for _, tc := range []struct {
		name, method, path, body string
		key                      []byte
		mutate                   func(*http.Request)
		code                     int
		msg                      string
	}{
		{"forged with another key", "POST", "/connectors?forward=true", create, []byte("not the key"), nil, 403, invalid},
		{"body changed", "POST", "/connectors?forward=true", create, testKey, func(r *http.Request) {
			b := strings.Replace(create, "fwd", "evil", 1)
			r.Body, r.ContentLength = io.NopCloser(strings.NewReader(b)), int64(len(b))
		}, 403, invalid},
		{"replayed on another path", "DELETE", "/connectors/src?forward=true", "", testKey, func(r *http.Request) {
			r.URL.Path = "/connectors/snk"
		}, 403, invalid},
		{"replayed with another method", "DELETE", "/connectors/src/offsets?forward=true", "", testKey, func(r *http.Request) {
			r.Method = "PUT"
			r.URL.Path = "/connectors/src/stop"
		}, 403, invalid},
		{"not base64", "DELETE", "/connectors/src?forward=true", "", testKey, func(r *http.Request) {
			r.Header.Set(SignatureHeader, "%%%")
		}, 403, invalid},
		{"expired", "DELETE", "/connectors/src?forward=true", "", testKey, func(r *http.Request) {
			ts := strconv.FormatInt(time.Now().Add(-10*time.Minute).UnixMilli(), 10)
			r.Header.Set(SignatureTimestampHeader, ts)
			r.Header.Set(SignatureHeader, base64.StdEncoding.EncodeToString(signature(testKey, "DELETE", r.URL.RequestURI(), ts, nil)))
		}, 403, ""},
		{"missing signature", "DELETE", "/connectors/src?forward=true", "", testKey, func(r *http.Request) {
			r.Header.Del(SignatureHeader)
			r.Header.Del(SignatureAlgorithmHeader)
		}, 400, errJSON(400, "Internal request missing required signature")},
		{"missing algorithm", "DELETE", "/connectors/src?forward=true", "", testKey, func(r *http.Request) {
			r.Header.Del(SignatureAlgorithmHeader)
		}, 400, errJSON(400, "Internal request missing required signature")},
		{"other algorithm", "DELETE", "/connectors/src", "", testKey, func(r *http.Request) {
			r.Header.Set(SignatureAlgorithmHeader, "HmacSHA1")
		}, 400, errJSON(400, "This worker does not support the 'HmacSHA1' signature algorithm; it verifies HmacSHA256")},
		{"missing timestamp (a Java worker's body-only signature)", "DELETE", "/connectors/src?forward=true", "", testKey, func(r *http.Request) {
			r.Header.Del(SignatureTimestampHeader)
			mac := signature(testKey, "", "", "", nil) // whatever: refused before the check
			r.Header.Set(SignatureHeader, base64.StdEncoding.EncodeToString(mac))
		}, 400, errJSON(400, "Internal request missing a valid X-Connect-Request-Timestamp header (milliseconds since the epoch)")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs.t = t
			hs.h.calls = nil
			r := hs.signed(tc.method, tc.path, tc.body, tc.key, tc.mutate)
			if r.code != tc.code || (tc.msg != "" && r.body != tc.msg) {
				t.Errorf("got %d %s", r.code, r.body)
			}
			if tc.name == "expired" && !strings.Contains(r.body, "Internal request signature has expired") {
				t.Errorf("got %s", r.body)
			}
			if len(hs.h.calls) != 0 {
				t.Errorf("herder called: %v", hs.h.calls)
			}
		})
	}
	hs.t = t

	// A forward parameter with no signature at all is refused, even with user credentials.
	if r := hs.send("DELETE", "/connectors/src?forward=true", "", basic("alice", "alice-pw")); r.code != 400 {
		t.Errorf("unsigned forward: %d %s", r.code, r.body)
	}
	// Requests that do not claim to come from a worker are authenticated as usual.
	if r := hs.send("DELETE", "/connectors/src", "", nil); r.code != 401 {
		t.Errorf("plain request: %d", r.code)
	}
	// Before the worker has a key: 503.
	empty := []byte(nil)
	key.Store(&empty)
	r = hs.signed("DELETE", "/connectors/src?forward=true", "", testKey, nil)
	if r.code != 503 || !strings.Contains(r.body, "has not read a session key") {
		t.Errorf("no key: %d %s", r.code, r.body)
	}
}

// Without WithInternalKey, "forward" and signature headers mean nothing (Kafka's default).
func TestNoInternalKey(t *testing.T) {
	hs := newHarness(t)
	if r := hs.send("DELETE", "/connectors/src?forward=true", "", http.Header{SignatureHeader: {"x"}}); r.code != 204 {
		t.Errorf("%d %s", r.code, r.body)
	}
}

// forwardingHerder is a follower: creates, config puts and deletes are the leader's to serve.
type forwardingHerder struct {
	*fakeHerder
	leader   string
	caughtUp int // CatchUp calls
}

func (f *forwardingHerder) notLeader() error {
	return &connect.RequestTargetError{Reason: "not the leader", URL: f.leader}
}

func (f *forwardingHerder) CreateConnector(ctx context.Context, name string, cfg map[string]string, initial connect.TargetState) (connect.ConnectorInfo, error) {
	return connect.ConnectorInfo{}, f.notLeader()
}

func (f *forwardingHerder) DeleteConnector(ctx context.Context, name string) error {
	return f.notLeader()
}

func (f *forwardingHerder) PutConnectorConfig(ctx context.Context, name string, cfg map[string]string) (connect.ConnectorInfo, bool, error) {
	return connect.ConnectorInfo{}, false, f.notLeader()
}

func (f *forwardingHerder) CatchUp(context.Context) error {
	f.caughtUp++
	return nil
}

func TestForwarder(t *testing.T) {
	quiet := WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	auth := testAuth(t)
	keyFunc := func() []byte { return testKey }

	leader := newHarness(t, WithAuth(auth), WithInternalKey(keyFunc))
	follower := newHarness(t)
	fh := &forwardingHerder{fakeHerder: follower.h, leader: leader.srv.URL + "/"}
	fwd := &Forwarder{Key: keyFunc}
	follower.srv.Close()
	follower.srv = httptest.NewServer(New(fh, quiet, WithAuth(auth), WithInternalKey(keyFunc), WithForwarder(fwd)))
	defer follower.srv.Close()

	// The leader's answer comes back as it was: 201, Location and body.
	r := follower.send("POST", "/connectors/", `{"name":"my conn","config":{"connector.class":"org.example.FileSink"}}`, basic("alice", "alice-pw"))
	if r.code != 201 || r.header.Get("Location") != "/connectors/my%20conn" ||
		r.body != `{"name":"my conn","config":{"connector.class":"org.example.FileSink","name":"my conn"},"tasks":[],"type":"sink"}` {
		t.Errorf("forwarded create: %d %q %s", r.code, r.header.Get("Location"), r.body)
	}
	// The follower read its topics to their end before it answered the leader's success.
	if fh.caughtUp != 1 {
		t.Errorf("CatchUp called %d times after a forwarded create, want 1", fh.caughtUp)
	}
	lr := leader.h.lastReq
	if lr == nil || lr.URL.Query().Get("forward") != "true" || lr.Header.Get("Authorization") == "" || lr.Header.Get(SignatureHeader) == "" {
		t.Fatalf("leader got %+v", lr)
	}
	if p, _ := PrincipalFromContext(lr.Context()); !p.Internal {
		t.Errorf("leader principal %+v", p)
	}
	// The follower still authorizes first: a read-only user cannot get a change forwarded.
	if r := follower.send("DELETE", "/connectors/src", "", basic("bob", "bob-pw")); r.code != 403 {
		t.Errorf("read-only forwarded delete: %d", r.code)
	}
	// Errors come back with the leader's status and message; 204 stays 204; query parameters are kept.
	follower.expect2(t, "DELETE", "/connectors/nope?x=1", basic("alice", "alice-pw"), 404, errJSON(404, "Connector nope not found"))
	if q := leader.h.lastReq; q != nil && q.URL.Query().Get("x") != "1" {
		t.Errorf("query not kept: %s", q.URL.RawQuery)
	}
	follower.expect2(t, "DELETE", "/connectors/src", basic("alice", "alice-pw"), 204, "")
	// The last hop (a signed request with forward=false) does not forward again.
	if r := follower.signed("DELETE", "/connectors/snk?forward=false", "", testKey, nil); r.code != 409 ||
		r.body != errJSON(409, "Cannot complete request because of a conflicting operation (e.g. worker rebalance)") {
		t.Errorf("last hop: %d %s", r.code, r.body)
	}
	// forward=true hops once more, as forward=false.
	follower.signed("DELETE", "/connectors/snk?forward=true", "", testKey, nil)
	if q := leader.h.lastReq; q == nil || q.URL.Query().Get("forward") != "false" {
		t.Errorf("second hop: %v", q.URL)
	}

	// Kafka's 409 without a leader, and 500 for an unreachable one.
	fh.leader = ""
	follower.expect2(t, "DELETE", "/connectors/snk", basic("alice", "alice-pw"), 409,
		errJSON(409, "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."))
	fh.leader = "http://127.0.0.1:1/"
	r = follower.send("DELETE", "/connectors/snk", "", basic("alice", "alice-pw"))
	if r.code != 500 || !strings.Contains(r.body, "IO Error trying to forward REST request: ") {
		t.Errorf("unreachable leader: %d %s", r.code, r.body)
	}
	// A leader with another key refuses the forwarded request, and its 403 comes back.
	fh.leader = leader.srv.URL
	fwd.Key = func() []byte { return []byte("stale key") }
	follower.expect2(t, "DELETE", "/connectors/snk", basic("alice", "alice-pw"), 403, errJSON(403, "Internal request contained invalid signature."))
}

// expect2 is expect with headers.
func (hs *harness) expect2(t *testing.T, method, path string, hdr http.Header, code int, want string) {
	t.Helper()
	hs.t = t
	r := hs.send(method, path, "", hdr)
	if r.code != code || (want != "" && r.body != want) {
		t.Errorf("%s %s: got %d %s, want %d %s", method, path, r.code, r.body, code, want)
	}
}

func TestForwardedResponseWritten(t *testing.T) {
	rec := httptest.NewRecorder()
	s := New(newFake())
	s.writeError(rec, httptest.NewRequest("GET", "/", nil), &ForwardedResponse{Status: 201, Body: []byte(`{"a":1}`), Location: "/connectors/a"})
	if rec.Code != 201 || rec.Header().Get("Location") != "/connectors/a" || !bytes.Equal(rec.Body.Bytes(), []byte(`{"a":1}`)) {
		t.Errorf("%d %v %s", rec.Code, rec.Header(), rec.Body)
	}
}

// PUT /connectors/{name}/fence is for workers only (KIP-618): an admin user's request is refused
// as Kafka refuses an unsigned one; the leader's signed request reaches the herder.
func TestFenceIsInternalOnly(t *testing.T) {
	hs := newHarness(t, WithAuth(testAuth(t)), WithInternalKey(func() []byte { return testKey }))
	if r := hs.send("PUT", "/connectors/src/fence", "", basic("alice", "alice-pw")); r.code != 400 || r.body != errJSON(400, "Internal request missing required signature") {
		t.Errorf("admin user: %d %s", r.code, r.body)
	}
	if len(hs.h.calls) != 0 {
		t.Errorf("herder called for an unsigned request: %v", hs.h.calls)
	}
	if r := hs.signed("PUT", "/connectors/src/fence?forward=true", "", testKey, nil); r.code != 204 {
		t.Errorf("signed: %d %s", r.code, r.body)
	}
	if c := hs.h.lastCall(); c != "FenceZombies src" {
		t.Errorf("herder call %q", c)
	}
}
