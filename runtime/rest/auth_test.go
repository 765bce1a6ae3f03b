package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
)

func basic(user, password string) http.Header {
	r, _ := http.NewRequest("GET", "/", nil)
	r.SetBasicAuth(user, password)
	return http.Header{"Authorization": r.Header["Authorization"]}
}

func bearer(token string) http.Header { return http.Header{"Authorization": {"Bearer " + token}} }

const (
	adminToken = "s3cr3t-token-value-0123456789"
	readToken  = "read-only-token-abcdefghijklmnop"
)

// credFiles writes a basic credentials file (alice: admin, bob: read) and a tokens file (ci: admin,
// dash: read) and returns their paths.
func credFiles(t *testing.T) (basicFile, tokensFile string) {
	t.Helper()
	dir := t.TempDir()
	alice, err := hashPassword("alice-pw", minPBKDF2Iterations)
	if err != nil {
		t.Fatal(err)
	}
	bob, _ := hashPassword("bob-pw", minPBKDF2Iterations)
	basicFile = filepath.Join(dir, "users")
	writeFile(t, basicFile, "# users\n\nalice:"+alice+":admin\nbob:"+bob+":read\n")
	tokensFile = filepath.Join(dir, "tokens")
	writeFile(t, tokensFile, "ci:"+HashToken(adminToken)+":admin\ndash:"+HashToken(readToken)+":READ\n")
	return basicFile, tokensFile
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func testAuth(t *testing.T) Authenticator {
	t.Helper()
	a, _, _ := testAuthFiles(t)
	return a
}

// testAuthFiles is testAuth with the paths of its basic auth and token files.
func testAuthFiles(t *testing.T) (a Authenticator, basicFile, tokenFile string) {
	t.Helper()
	bf, tf := credFiles(t)
	b, err := NewBasicAuthFile(bf)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := NewTokenFile(tf)
	if err != nil {
		t.Fatal(err)
	}
	return Authenticators(b, tok), bf, tf
}

// concrete turns a route pattern into a path the fake herder serves.
func concrete(pattern string) string {
	r := strings.NewReplacer(":name", "src", ":task", "0", ":plugin", "org.example.FileSink", ":logger", "root")
	return r.Replace(pattern)
}

// routeBodies are valid bodies for the routes that take one.
var routeBodies = map[string]string{
	"POST /connectors":                               `{"name":"new","config":{"connector.class":"org.example.FileSink"}}`,
	"PUT /connectors/:name/config":                   `{"connector.class":"org.example.FileSource"}`,
	"PATCH /connectors/:name/config":                 `{"tasks.max":"1"}`,
	"PATCH /connectors/:name/offsets":                `{"offsets":[{"partition":{"f":"a"},"offset":{"p":1}}]}`,
	"PUT /connector-plugins/:plugin/config/validate": `{"connector.class":"org.example.FileSink"}`,
	"PUT /admin/loggers/:logger":                     `{"level":"DEBUG"}`,
}

func isMutation(method string) bool {
	return method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE"
}

// The authorization matrix over every registered route: without credentials every route but
// /health is a 401 with WWW-Authenticate; a read-only user gets 403 for every change and is served
// reads (and validation); an admin is served everything.
func TestAuthMatrix(t *testing.T) {
	auth := testAuth(t)
	routes := New(newFake()).table
	if len(routes) < 30 {
		t.Fatalf("only %d routes registered", len(routes))
	}
	for _, rt := range routes {
		key := rt.method + " " + rt.path
		path, body := concrete(rt.path), routeBodies[key]
		t.Run(key, func(t *testing.T) {
			hs := newHarness(t, WithAuth(auth))
			hs.h.conns["src"].target = connect.TargetStopped // so that offsets may change

			// No credentials.
			r := hs.send(rt.method, path, body, nil)
			if rt.path == "/health" {
				if r.code != 200 {
					t.Errorf("/health without credentials: %d %s", r.code, r.body)
				}
				return
			}
			if r.code != 401 || r.body != errJSON(401, "Authentication required: this worker accepts HTTP basic credentials or a bearer token") {
				t.Errorf("no credentials: %d %s", r.code, r.body)
			}
			if ch := r.header.Values("WWW-Authenticate"); len(ch) != 2 || ch[0] != `Basic realm="wasmconnect", charset="UTF-8"` || ch[1] != `Bearer realm="wasmconnect"` {
				t.Errorf("WWW-Authenticate = %q", ch)
			}
			if r.header.Get("Content-Type") != "application/json" {
				t.Errorf("401 Content-Type %q", r.header.Get("Content-Type"))
			}

			// Wrong credentials.
			if r := hs.send(rt.method, path, body, basic("alice", "wrong")); r.code != 401 || r.body != errJSON(401, "Invalid credentials") {
				t.Errorf("wrong password: %d %s", r.code, r.body)
			}

			// Read-only user, by password and by token.
			for _, cred := range []http.Header{basic("bob", "bob-pw"), bearer(readToken)} {
				r := hs.send(rt.method, path, body, cred)
				if rt.access == accessAdmin {
					if r.code != 403 || !strings.Contains(r.body, `"error_code":403`) || !strings.Contains(r.body, "needs the admin role") {
						t.Errorf("read-only user: %d %s", r.code, r.body)
					}
				} else if r.code < 200 || r.code > 299 {
					t.Errorf("read-only user: %d %s", r.code, r.body)
				}
			}
			if rt.access == accessAdmin && !isMutation(rt.method) {
				t.Errorf("%s needs admin but changes nothing", key)
			}
			if isMutation(rt.method) && rt.access != accessAdmin && rt.path != "/connector-plugins/:plugin/config/validate" {
				t.Errorf("%s changes state but does not need the admin role", key)
			}
		})
	}
	// Admins are served everything (one fresh worker a route, as some routes delete).
	for _, rt := range routes {
		for i, cred := range []http.Header{basic("alice", "alice-pw"), bearer(adminToken)} {
			hs := newHarness(t, WithAuth(auth))
			hs.h.conns["src"].target = connect.TargetStopped
			if r := hs.send(rt.method, concrete(rt.path), routeBodies[rt.method+" "+rt.path], cred); r.code < 200 || r.code > 299 {
				t.Errorf("admin %d: %s %s: %d %s", i, rt.method, rt.path, r.code, r.body)
			}
		}
	}
}

func TestAuthDetails(t *testing.T) {
	var logs syncBuffer
	auth := testAuth(t)
	hs := newHarness(t, WithAuth(auth), WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))

	// Unknown user, malformed header, wrong token (RFC 6750's invalid_token).
	if r := hs.send("GET", "/connectors", "", basic("mallory", "x")); r.code != 401 {
		t.Errorf("unknown user: %d", r.code)
	}
	if r := hs.send("GET", "/connectors", "", http.Header{"Authorization": {"Basic !!!"}}); r.code != 401 || !strings.Contains(r.body, "Authentication required") {
		t.Errorf("malformed basic: %d %s", r.code, r.body)
	}
	r := hs.send("GET", "/connectors", "", bearer("nope"))
	if r.code != 401 || r.body != errJSON(401, "Invalid credentials") {
		t.Errorf("wrong token: %d %s", r.code, r.body)
	}
	if ch := r.header.Values("WWW-Authenticate"); len(ch) != 2 || ch[1] != `Bearer realm="wasmconnect", error="invalid_token"` {
		t.Errorf("WWW-Authenticate = %q", ch)
	}
	if r := hs.send("GET", "/connectors", "", bearer("")); r.code != 401 {
		t.Errorf("empty token: %d", r.code)
	}

	// The herder sees who called, the access log names them, and a second request is served from
	// the verification cache.
	for i := 0; i < 2; i++ {
		if r := hs.send("DELETE", "/connectors/snk", "", basic("alice", "alice-pw")); r.code != 204 && r.code != 404 {
			t.Fatalf("delete: %d %s", r.code, r.body)
		}
	}
	if p, ok := PrincipalFromContext(hs.h.lastReq.Context()); !ok || p.Name != "alice" || p.Role != RoleAdmin || p.Internal {
		t.Errorf("principal %+v %v", p, ok)
	}
	if !strings.Contains(logs.String(), "user=alice") {
		t.Errorf("access log lacks the user: %s", logs.String())
	}
	hs.send("GET", "/connectors", "", bearer(adminToken))
	if p, _ := PrincipalFromContext(hs.h.lastReq.Context()); p.Name != "ci" {
		t.Errorf("token principal %+v", p)
	}

	// Anonymous reads, when allowed: GETs without credentials; changes, validation and wrong
	// credentials are still refused.
	anon := newHarness(t, WithAuth(auth), WithAnonymousRead(true))
	anon.expect("GET", "/connectors", "", 200, `["snk","src"]`)
	if r := anon.send("GET", "/connectors", "", basic("bob", "nope")); r.code != 401 {
		t.Errorf("anonymous read with a wrong password: %d", r.code)
	}
	if r := anon.send("DELETE", "/connectors/src", "", nil); r.code != 401 {
		t.Errorf("anonymous delete: %d", r.code)
	}
	if r := anon.send("PUT", "/connector-plugins/FileSink/config/validate", `{"connector.class":"org.example.FileSink"}`, nil); r.code != 401 {
		t.Errorf("anonymous validate: %d", r.code)
	}
	// Unknown routes answer 404 without revealing more.
	if r := anon.send("GET", "/nope", "", nil); r.code != 404 {
		t.Errorf("unknown route: %d", r.code)
	}
}

