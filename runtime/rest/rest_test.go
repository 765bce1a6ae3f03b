package rest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/runtime/metrics"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// fakeHerder is an in-memory Herder: connectors with a config, a target state and n tasks.
type fakeHerder struct {
	mu    sync.Mutex
	conns map[string]*fakeConn

	health connect.Health
	block  chan struct{} // when set, Connectors waits for it, ignoring ctx
	err    error         // when set, Connectors returns it
	vanish string        // ConnectorStatus/Info report this one as gone (a concurrent delete)

	calls   []string
	lastReq *http.Request

	loggers    map[string]connect.LoggerLevel
	lastPatch  map[string]*string
	lastOffset []connect.ConnectorOffset
	lastConfig map[string]string
}

type fakeConn struct {
	config  map[string]string
	target  connect.TargetState
	tasks   int
	topics  []string
	offsets []connect.ConnectorOffset
}

func newFake() *fakeHerder {
	return &fakeHerder{conns: map[string]*fakeConn{}, health: connect.Health{Status: connect.HealthHealthy},
		loggers: map[string]connect.LoggerLevel{connect.RootLogger: {Level: "INFO"}}}
}

// record notes a call as "Method arg arg..." and the request it came with.
func (f *fakeHerder) record(ctx context.Context, method string, args ...any) {
	call := method
	for _, a := range args {
		call += " " + fmt.Sprint(a)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
	f.lastReq = RequestFromContext(ctx)
}

func (f *fakeHerder) lastCall() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) == 0 {
		return ""
	}
	return f.calls[len(f.calls)-1]
}

func (f *fakeHerder) get(name string) (*fakeConn, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if name == f.vanish {
		return nil, false
	}
	c, ok := f.conns[name]
	return c, ok
}

func typeOf(cfg map[string]string) connect.ConnectorType {
	if strings.Contains(cfg["connector.class"], "Sink") {
		return connect.TypeSink
	}
	return connect.TypeSource
}

func (f *fakeHerder) info(name string, c *fakeConn) connect.ConnectorInfo {
	var ids []connect.TaskID
	for i := 0; i < c.tasks; i++ {
		ids = append(ids, connect.TaskID{Connector: name, Task: i})
	}
	return connect.ConnectorInfo{Name: name, Config: c.config, Tasks: ids, Type: typeOf(c.config)}
}

func (f *fakeHerder) status(name string, c *fakeConn) connect.ConnectorStateInfo {
	st := connect.StateRunning
	switch c.target {
	case connect.TargetPaused:
		st = connect.StatePaused
	case connect.TargetStopped:
		st = connect.StateStopped
	}
	info := connect.ConnectorStateInfo{Name: name, Connector: connect.ConnectorState{State: st, WorkerID: "w1:8083"}, Type: typeOf(c.config)}
	// Reverse order, to check that the server sorts them; the last task is FAILED.
	for i := c.tasks - 1; i >= 0; i-- {
		ts := connect.TaskState{ID: i, State: st, WorkerID: "w1:8083"}
		if i == c.tasks-1 && i > 0 {
			ts.State, ts.Trace = connect.StateFailed, "boom"
		}
		info.Tasks = append(info.Tasks, ts)
	}
	return info
}

func (f *fakeHerder) ServerInfo(ctx context.Context) connect.ServerInfo {
	return connect.ServerInfo{Version: "3.9.0", Commit: "abc123", KafkaClusterID: "cluster-1"}
}