// Credentials files are read again when they change; a broken file refuses everyone.
func TestCredentialsReload(t *testing.T) {
	old := reloadInterval
	reloadInterval = 0
	defer func() { reloadInterval = old }()

	auth, bf, tf := testAuthFiles(t)
	var logs syncBuffer
	hs := newHarness(t, WithAuth(auth), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if r := hs.send("GET", "/connectors", "", basic("alice", "alice-pw")); r.code != 200 {
		t.Fatalf("before: %d", r.code)
	}
	h, _ := hashPassword("new-pw", minPBKDF2Iterations)
	writeFile(t, bf, "alice:"+h+":read\n")
	touch(t, bf)
	if r := hs.send("GET", "/connectors", "", basic("alice", "alice-pw")); r.code != 401 {
		t.Errorf("old password after rotation: %d", r.code)
	}
	if r := hs.send("DELETE", "/connectors/src", "", basic("alice", "new-pw")); r.code != 403 {
		t.Errorf("new password, now read-only: %d %s", r.code, r.body)
	}
	writeFile(t, bf, "alice:not-a-hash:admin\n")
	touch(t, bf)
	r := hs.send("GET", "/connectors", "", basic("alice", "new-pw"))
	if r.code != 500 || r.body != errJSON(500, "Authentication is unavailable: the worker cannot read its credentials (see its log)") {
		t.Errorf("broken file: %d %s", r.code, r.body)
	}
	if !strings.Contains(logs.String(), "the hash must have the form") {
		t.Errorf("the cause is not logged: %s", logs.String())
	}
	// Tokens: removing a token revokes it.
	writeFile(t, tf, "dash:"+HashToken(readToken)+":read\n")
	touch(t, tf)
	if r := hs.send("GET", "/connectors", "", bearer(adminToken)); r.code != 401 {
		t.Errorf("revoked token: %d", r.code)
	}
	if r := hs.send("GET", "/connectors", "", bearer(readToken)); r.code != 200 {
		t.Errorf("remaining token: %d", r.code)
	}
}

// touch moves a file's modification time forward, so a rewrite within the clock's resolution is seen.
func touch(t *testing.T, path string) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	mt := fi.ModTime().Add(time.Second)
	if err := os.Chtimes(path, mt, mt); err != nil {
		t.Fatal(err)
	}
}

func TestPasswordHashes(t *testing.T) {
	// A hash made by Python's passlib.hash.pbkdf2_sha256 (or hashlib with its encoding) is accepted.
	h, err := parsePasswordHash("$pbkdf2-sha256$29000$MDEyMzQ1Njc4OWFiY2RlZg$uHVoxjLD1v3uqpdY8ehNPGUYMiKj8ROQSRwMSE033NY")
	if err != nil {
		t.Fatal(err)
	}
	if !h.matches("correct horse") || h.matches("correct horse ") {
		t.Error("passlib vector")
	}
	if HashToken(adminToken) != "$sha256$ef678d4bb02a5e6bdb516a41c84bf0e3466eaa6792cd1ab63d05f161ff565944" {
		t.Errorf("HashToken = %s", HashToken(adminToken))
	}
	full, err := HashPassword("pw")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(full, "$pbkdf2-sha256$600000$") {
		t.Errorf("HashPassword = %s", full)
	}
	for _, bad := range []string{
		"plain", "$pbkdf2-sha256$10$MDEyMzQ1Njc4OWFiY2RlZg$uHVoxjLD1v3uqpdY8ehNPGUYMiKj8ROQSRwMSE033NY",
		"$pbkdf2-sha1$29000$MDEyMzQ1Njc4OWFiY2RlZg$uHVoxjLD1v3uqpdY8ehNPGUYMiKj8ROQSRwMSE033NY",
		"$pbkdf2-sha256$29000$$uHVoxjLD1v3uqpdY8ehNPGUYMiKj8ROQSRwMSE033NY",
	} {
		if _, err := parsePasswordHash(bad); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func TestCredentialsFileErrors(t *testing.T) {
	dir := t.TempDir()
	h, _ := hashPassword("x", minPBKDF2Iterations)
	for _, tc := range []struct{ name, content, want string }{
		{"fields", "alice:" + h + "\n", "line 1: expected user:hash:role"},
		{"role", "alice:" + h + ":root\n", `line 1: the role "root" must be read or admin`},
		{"twice", "a:" + h + ":read\na:" + h + ":admin\n", `line 2: user "a" appears twice`},
		{"hash", "a:secret:read\n", "user a: the hash must have the form"},
	} {
		p := filepath.Join(dir, tc.name)
		writeFile(t, p, tc.content)
		if _, err := NewBasicAuthFile(p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	p := filepath.Join(dir, "tokens")
	writeFile(t, p, "ci:plaintext-token:admin\n")
	if _, err := NewTokenFile(p); err == nil || !strings.Contains(err.Error(), "$sha256$") {
		t.Errorf("plaintext token: %v", err)
	}
	if _, err := NewBasicAuthFile(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing file accepted")
	}
}

// The route table and access levels are consistent with the router: every registered route is
// reachable, so that no route escapes the security wrapper.
func TestEveryRouteIsSecured(t *testing.T) {
	s := New(newFake(), WithAuth(testAuth(t)))
	for _, rt := range s.table {
		h, _, _ := s.router.Lookup(rt.method, concrete(rt.path))
		if h == nil {
			t.Errorf("%s %s not routed", rt.method, rt.path)
			continue
		}
		if rt.access == accessPublic {
			continue
		}
		w := &bytes.Buffer{}
		rec := &recorder{header: http.Header{}, body: w}
		req, _ := http.NewRequestWithContext(context.Background(), rt.method, concrete(rt.path), nil)
		h(rec, req, httprouter.Params{})
		var e errorBody
		_ = json.Unmarshal(w.Bytes(), &e)
		if rec.code != 401 {
			t.Errorf("%s %s without credentials: %d %s", rt.method, rt.path, rec.code, w)
		}
	}
}

type recorder struct {
	header http.Header
	body   *bytes.Buffer
	code   int
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = 200
	}
	return r.body.Write(b)
}
func (r *recorder) WriteHeader(code int) { r.code = code }