func (f *fakeHerder) Connectors(ctx context.Context) ([]string, error) {
	f.record(ctx, "Connectors")
	if f.block != nil {
		<-f.block
	}
	if f.err != nil {
		return nil, f.err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var names []string
	for n := range f.conns {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

func (f *fakeHerder) ConnectorInfo(ctx context.Context, name string) (connect.ConnectorInfo, error) {
	c, ok := f.get(name)
	if !ok {
		return connect.ConnectorInfo{}, connect.NotFound("Connector %s not found", name)
	}
	return f.info(name, c), nil
}

func (f *fakeHerder) ConnectorConfig(ctx context.Context, name string) (map[string]string, error) {
	c, ok := f.get(name)
	if !ok {
		return nil, connect.NotFound("Connector %s not found", name)
	}
	return c.config, nil
}

func (f *fakeHerder) CreateConnector(ctx context.Context, name string, config map[string]string, initial connect.TargetState) (connect.ConnectorInfo, error) {
	f.record(ctx, "CreateConnector", name, initial)
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.conns[name]; ok {
		return connect.ConnectorInfo{}, connect.AlreadyExists("Connector %s already exists", name)
	}
	c := &fakeConn{config: config, target: initial}
	f.conns[name] = c
	return f.info(name, c), nil
}

func (f *fakeHerder) PutConnectorConfig(ctx context.Context, name string, config map[string]string) (connect.ConnectorInfo, bool, error) {
	f.record(ctx, "PutConnectorConfig", name)
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.conns[name]
	if !ok {
		c = &fakeConn{target: connect.TargetStarted}
		f.conns[name] = c
	}
	c.config = config
	return f.info(name, c), !ok, nil
}

func (f *fakeHerder) DeleteConnector(ctx context.Context, name string) error {
	f.record(ctx, "DeleteConnector", name)
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.conns[name]; !ok {
		return connect.NotFound("Connector %s not found", name)
	}
	delete(f.conns, name)
	return nil
}

func (f *fakeHerder) ConnectorStatus(ctx context.Context, name string) (connect.ConnectorStateInfo, error) {
	c, ok := f.get(name)
	if !ok {
		return connect.ConnectorStateInfo{}, connect.NotFound("No status found for connector %s", name)
	}
	return f.status(name, c), nil
}

func (f *fakeHerder) TaskConfigs(ctx context.Context, name string) ([]connect.TaskInfo, error) {
	c, ok := f.get(name)
	if !ok {
		return nil, connect.NotFound("Connector %s not found", name)
	}
	var out []connect.TaskInfo
	for i := 0; i < c.tasks; i++ {
		out = append(out, connect.TaskInfo{ID: connect.TaskID{Connector: name, Task: i}, Config: map[string]string{"task.id": strconv.Itoa(i)}})
	}
	return out, nil
}

func (f *fakeHerder) SetTargetState(ctx context.Context, name string, state connect.TargetState) error {
	f.record(ctx, "SetTargetState", name, state)
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.conns[name]
	if !ok {
		return connect.NotFound("Connector %s not found", name)
	}
	c.target = state
	return nil
}

func (f *fakeHerder) RestartConnector(ctx context.Context, name string, includeTasks, onlyFailed bool) (*connect.ConnectorStateInfo, error) {
	f.record(ctx, "RestartConnector", name, includeTasks, onlyFailed)
	c, ok := f.get(name)
	if !ok {
		return nil, connect.NotFound("Unknown connector: %s", name)
	}
	if !includeTasks && !onlyFailed {
		return nil, nil
	}
	st := f.status(name, c)
	if !onlyFailed {
		st.Connector.State = connect.StateRestarting
	}
	for i := range st.Tasks {
		if includeTasks && (!onlyFailed || st.Tasks[i].State == connect.StateFailed) {
			st.Tasks[i].State = connect.StateRestarting
		}
	}
	return &st, nil
}

func (f *fakeHerder) RestartTask(ctx context.Context, id connect.TaskID) error {
	f.record(ctx, "RestartTask", id)
	c, ok := f.get(id.Connector)
	if !ok || id.Task >= c.tasks {
		return connect.NotFound("Unknown task: %s", id)
	}
	return nil
}

func (f *fakeHerder) Plugins(ctx context.Context, kinds ...wire.Kind) []connect.PluginInfo {
	all := []connect.PluginInfo{
		{Class: "org.example.FileSink", Type: "sink", Version: "1.0.0"},
		{Class: "org.example.FileSource", Type: "source", Version: "1.0.0"},
		{Class: "org.example.JsonConverter", Type: "converter"},
	}
	var out []connect.PluginInfo
	for _, p := range all {
		for _, k := range kinds {
			if string(k) == p.Type {
				out = append(out, p)
			}
		}
	}
	return out
}

func (f *fakeHerder) Workers(context.Context) (connect.WorkersInfo, error) {
	return connect.WorkersInfo{WorkerID: "w1:8083", Generation: 3, Leader: true, LeaderURL: "http://w1:8083/",
		Assignment: connect.WorkAssignment{Connectors: []string{}, Tasks: []connect.TaskID{{Connector: "a", Task: 0}}}}, nil
}

func (f *fakeHerder) Health(ctx context.Context) connect.Health {
	if f.block != nil {
		<-f.block
	}
	return f.health
}

func (f *fakeHerder) PatchConnectorConfig(ctx context.Context, name string, patch map[string]*string) (connect.ConnectorInfo, error) {
	f.record(ctx, "PatchConnectorConfig", name)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lastPatch = patch
	c, ok := f.conns[name]
	if !ok {
		return connect.ConnectorInfo{}, connect.NotFound("Connector %s not found", name)
	}
	cfg := map[string]string{}
	for k, v := range c.config {
		cfg[k] = v
	}
	for k, v := range patch {
		if v == nil {
			delete(cfg, k)
		} else {
			cfg[k] = *v
		}
	}
	c.config = cfg
	return f.info(name, c), nil
}

func (f *fakeHerder) ConnectorTopics(ctx context.Context, name string) ([]string, error) {
	f.record(ctx, "ConnectorTopics", name)
	c, ok := f.get(name)
	if !ok {
		return nil, nil // as Kafka: an unknown connector has no topics
	}
	return c.topics, nil
}

func (f *fakeHerder) FenceZombies(ctx context.Context, name string) error {
	f.record(ctx, "FenceZombies", name)
	return nil
}

func (f *fakeHerder) ResetConnectorTopics(ctx context.Context, name string) error {
	f.record(ctx, "ResetConnectorTopics", name)
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.conns[name]; ok {
		c.topics = nil
	}
	return nil
}

func (f *fakeHerder) ConnectorOffsets(ctx context.Context, name string) (connect.ConnectorOffsets, error) {
	c, ok := f.get(name)
	if !ok {
		return connect.ConnectorOffsets{}, connect.NotFound("Connector %s not found", name)
	}
	return connect.ConnectorOffsets{Offsets: c.offsets}, nil
}

func (f *fakeHerder) modifiable(name string) (*fakeConn, error) {
	c, ok := f.get(name)
	if !ok {
		return nil, connect.NotFound("Connector %s not found", name)
	}
	if c.target != connect.TargetStopped {
		return nil, connect.NotStopped(name)
	}
	return c, nil
}

func (f *fakeHerder) AlterConnectorOffsets(ctx context.Context, name string, offsets []connect.ConnectorOffset) (connect.Message, error) {
	f.record(ctx, "AlterConnectorOffsets", name, len(offsets))
	f.mu.Lock()
	f.lastOffset = offsets
	f.mu.Unlock()
	c, err := f.modifiable(name)
	if err != nil {
		return connect.Message{}, err
	}
	if typeOf(c.config) == connect.TypeSink {
		if _, err := connect.ParseSinkOffsets(offsets); err != nil {
			return connect.Message{}, err
		}
	}
	f.mu.Lock()
	c.offsets = offsets
	f.mu.Unlock()
	return connect.Message{Message: connect.OffsetsAlteredMessage}, nil
}

func (f *fakeHerder) ResetConnectorOffsets(ctx context.Context, name string) (connect.Message, error) {
	f.record(ctx, "ResetConnectorOffsets", name)
	c, err := f.modifiable(name)
	if err != nil {
		return connect.Message{}, err
	}
	f.mu.Lock()
	c.offsets = nil
	f.mu.Unlock()
	return connect.Message{Message: connect.OffsetsResetFrameworkMessage}, nil
}

func strp(s string) *string { return &s }

// fileSinkKeys are the config definitions of org.example.FileSink.
var fileSinkKeys = []connect.ConfigKeyInfo{
	{Name: "file", Type: "STRING", Required: true, Importance: "HIGH", Documentation: "The file to write", Group: strp("File"), Order: 1, Width: "LONG", DisplayName: "File"},
	{Name: "batch.size", Type: "INT", DefaultValue: strp("100"), Importance: "LOW", Documentation: "Records a write", Order: 2, Width: "SHORT", DisplayName: "Batch size", Dependents: []string{"file"}},
}

func (f *fakeHerder) PluginConfig(ctx context.Context, plugin string) ([]connect.ConfigKeyInfo, error) {
	f.record(ctx, "PluginConfig", plugin)
	switch plugin {
	case "org.example.FileSink", "FileSink":
		return fileSinkKeys, nil
	case "org.example.JsonConverter":
		return nil, nil
	}
	return nil, connect.NotFound("Unknown plugin %s.", plugin)
}

func (f *fakeHerder) ValidateConfig(ctx context.Context, plugin string, cfg map[string]string) (connect.ConfigInfos, error) {
	f.record(ctx, "ValidateConfig", plugin)
	f.mu.Lock()
	f.lastConfig = cfg
	f.mu.Unlock()
	out := connect.ConfigInfos{Name: cfg["connector.class"], Groups: []string{"Common", "File"}}
	for i := range fileSinkKeys {
		k := fileSinkKeys[i]
		v := &connect.ConfigValueInfo{Name: k.Name, Visible: true}
		if val, ok := cfg[k.Name]; ok {
			v.Value = strp(val)
		} else if k.DefaultValue != nil {
			v.Value = k.DefaultValue
		} else {
			v.Errors = []string{fmt.Sprintf("Missing required configuration %q which has no default value.", k.Name)}
		}
		out.Configs = append(out.Configs, connect.ConfigInfo{Definition: &k, Value: v})
	}
	if t, ok := cfg["transforms"]; ok {
		out.Configs = append(out.Configs, connect.ConfigInfo{Value: &connect.ConfigValueInfo{Name: "transforms." + t + ".type", Errors: []string{"Unknown transform " + t}}})
	}
	out.CountErrors()
	return out, nil
}

func (f *fakeHerder) Loggers(ctx context.Context) (map[string]connect.LoggerLevel, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]connect.LoggerLevel{}
	for k, v := range f.loggers {
		out[k] = v
	}
	return out, nil
}

func (f *fakeHerder) Logger(ctx context.Context, name string) (connect.LoggerLevel, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if strings.EqualFold(name, connect.RootLogger) {
		name = connect.RootLogger
	}
	l, ok := f.loggers[name]
	return l, ok, nil
}

func (f *fakeHerder) SetLogLevel(ctx context.Context, namespace, level string, scope connect.LogScope) ([]string, error) {
	f.record(ctx, "SetLogLevel", namespace, level, scope)
	f.mu.Lock()
	defer f.mu.Unlock()
	now := int64(1700000000000)
	var changed []string
	for name := range f.loggers {
		if name != connect.RootLogger && (name == namespace || strings.HasPrefix(name, namespace+".")) {
			f.loggers[name] = connect.LoggerLevel{Level: level, LastModified: &now}
			changed = append(changed, name)
		}
	}
	if _, ok := f.loggers[namespace]; !ok {
		f.loggers[namespace] = connect.LoggerLevel{Level: level, LastModified: &now}
		changed = append(changed, namespace)
	}
	sort.Strings(changed)
	if scope == connect.ScopeCluster {
		return nil, nil
	}
	return changed, nil
}

// harness

type harness struct {
	t   *testing.T
	h   *fakeHerder
	srv *httptest.Server
}

func newHarness(t *testing.T, opts ...Option) *harness {
	t.Helper()
	h := newFake()
	h.conns["src"] = &fakeConn{config: map[string]string{"name": "src", "connector.class": "org.example.FileSource", "tasks.max": "2"}, target: connect.TargetStarted, tasks: 2}
	h.conns["snk"] = &fakeConn{config: map[string]string{"name": "snk", "connector.class": "org.example.FileSink"}, target: connect.TargetStarted, tasks: 1}
	opts = append([]Option{WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}, opts...)
	srv := httptest.NewServer(New(h, opts...))
	t.Cleanup(srv.Close)
	return &harness{t: t, h: h, srv: srv}
}

type result struct {
	code   int
	header http.Header
	body   string
}

func (hs *harness) do(method, path, body string) result {
	hs.t.Helper()
	return hs.send(method, path, body, nil)
}

// send makes a request with extra headers.
func (hs *harness) send(method, path, body string, hdr http.Header) result {
	hs.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, hs.srv.URL+path, rd)
	if err != nil {
		hs.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	return hs.roundTrip(req)
}

// roundTrip sends req and reads the whole response.
func (hs *harness) roundTrip(req *http.Request) result {
	hs.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		hs.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return result{resp.StatusCode, resp.Header, string(b)}
}

// expect checks the status and the exact body.
func (hs *harness) expect(method, path, body string, code int, want string) result {
	hs.t.Helper()
	r := hs.do(method, path, body)
	if r.code != code || r.body != want {
		hs.t.Errorf("%s %s:\n got %d %s\nwant %d %s", method, path, r.code, r.body, code, want)
	}
	if want != "" && r.header.Get("Content-Type") != "application/json" {
		hs.t.Errorf("%s %s: Content-Type %q", method, path, r.header.Get("Content-Type"))
	}
	return r
}

func errJSON(code int, msg string) string {
	b, _ := marshal(errorBody{Code: code, Message: msg})
	return string(b)
}

// tests: success paths

func TestServerInfo(t *testing.T) {
	hs := newHarness(t)
	hs.expect("GET", "/", "", 200, `{"version":"3.9.0","commit":"abc123","kafka_cluster_id":"cluster-1"}`)
}

func TestWorkers(t *testing.T) {
	hs := newHarness(t)
	hs.expect("GET", "/workers", "", 200, `{"worker_id":"w1:8083","generation":3,"leader":true,"leader_url":"http://w1:8083/",`+
		`"assignment":{"connectors":[],"tasks":[{"connector":"a","task":0}]}}`)
}

func TestListConnectors(t *testing.T) {
	hs := newHarness(t)
	hs.expect("GET", "/connectors", "", 200, `["snk","src"]`)
	hs.expect("GET", "/connectors/", "", 200, `["snk","src"]`) // trailing slash, as Kafka accepts it
	hs.h.conns = map[string]*fakeConn{}
	hs.expect("GET", "/connectors", "", 200, `[]`)
}

func TestListConnectorsExpand(t *testing.T) {
	hs := newHarness(t)
	hs.expect("GET", "/connectors?expand=status&expand=info", "", 200,
		`{"snk":{"status":{"name":"snk","connector":{"state":"RUNNING","worker_id":"w1:8083"},"tasks":[{"id":0,"state":"RUNNING","worker_id":"w1:8083"}],"type":"sink"},`+
			`"info":{"name":"snk","config":{"connector.class":"org.example.FileSink","name":"snk"},"tasks":[{"connector":"snk","task":0}],"type":"sink"}},`+
			`"src":{"status":{"name":"src","connector":{"state":"RUNNING","worker_id":"w1:8083"},"tasks":[{"id":0,"state":"RUNNING","worker_id":"w1:8083"},{"id":1,"state":"FAILED","worker_id":"w1:8083","trace":"boom"}],"type":"source"},`+
			`"info":{"name":"src","config":{"connector.class":"org.example.FileSource","name":"src","tasks.max":"2"},"tasks":[{"connector":"src","task":0},{"connector":"src","task":1}],"type":"source"}}}`)
	hs.expect("GET", "/connectors?expand=info", "", 200,
		`{"snk":{"info":{"name":"snk","config":{"connector.class":"org.example.FileSink","name":"snk"},"tasks":[{"connector":"snk","task":0}],"type":"sink"}},`+
			`"src":{"info":{"name":"src","config":{"connector.class":"org.example.FileSource","name":"src","tasks.max":"2"},"tasks":[{"connector":"src","task":0},{"connector":"src","task":1}],"type":"source"}}}`)
	// Unknown expansions are ignored; a connector deleted during the lookup is left out.
	hs.h.vanish = "src"
	hs.expect("GET", "/connectors?expand=bogus", "", 200, `{"snk":{},"src":{}}`)
	hs.expect("GET", "/connectors?expand=status", "", 200,
		`{"snk":{"status":{"name":"snk","connector":{"state":"RUNNING","worker_id":"w1:8083"},"tasks":[{"id":0,"state":"RUNNING","worker_id":"w1:8083"}],"type":"sink"}}}`)
}

func TestCreateConnector(t *testing.T) {
	hs := newHarness(t)
	r := hs.expect("POST", "/connectors",
		`{"name":"  my conn ","config":{"connector.class":"org.example.FileSink","topics":"t<1>&"},"initial_state":"paused","extra":[1,2]}`,
		201, `{"name":"my conn","config":{"connector.class":"org.example.FileSink","name":"my conn","topics":"t<1>&"},"tasks":[],"type":"sink"}`)
	if loc := r.header.Get("Location"); loc != "/connectors/my%20conn" {
		t.Errorf("Location = %q", loc)
	}
	if c := hs.h.lastCall(); c != "CreateConnector my conn PAUSED" {
		t.Errorf("herder call %q", c)
	}
	// config.name equal to the name is fine; initial_state defaults to RUNNING (STARTED).
	hs.expect("POST", "/connectors", `{"name":"b","config":{"name":"b","connector.class":"x"}}`,
		201, `{"name":"b","config":{"connector.class":"x","name":"b"},"tasks":[],"type":"source"}`)
	if c := hs.h.lastCall(); c != "CreateConnector b STARTED" {
		t.Errorf("herder call %q", c)
	}
	// A UTF-8 byte order mark is accepted, as Jackson does.
	hs.expect("POST", "/connectors", "\xef\xbb\xbf{\"name\":\"bom\",\"config\":{}}", 201,
		`{"name":"bom","config":{"name":"bom"},"tasks":[],"type":"source"}`)
	hs.expect("GET", "/connectors/my%20conn", "", 200,
		`{"name":"my conn","config":{"connector.class":"org.example.FileSink","name":"my conn","topics":"t<1>&"},"tasks":[],"type":"sink"}`)
}

func TestCreateConnectorConflict(t *testing.T) {
	hs := newHarness(t)
	hs.expect("POST", "/connectors", `{"name":"src","config":{"connector.class":"x"}}`, 409,
		errJSON(409, "Connector src already exists"))
}

func TestCreateConnectorBadInput(t *testing.T) {
	hs := newHarness(t)
	kafkaInvalid := func(detail string) string {
		return "Connector configuration is invalid and contains the following 1 error(s):\n" + detail +
			"\nYou can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`"
	}
	for _, tc := range []struct {
		name, body, msg string
	}{
		{"empty body", ``, "Request body is empty: expected a JSON object"},
		{"whitespace body", "  \n", "Request body is empty: expected a JSON object"},
		{"truncated", `{"name":"a",`, "Invalid JSON in request body: unexpected end of JSON input (line 1, column 13)"},
		{"bad char", "{\"name\":\"a\",\n \"config\": {x}}", "Invalid JSON in request body: invalid character 'x' looking for beginning of object key string (line 2, column 13)"},
		{"trailing garbage", `{"name":"a","config":{}} x`, "Invalid JSON in request body: invalid character 'x' after top-level value (line 1, column 26)"},
		{"array body", `[1,2]`, "Invalid request body: expected a JSON object, got array"},
		{"string body", `"x"`, "Invalid request body: expected a JSON object, got string"},
		{"null body", `null`, "Invalid request body: expected a JSON object, got null"},
		{"name not string", `{"name":5,"config":{}}`, `"name" must be a string, got number`},
		{"config not object", `{"name":"a","config":"x"}`, `"config" must be a JSON object, got string`},
		{"config value array", `{"name":"a","config":{"z":[1],"y":"ok"}}`, `config value for "z" must be a string, got array`},
		{"config value null", `{"name":"a","config":{"k":null}}`, `config value for "k" must be a string, got null`},
		{"config value object", `{"name":"a","config":{"k":{}}}`, `config value for "k" must be a string, got object`},
		{"missing config", `{"name":"a"}`, `Connector config is missing: the request body must have a "config" object`},
		{"null config", `{"name":"a","config":null}`, `Connector config is missing: the request body must have a "config" object`},
		{"missing name", `{"config":{"connector.class":"x"}}`, kafkaInvalid("Invalid value  for configuration name: String may not be empty")},
		{"blank name", `{"name":"  ","config":{"connector.class":"x"}}`, kafkaInvalid("Invalid value  for configuration name: String may not be empty")},
		{"control char", `{"name":"a\u0007b","config":{}}`, kafkaInvalid("Invalid value a\u0007b for configuration name: String may not contain control sequences but had the following ASCII chars: 7")},
		{"slash", `{"name":"a/b","config":{}}`, `Connector name "a/b" is invalid: it contains '/', so no URL path could address it`},
		{"name mismatch", `{"name":"a","config":{"name":"b"}}`, "Connector name configuration (b) doesn't match connector name in the URL (a)"},
		{"bad initial_state", `{"name":"a","config":{},"initial_state":"SLEEPING"}`, `Invalid initial state "SLEEPING": must be one of RUNNING, PAUSED or STOPPED`},
		{"initial_state not string", `{"name":"a","config":{},"initial_state":1}`, `"initial_state" must be a string, got number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs.t = t
			hs.expect("POST", "/connectors", tc.body, 400, errJSON(400, tc.msg))
		})
	}
	hs.t = t
	if c := hs.h.lastCall(); c != "" {
		t.Errorf("herder was called: %q", c)
	}
}

func TestBodyTooLarge(t *testing.T) {
	hs := newHarness(t, WithMaxBodyBytes(64))
	big := `{"name":"a","config":{"k":"` + strings.Repeat("v", 100) + `"}}`
	hs.expect("POST", "/connectors", big, 413, errJSON(413, "Request body is too large: the limit is 64 bytes"))
	hs.expect("PUT", "/connectors/a/config", big, 413, errJSON(413, "Request body is too large: the limit is 64 bytes"))

	// Without a Content-Length the limit still holds.
	req, _ := http.NewRequest("POST", hs.srv.URL+"/connectors", io.MultiReader(strings.NewReader(big)))
	req.ContentLength = -1
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 413 || string(b) != errJSON(413, "Request body is too large: the limit is 64 bytes") {
		t.Errorf("chunked: %d %s", resp.StatusCode, b)
	}
}

func TestGetConnector(t *testing.T) {
	hs := newHarness(t)
	hs.expect("GET", "/connectors/src", "", 200,
		`{"name":"src","config":{"connector.class":"org.example.FileSource","name":"src","tasks.max":"2"},"tasks":[{"connector":"src","task":0},{"connector":"src","task":1}],"type":"source"}`)
	hs.expect("GET", "/connectors/nope", "", 404, errJSON(404, "Connector nope not found"))
	// A name with '/' cannot be addressed: it is another path.
	hs.expect("GET", "/connectors/a%2Fb", "", 404, errJSON(404, "HTTP 404 Not Found"))
}

func TestGetConfig(t *testing.T) {
	hs := newHarness(t)
	hs.expect("GET", "/connectors/src/config", "", 200, `{"connector.class":"org.example.FileSource","name":"src","tasks.max":"2"}`)
	hs.expect("GET", "/connectors/nope/config", "", 404, errJSON(404, "Connector nope not found"))
}

func TestPutConfig(t *testing.T) {
	hs := newHarness(t)
	r := hs.expect("PUT", "/connectors/new/config", `{"connector.class":"org.example.FileSink","topics":"t"}`, 201,
		`{"name":"new","config":{"connector.class":"org.example.FileSink","name":"new","topics":"t"},"tasks":[],"type":"sink"}`)
	if loc := r.header.Get("Location"); loc != "/connectors/new" {
		t.Errorf("Location = %q", loc)
	}
	r = hs.expect("PUT", "/connectors/src/config", `{"connector.class":"org.example.FileSource","name":"src","tasks.max":"1"}`, 200,
		`{"name":"src","config":{"connector.class":"org.example.FileSource","name":"src","tasks.max":"1"},"tasks":[{"connector":"src","task":0},{"connector":"src","task":1}],"type":"source"}`)
	if loc := r.header.Get("Location"); loc != "" {
		t.Errorf("Location on update = %q", loc)
	}
	hs.expect("GET", "/connectors/src/config", "", 200, `{"connector.class":"org.example.FileSource","name":"src","tasks.max":"1"}`)

	for _, tc := range []struct{ name, path, body, msg string }{
		{"name mismatch", "/connectors/src/config", `{"name":"other"}`, "Connector name configuration (other) doesn't match connector name in the URL (src)"},
		{"object value", "/connectors/src/config", `{"tasks.max":{"n":2}}`, `config value for "tasks.max" must be a string, got object`},
		{"null value", "/connectors/src/config", `{"tasks.max":null}`, `config value for "tasks.max" must be a string, got null`},
		{"array body", "/connectors/src/config", `["a"]`, "Invalid request body: expected a JSON object, got array"},
		{"nested create body", "/connectors/src/config", `{"name":"src","config":{"a":"b"}}`, `config value for "config" must be a string, got object`},
		{"empty body", "/connectors/src/config", ``, "Request body is empty: expected a JSON object"},
		{"truncated", "/connectors/src/config", `{"a":`, "Invalid JSON in request body: unexpected end of JSON input (line 1, column 6)"},
		{"control char name", "/connectors/a%0Ab/config", `{}`, "Connector configuration is invalid and contains the following 1 error(s):\nInvalid value a\nb for configuration name: String may not contain control sequences but had the following ASCII chars: 10\nYou can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs.t = t
			hs.expect("PUT", tc.path, tc.body, 400, errJSON(400, tc.msg))
		})
	}
}

func TestConnectorStatus(t *testing.T) {
	hs := newHarness(t)
	hs.expect("GET", "/connectors/src/status", "", 200,
		`{"name":"src","connector":{"state":"RUNNING","worker_id":"w1:8083"},"tasks":[{"id":0,"state":"RUNNING","worker_id":"w1:8083"},{"id":1,"state":"FAILED","worker_id":"w1:8083","trace":"boom"}],"type":"source"}`)
	hs.expect("GET", "/connectors/nope/status", "", 404, errJSON(404, "No status found for connector nope"))
}

func TestTasks(t *testing.T) {
	hs := newHarness(t)
	hs.expect("GET", "/connectors/src/tasks", "", 200,
		`[{"id":{"connector":"src","task":0},"config":{"task.id":"0"}},{"id":{"connector":"src","task":1},"config":{"task.id":"1"}}]`)
	hs.expect("GET", "/connectors/src/tasks-config", "", 200, `{"src-0":{"task.id":"0"},"src-1":{"task.id":"1"}}`)
	hs.h.conns["stopped"] = &fakeConn{config: map[string]string{"name": "stopped"}, target: connect.TargetStopped}
	hs.expect("GET", "/connectors/stopped/tasks", "", 200, `[]`)
	hs.expect("GET", "/connectors/stopped/status", "", 200,
		`{"name":"stopped","connector":{"state":"STOPPED","worker_id":"w1:8083"},"tasks":[],"type":"source"}`)
	hs.expect("GET", "/connectors/nope/tasks", "", 404, errJSON(404, "Connector nope not found"))
}

func TestTaskStatus(t *testing.T) {
	hs := newHarness(t)
	hs.expect("GET", "/connectors/src/tasks/1/status", "", 200, `{"id":1,"state":"FAILED","worker_id":"w1:8083","trace":"boom"}`)
	hs.expect("GET", "/connectors/src/tasks/0/status", "", 200, `{"id":0,"state":"RUNNING","worker_id":"w1:8083"}`)
	hs.expect("GET", "/connectors/src/tasks/7/status", "", 404, errJSON(404, "No status found for task src-7"))
	hs.expect("GET", "/connectors/nope/tasks/0/status", "", 404, errJSON(404, "No status found for task nope-0"))
	hs.expect("GET", "/connectors/src/tasks/abc/status", "", 404, errJSON(404, `Invalid task ID "abc" for connector src: must be a non-negative integer`))
	hs.expect("GET", "/connectors/src/tasks/-1/status", "", 404, errJSON(404, `Invalid task ID "-1" for connector src: must be a non-negative integer`))
	hs.expect("GET", "/connectors/src/tasks/99999999999999999999/status", "", 404, errJSON(404, `Invalid task ID "99999999999999999999" for connector src: must be a non-negative integer`))
}

func TestPauseResumeStop(t *testing.T) {
	hs := newHarness(t)
	for _, tc := range []struct {
		path   string
		code   int
		call   string
		status string
	}{
		{"/connectors/src/pause", 202, "SetTargetState src PAUSED", "PAUSED"},
		{"/connectors/src/resume", 202, "SetTargetState src STARTED", "RUNNING"},
		{"/connectors/src/stop", 204, "SetTargetState src STOPPED", "STOPPED"},
		{"/connectors/src/resume", 202, "SetTargetState src STARTED", "RUNNING"},
	} {
		r := hs.expect("PUT", tc.path, "", tc.code, "")
		if r.header.Get("Content-Length") != "" && r.header.Get("Content-Length") != "0" {
			t.Errorf("%s: Content-Length %q", tc.path, r.header.Get("Content-Length"))
		}
		if c := hs.h.lastCall(); c != tc.call {
			t.Errorf("%s: herder call %q", tc.path, c)
		}
		if r := hs.do("GET", "/connectors/src/status", ""); !strings.Contains(r.body, `"connector":{"state":"`+tc.status+`"`) {
			t.Errorf("after %s: %s", tc.path, r.body)
		}
	}
	for _, p := range []string{"pause", "resume", "stop"} {
		hs.expect("PUT", "/connectors/nope/"+p, "", 404, errJSON(404, "Connector nope not found"))
	}
}

func TestRestartConnector(t *testing.T) {
	hs := newHarness(t)
	hs.expect("POST", "/connectors/src/restart", "", 204, "")
	if c := hs.h.lastCall(); c != "RestartConnector src false false" {
		t.Errorf("herder call %q", c)
	}
	hs.expect("POST", "/connectors/src/restart?includeTasks=false&onlyFailed=false", "", 204, "")
	hs.expect("POST", "/connectors/src/restart?includeTasks=true", "", 202,
		`{"name":"src","connector":{"state":"RESTARTING","worker_id":"w1:8083"},"tasks":[{"id":0,"state":"RESTARTING","worker_id":"w1:8083"},{"id":1,"state":"RESTARTING","worker_id":"w1:8083","trace":"boom"}],"type":"source"}`)
	if c := hs.h.lastCall(); c != "RestartConnector src true false" {
		t.Errorf("herder call %q", c)
	}
	hs.expect("POST", "/connectors/src/restart?includeTasks=TRUE&onlyFailed=true", "", 202,
		`{"name":"src","connector":{"state":"RUNNING","worker_id":"w1:8083"},"tasks":[{"id":0,"state":"RUNNING","worker_id":"w1:8083"},{"id":1,"state":"RESTARTING","worker_id":"w1:8083","trace":"boom"}],"type":"source"}`)
	// onlyFailed alone is not the legacy form: 202.
	hs.expect("POST", "/connectors/src/restart?onlyFailed=true", "", 202,
		`{"name":"src","connector":{"state":"RUNNING","worker_id":"w1:8083"},"tasks":[{"id":0,"state":"RUNNING","worker_id":"w1:8083"},{"id":1,"state":"FAILED","worker_id":"w1:8083","trace":"boom"}],"type":"source"}`)
	hs.expect("POST", "/connectors/src/restart?includeTasks=yes", "", 400,
		errJSON(400, `Invalid value "yes" for query parameter includeTasks: must be true or false`))
	hs.expect("POST", "/connectors/nope/restart", "", 404, errJSON(404, "Unknown connector: nope"))
	hs.expect("POST", "/connectors/nope/restart?includeTasks=true", "", 404, errJSON(404, "Unknown connector: nope"))
}

// nilStatusHerder returns no status from a 202 restart; the server then reads ConnectorStatus.
type nilStatusHerder struct{ *fakeHerder }

func (n nilStatusHerder) RestartConnector(ctx context.Context, name string, includeTasks, onlyFailed bool) (*connect.ConnectorStateInfo, error) {
	return nil, nil
}

func TestRestartConnectorNilStatus(t *testing.T) {
	hs := newHarness(t)
	srv := httptest.NewServer(New(nilStatusHerder{hs.h}))
	defer srv.Close()
	hs.srv = srv
	hs.expect("POST", "/connectors/snk/restart?includeTasks=true", "", 202,
		`{"name":"snk","connector":{"state":"RUNNING","worker_id":"w1:8083"},"tasks":[{"id":0,"state":"RUNNING","worker_id":"w1:8083"}],"type":"sink"}`)
}

func TestRestartTask(t *testing.T) {
	hs := newHarness(t)
	hs.expect("POST", "/connectors/src/tasks/1/restart", "", 204, "")
	if c := hs.h.lastCall(); c != "RestartTask src-1" {
		t.Errorf("herder call %q", c)
	}
	hs.expect("POST", "/connectors/src/tasks/5/restart", "", 404, errJSON(404, "Unknown task: src-5"))
	hs.expect("POST", "/connectors/src/tasks/x/restart", "", 404, errJSON(404, `Invalid task ID "x" for connector src: must be a non-negative integer`))
}

func TestDeleteConnector(t *testing.T) {
	hs := newHarness(t)
	hs.expect("DELETE", "/connectors/src", "", 204, "")
	hs.expect("GET", "/connectors/src", "", 404, errJSON(404, "Connector src not found"))
	hs.expect("DELETE", "/connectors/src", "", 404, errJSON(404, "Connector src not found"))
	hs.expect("GET", "/connectors", "", 200, `["snk"]`)
}

func TestConnectorPlugins(t *testing.T) {
	hs := newHarness(t)
	connectors := `[{"class":"org.example.FileSink","type":"sink","version":"1.0.0"},{"class":"org.example.FileSource","type":"source","version":"1.0.0"}]`
	hs.expect("GET", "/connector-plugins", "", 200, connectors)
	hs.expect("GET", "/connector-plugins/", "", 200, connectors)
	hs.expect("GET", "/connector-plugins?connectorsOnly=true", "", 200, connectors)
	hs.expect("GET", "/connector-plugins?connectorsOnly=false", "", 200,
		`[{"class":"org.example.FileSink","type":"sink","version":"1.0.0"},{"class":"org.example.FileSource","type":"source","version":"1.0.0"},{"class":"org.example.JsonConverter","type":"converter"}]`)
	hs.expect("GET", "/connector-plugins?connectorsOnly=maybe", "", 400,
		errJSON(400, `Invalid value "maybe" for query parameter connectorsOnly: must be true or false`))
}

func TestHealth(t *testing.T) {
	hs := newHarness(t, WithHealthTimeout(50*time.Millisecond))
	hs.expect("GET", "/health", "", 200, `{"status":"healthy","message":"Worker has completed startup and is ready to handle requests."}`)
	hs.h.health = connect.Health{Status: connect.HealthStarting, Detail: "The worker is currently reading to the end of the config topic."}
	hs.expect("GET", "/health", "", 503, `{"status":"starting","message":"Worker is still starting up. The worker is currently reading to the end of the config topic."}`)
	hs.h.health = connect.Health{Status: connect.HealthUnhealthy}
	hs.expect("GET", "/health", "", 500, `{"status":"unhealthy","message":"Worker was unable to handle this request and may be unable to handle other requests."}`)

	// A herder that does not answer in time is unhealthy.
	hs.h.health = connect.Health{Status: connect.HealthHealthy}
	hs.h.block = make(chan struct{})
	defer close(hs.h.block)
	hs.expect("GET", "/health", "", 500, `{"status":"unhealthy","message":"Worker was unable to handle this request and may be unable to handle other requests."}`)
}

func TestUnknownRouteAndMethod(t *testing.T) {
	hs := newHarness(t)
	hs.expect("GET", "/nope", "", 404, errJSON(404, "HTTP 404 Not Found"))
	hs.expect("GET", "/connectors/src/bogus", "", 404, errJSON(404, "HTTP 404 Not Found"))
	r := hs.expect("DELETE", "/connectors", "", 405, errJSON(405, "HTTP 405 Method Not Allowed"))
	if allow := r.header.Get("Allow"); !strings.Contains(allow, "GET") || !strings.Contains(allow, "POST") {
		t.Errorf("Allow = %q", allow)
	}
	hs.expect("GET", "/connectors/src/pause", "", 405, errJSON(405, "HTTP 405 Method Not Allowed"))
	hs.expect("POST", "/connectors/src/config", "{}", 405, errJSON(405, "HTTP 405 Method Not Allowed"))
}

func TestHead(t *testing.T) {
	hs := newHarness(t)
	r := hs.do("HEAD", "/connectors", "")
	if r.code != 200 || r.body != "" {
		t.Errorf("HEAD: %d %q", r.code, r.body)
	}
}

func TestRequestTimeout(t *testing.T) {
	hs := newHarness(t, WithRequestTimeout(50*time.Millisecond))
	hs.h.block = make(chan struct{})
	defer close(hs.h.block)
	start := time.Now()
	hs.expect("GET", "/connectors", "", 500, errJSON(500, "Request timed out"))
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
}

// ctxHerder honours ctx and answers its own timeout message, which the server passes on.
type ctxHerder struct{ *fakeHerder }

func (c ctxHerder) Connectors(ctx context.Context) ([]string, error) {
	<-ctx.Done()
	return nil, &connect.Error{Code: 500, Message: "Request timed out. The worker is currently reading to the end of the config topic"}
}

func TestRequestTimeoutHerderMessage(t *testing.T) {
	hs := newHarness(t)
	srv := httptest.NewServer(New(ctxHerder{hs.h}, WithRequestTimeout(50*time.Millisecond)))
	defer srv.Close()
	hs.srv = srv
	hs.expect("GET", "/connectors", "", 500, errJSON(500, "Request timed out. The worker is currently reading to the end of the config topic"))
}

func TestHerderErrors(t *testing.T) {
	hs := newHarness(t)
	hs.h.err = connect.Conflict("Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)")
	hs.expect("GET", "/connectors", "", 409, errJSON(409, "Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)"))
	hs.h.err = errors.New("kafka unavailable")
	hs.expect("GET", "/connectors", "", 500, errJSON(500, "kafka unavailable"))
	hs.h.err = context.DeadlineExceeded
	hs.expect("GET", "/connectors", "", 500, errJSON(500, "Request timed out"))
	hs.h.err = &connect.Error{Code: 0, Message: "no code"} // not a valid status: answered as 500
	hs.expect("GET", "/connectors", "", 500, errJSON(500, "no code"))
}

// panicHerder panics in a call.
type panicHerder struct{ *fakeHerder }

func (panicHerder) ConnectorInfo(context.Context, string) (connect.ConnectorInfo, error) {
	panic("oops")
}

func TestHerderPanic(t *testing.T) {
	hs := newHarness(t)
	srv := httptest.NewServer(New(panicHerder{hs.h}, WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))))
	defer srv.Close()
	hs.srv = srv
	hs.expect("GET", "/connectors/src", "", 500, errJSON(500, "internal error: oops"))
	hs.expect("GET", "/connectors", "", 200, `["snk","src"]`) // still serving
}

func TestRequestInContext(t *testing.T) {
	hs := newHarness(t)
	req, _ := http.NewRequest("DELETE", hs.srv.URL+"/connectors/src?forward=true", nil)
	req.Header.Set("Authorization", "Bearer x")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	r := hs.h.lastReq
	if r == nil || r.URL.Query().Get("forward") != "true" || r.Header.Get("Authorization") != "Bearer x" {
		t.Fatalf("RequestFromContext = %+v", r)
	}
	if RequestFromContext(context.Background()) != nil {
		t.Error("RequestFromContext on a bare context")
	}
}

func TestMetricsEndpoint(t *testing.T) {
	reg := metrics.New(metrics.Label("test", "TestMetricsEndpoint"))
	defer reg.Close()
	task := reg.Task(connect.TaskID{Connector: "src", Task: 0}, connect.TypeSource)
	task.SetState(connect.StateRunning)
	task.SourcePolled(3, time.Millisecond)

	hs := newHarness(t)
	r := hs.do("GET", "/metrics", "")
	if r.code != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("GET /metrics: %d %q", r.code, r.header.Get("Content-Type"))
	}
	for _, want := range []string{
		`kafka_connect_source_task_metrics_source_record_poll_total{test="TestMetricsEndpoint",connector="src",task="0"} 3`,
		`kafka_connect_connector_task_metrics_status{test="TestMetricsEndpoint",connector="src",task="0",status="running"} 1`,
		`kafka_connect_connect_worker_metrics_task_count{test="TestMetricsEndpoint"} 1`,
		"go_goroutines ",
		"process_resident_memory_bytes ",
	} {
		if !strings.Contains(r.body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	task.Unregister()
	if r := hs.do("GET", "/metrics", ""); strings.Contains(r.body, `connector="src",task="0"`) {
		t.Error("task series still exported after Unregister")
	}

	// WithMetrics replaces the output, e.g. with one registry alone.
	srv := httptest.NewServer(New(hs.h, WithMetrics(reg.WritePrometheus)))
	defer srv.Close()
	hs.srv = srv
	var only bytes.Buffer
	reg.WritePrometheus(&only)
	if r := hs.do("GET", "/metrics", ""); r.body != only.String() || strings.Contains(r.body, "go_goroutines") {
		t.Errorf("WithMetrics: %q", r.body)
	}
}

func TestAccessLog(t *testing.T) {
	var buf syncBuffer
	hs := newHarness(t, WithLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	hs.do("GET", "/connectors/nope?x=1", "")
	out := buf.String()
	for _, want := range []string{"level=DEBUG", `msg="REST request"`, "method=GET", "uri=\"/connectors/nope?x=1\"", "status=404"} {
		if !strings.Contains(out, want) {
			t.Errorf("access log lacks %q: %s", want, out)
		}
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestStartShutdown(t *testing.T) {
	h := newFake()
	h.block = make(chan struct{})
	s := New(h, WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if s.Addr() != nil {
		t.Fatal("Addr before Start")
	}
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	base := "http://" + s.Addr().String()

	// An in-flight request finishes during a graceful shutdown.
	got := make(chan int, 1)
	go func() {
		resp, err := http.Get(base + "/connectors")
		if err != nil {
			got <- -1
			return
		}
		resp.Body.Close()
		got <- resp.StatusCode
	}()
	waitFor(t, func() bool { return h.lastCall() == "Connectors" })
	shutdown := make(chan error, 1)
	go func() { shutdown <- s.Shutdown(context.Background()) }()
	time.Sleep(20 * time.Millisecond)
	close(h.block)
	if code := <-got; code != 200 {
		t.Errorf("in-flight request: %d", code)
	}
	if err := <-shutdown; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if _, err := http.Get(base + "/"); err == nil {
		t.Error("still serving after Shutdown")
	}
}

func TestShutdownDeadline(t *testing.T) {
	h := newFake()
	h.block = make(chan struct{})
	defer close(h.block)
	s := New(h, WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	go func() {
		if resp, err := http.Get("http://" + s.Addr().String() + "/connectors"); err == nil {
			resp.Body.Close()
		}
	}()
	waitFor(t, func() bool { return h.lastCall() == "Connectors" })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := s.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown = %v, want deadline exceeded", err)
	}
}

func TestStartBadAddress(t *testing.T) {
	s := New(newFake())
	if err := s.Start("256.0.0.1:99999"); err == nil {
		t.Fatal("Start on a bad address succeeded")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; i < 500; i++ {
		if cond() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("condition not reached")
}
