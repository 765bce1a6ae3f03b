package rest

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// Numbers and booleans are config values, kept as written, as Kafka's Jackson coerces them.
func TestNumericConfigValues(t *testing.T) {
	hs := newHarness(t)
	hs.expect("POST", "/connectors",
		`{"name":"n","config":{"connector.class":"org.example.FileSink","tasks.max":1,"enabled":true,"off":false,"ratio":1.50,"big":12345678901234567890,"exp":-2e3}}`,
		201, `{"name":"n","config":{"big":"12345678901234567890","connector.class":"org.example.FileSink","enabled":"true","exp":"-2e3","name":"n","off":"false","ratio":"1.50","tasks.max":"1"},"tasks":[],"type":"sink"}`)
	hs.expect("PUT", "/connectors/n/config", `{"connector.class":"org.example.FileSink","tasks.max":3}`, 200,
		`{"name":"n","config":{"connector.class":"org.example.FileSink","name":"n","tasks.max":"3"},"tasks":[],"type":"sink"}`)
	hs.expect("PATCH", "/connectors/n/config", `{"tasks.max":4,"flag":true}`, 200,
		`{"name":"n","config":{"connector.class":"org.example.FileSink","flag":"true","name":"n","tasks.max":"4"},"tasks":[],"type":"sink"}`)
	// Objects and arrays are still refused, naming the key.
	hs.expect("POST", "/connectors", `{"name":"m","config":{"a":"b","tasks.max":[1]}}`, 400,
		errJSON(400, `config value for "tasks.max" must be a string, got array`))
	hs.expect("PATCH", "/connectors/n/config", `{"x":{"y":1}}`, 400, errJSON(400, `config value for "x" must be a string, got object`))
}

func TestPatchConfig(t *testing.T) {
	hs := newHarness(t)
	hs.expect("PATCH", "/connectors/src/config", `{"tasks.max":"5","file":"/tmp/x","connector.class":null,"absent":null}`, 200,
		`{"name":"src","config":{"file":"/tmp/x","name":"src","tasks.max":"5"},"tasks":[{"connector":"src","task":0},{"connector":"src","task":1}],"type":"source"}`)
	if c := hs.h.lastCall(); c != "PatchConnectorConfig src" {
		t.Errorf("herder call %q", c)
	}
	if p := hs.h.lastPatch; p["connector.class"] != nil || p["absent"] != nil || *p["tasks.max"] != "5" || len(p) != 4 {
		t.Errorf("patch passed as %v", p)
	}
	hs.expect("GET", "/connectors/src/config", "", 200, `{"file":"/tmp/x","name":"src","tasks.max":"5"}`)
	// An empty patch changes nothing; a "name" equal to the connector's is fine.
	hs.expect("PATCH", "/connectors/src/config", `{"name":"src"}`, 200,
		`{"name":"src","config":{"file":"/tmp/x","name":"src","tasks.max":"5"},"tasks":[{"connector":"src","task":0},{"connector":"src","task":1}],"type":"source"}`)
	hs.expect("PATCH", "/connectors/src/config", `{}`, 200,
		`{"name":"src","config":{"file":"/tmp/x","name":"src","tasks.max":"5"},"tasks":[{"connector":"src","task":0},{"connector":"src","task":1}],"type":"source"}`)

	hs.h.calls = nil
	for _, tc := range []struct{ name, path, body string }{
		{"name mismatch", "/connectors/src/config", `{"name":"other"}`},
		{"name removed", "/connectors/src/config", `{"name":null}`},
		{"array body", "/connectors/src/config", `[]`},
		{"empty body", "/connectors/src/config", ``},
		{"bad json", "/connectors/src/config", `{"a":}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs.t = t
			if r := hs.do("PATCH", tc.path, tc.body); r.code != 400 {
				t.Errorf("got %d %s", r.code, r.body)
			}
		})
	}
	hs.t = t
	if len(hs.h.calls) != 0 {
		t.Errorf("herder called: %v", hs.h.calls)
	}
	hs.expect("PATCH", "/connectors/src/config", `{"name":"other"}`, 400, errJSON(400, "Connector name configuration (other) doesn't match connector name in the URL (src)"))
	hs.expect("PATCH", "/connectors/src/config", `{"name":null}`, 400, errJSON(400, "Connector name configuration cannot be removed: it is always the connector's name (src)"))
	hs.expect("PATCH", "/connectors/nope/config", `{"a":"b"}`, 404, errJSON(404, "Connector nope not found"))
}

func TestTopics(t *testing.T) {
	hs := newHarness(t)
	hs.h.conns["src"].topics = []string{"orders", "payments"}
	hs.expect("GET", "/connectors/src/topics", "", 200, `{"src":{"topics":["orders","payments"]}}`)
	hs.expect("GET", "/connectors/snk/topics", "", 200, `{"snk":{"topics":[]}}`)
	hs.expect("GET", "/connectors/nope/topics", "", 200, `{"nope":{"topics":[]}}`) // as Kafka: no 404
	hs.expect("PUT", "/connectors/src/topics/reset", "", 202, "")
	if c := hs.h.lastCall(); c != "ResetConnectorTopics src" {
		t.Errorf("herder call %q", c)
	}
	hs.expect("GET", "/connectors/src/topics", "", 200, `{"src":{"topics":[]}}`)

	off := newHarness(t, WithTopicTracking(false, true))
	off.expect("GET", "/connectors/src/topics", "", 403, errJSON(403, "Topic tracking is disabled."))
	off.expect("PUT", "/connectors/src/topics/reset", "", 403, errJSON(403, "Topic tracking is disabled."))
	noReset := newHarness(t, WithTopicTracking(true, false))
	noReset.expect("GET", "/connectors/src/topics", "", 200, `{"src":{"topics":[]}}`)
	noReset.expect("PUT", "/connectors/src/topics/reset", "", 403, errJSON(403, "Topic tracking reset is disabled."))
	if c := noReset.h.lastCall(); c != "ConnectorTopics src" {
		t.Errorf("herder called for a refused reset: %q", c)
	}
}

func TestOffsets(t *testing.T) {
	hs := newHarness(t)
	// GET works in any state; numbers keep their precision.
	hs.h.conns["src"].offsets = []connect.ConnectorOffset{{
		Partition: map[string]any{"filename": "/data/in.txt"},
		Offset:    map[string]any{"position": json.Number("9007199254740993")},
	}}
	hs.expect("GET", "/connectors/src/offsets", "", 200, `{"offsets":[{"partition":{"filename":"/data/in.txt"},"offset":{"position":9007199254740993}}]}`)
	hs.h.conns["snk"].offsets = []connect.ConnectorOffset{connect.SinkOffset(connect.TopicPartition{Topic: "t", Partition: 2}, 42)}
	hs.expect("GET", "/connectors/snk/offsets", "", 200, `{"offsets":[{"partition":{"kafka_partition":2,"kafka_topic":"t"},"offset":{"kafka_offset":42}}]}`)
	hs.h.conns["snk"].offsets = nil
	hs.expect("GET", "/connectors/snk/offsets", "", 200, `{"offsets":[]}`)
	hs.expect("GET", "/connectors/nope/offsets", "", 404, errJSON(404, "Connector nope not found"))

	// Not stopped: Kafka's 400.
	notStopped := "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/src/stop' endpoint"
	body := `{"offsets":[{"partition":{"filename":"/data/in.txt"},"offset":{"position":18446744073709551615}},{"partition":{"filename":"/old"},"offset":null}]}`
	hs.expect("PATCH", "/connectors/src/offsets", body, 400, errJSON(400, notStopped))
	hs.expect("DELETE", "/connectors/src/offsets", "", 400, errJSON(400, notStopped))

	hs.expect("PUT", "/connectors/src/stop", "", 204, "")
	hs.expect("PATCH", "/connectors/src/offsets", body, 200, `{"message":"The offsets for this connector have been altered successfully"}`)
	got := hs.h.lastOffset
	if len(got) != 2 || got[0].Offset["position"] != json.Number("18446744073709551615") || got[1].Offset != nil || got[1].Partition["filename"] != "/old" {
		t.Errorf("offsets passed as %#v", got)
	}
	hs.expect("GET", "/connectors/src/offsets", "", 200, `{"offsets":[{"partition":{"filename":"/data/in.txt"},"offset":{"position":18446744073709551615}},{"partition":{"filename":"/old"},"offset":null}]}`)
	hs.expect("DELETE", "/connectors/src/offsets", "", 200,
		`{"message":"The Connect framework-managed offsets for this connector have been reset successfully. However, if this connector manages offsets externally, they will need to be manually reset in the system that the connector uses."}`)
	hs.expect("GET", "/connectors/src/offsets", "", 200, `{"offsets":[]}`)
	hs.expect("DELETE", "/connectors/nope/offsets", "", 404, errJSON(404, "Connector nope not found"))
	hs.expect("PATCH", "/connectors/nope/offsets", body, 404, errJSON(404, "Connector nope not found"))

	// Sink offsets are checked with Kafka's texts.
	hs.expect("PUT", "/connectors/snk/stop", "", 204, "")
	hs.expect("PATCH", "/connectors/snk/offsets", `{"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":"1"},"offset":{"kafka_offset":"7"}}]}`, 200,
		`{"message":"The offsets for this connector have been altered successfully"}`)
	hs.expect("PATCH", "/connectors/snk/offsets", `{"offsets":[{"partition":{"kafka_topic":"t"},"offset":{"kafka_offset":7}}]}`, 400,
		errJSON(400, "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'"))
	hs.expect("PATCH", "/connectors/snk/offsets", `{"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":0},"offset":{"kafka_offset":"x"}}]}`, 400,
		errJSON(400, "Failed to parse the following Kafka offset value in the provided offsets: 'x'. Offset values for sink connectors need to be integers."))

	// Malformed requests never reach the herder.
	hs.h.calls = nil
	for _, tc := range []struct{ name, body, msg string }{
		{"empty list", `{"offsets":[]}`, "Partitions / offsets need to be provided for an alter offsets request"},
		{"missing list", `{}`, "Partitions / offsets need to be provided for an alter offsets request"},
		{"null list", `{"offsets":null}`, "Partitions / offsets need to be provided for an alter offsets request"},
		{"list not array", `{"offsets":{}}`, `"offsets" must be a JSON array, got object`},
		{"element not object", `{"offsets":[1]}`, `"offsets"[0] must be a JSON object, got number`},
		{"partition not object", `{"offsets":[{"partition":"p","offset":null}]}`, `"offsets"[0].partition must be a JSON object or null, got string`},
		{"offset not object", `{"offsets":[{"partition":{},"offset":[1]}]}`, `"offsets"[0].offset must be a JSON object or null, got array`},
		{"empty body", ``, "Request body is empty: expected a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs.t = t
			hs.expect("PATCH", "/connectors/src/offsets", tc.body, 400, errJSON(400, tc.msg))
		})
	}
	hs.t = t
	if len(hs.h.calls) != 0 {
		t.Errorf("herder called: %v", hs.h.calls)
	}
}

func TestPluginConfig(t *testing.T) {
	hs := newHarness(t)
	want := `[{"name":"file","type":"STRING","required":true,"default_value":null,"importance":"HIGH","documentation":"The file to write","group":"File","order":1,"width":"LONG","display_name":"File","dependents":[]},` +
		`{"name":"batch.size","type":"INT","required":false,"default_value":"100","importance":"LOW","documentation":"Records a write","group":null,"order":2,"width":"SHORT","display_name":"Batch size","dependents":["file"]}]`
	hs.expect("GET", "/connector-plugins/org.example.FileSink/config", "", 200, want)
	hs.expect("GET", "/connector-plugins/FileSink/config", "", 200, want)
	hs.expect("GET", "/connector-plugins/org.example.JsonConverter/config", "", 200, `[]`)
	hs.expect("GET", "/connector-plugins/org.example.Nope/config", "", 404, errJSON(404, "Unknown plugin org.example.Nope."))
}

func TestValidateConfig(t *testing.T) {
	hs := newHarness(t)
	def := func(name string) string {
		for _, k := range fileSinkKeys {
			if k.Name == name {
				b, _ := marshal(normKey(k))
				return string(b)
			}
		}
		return ""
	}
	// AKHQ sends a partial config to get the definitions for its form: 200 with the errors.
	hs.expect("PUT", "/connector-plugins/org.example.FileSink/config/validate", `{"connector.class":"org.example.FileSink","topics":"t","batch.size":50}`, 200,
		`{"name":"org.example.FileSink","error_count":1,"groups":["Common","File"],"configs":[`+
			`{"definition":`+def("file")+`,"value":{"name":"file","value":null,"recommended_values":[],"errors":["Missing required configuration \"file\" which has no default value."],"visible":true}},`+
			`{"definition":`+def("batch.size")+`,"value":{"name":"batch.size","value":"50","recommended_values":[],"errors":[],"visible":true}}]}`)
	if c := hs.h.lastCall(); c != "ValidateConfig org.example.FileSink" {
		t.Errorf("herder call %q", c)
	}
	if hs.h.lastConfig["batch.size"] != "50" || hs.h.lastConfig["topics"] != "t" {
		t.Errorf("config passed as %v", hs.h.lastConfig)
	}
	// A key with errors and no definition has "definition":null.
	r := hs.expect("PUT", "/connector-plugins/FileSink/config/validate", `{"connector.class":"org.example.FileSink","file":"/f","transforms":"bad"}`, 200,
		`{"name":"org.example.FileSink","error_count":1,"groups":["Common","File"],"configs":[`+
			`{"definition":`+def("file")+`,"value":{"name":"file","value":"/f","recommended_values":[],"errors":[],"visible":true}},`+
			`{"definition":`+def("batch.size")+`,"value":{"name":"batch.size","value":"100","recommended_values":[],"errors":[],"visible":true}},`+
			`{"definition":null,"value":{"name":"transforms.bad.type","value":null,"recommended_values":[],"errors":["Unknown transform bad"],"visible":false}}]}`)
	_ = r
	// Kafka's alias matching: the "Connector" suffix is ignored on both sides.
	hs.expect("PUT", "/connector-plugins/FileSinkConnector/config/validate", `{"connector.class":"org.example.FileSink","file":"f"}`, 200,
		`{"name":"org.example.FileSink","error_count":0,"groups":["Common","File"],"configs":[`+
			`{"definition":`+def("file")+`,"value":{"name":"file","value":"f","recommended_values":[],"errors":[],"visible":true}},`+
			`{"definition":`+def("batch.size")+`,"value":{"name":"batch.size","value":"100","recommended_values":[],"errors":[],"visible":true}}]}`)

	hs.h.calls = nil
	hs.expect("PUT", "/connector-plugins/FileSink/config/validate", `{"topics":"t","tasks.max":2}`, 400,
		errJSON(400, "Connector config {tasks.max=2, topics=t} contains no connector type"))
	hs.expect("PUT", "/connector-plugins/FileSink/config/validate", `{}`, 400, errJSON(400, "Connector config {} contains no connector type"))
	hs.expect("PUT", "/connector-plugins/FileSink/config/validate", `{"connector.class":"org.example.FileSource"}`, 400,
		errJSON(400, "Included connector type org.example.FileSource does not match request type FileSink"))
	hs.expect("PUT", "/connector-plugins/FileSink/config/validate", `["x"]`, 400, errJSON(400, "Invalid request body: expected a JSON object, got array"))
	if len(hs.h.calls) != 0 {
		t.Errorf("herder called: %v", hs.h.calls)
	}
}

func TestLoggers(t *testing.T) {
	hs := newHarness(t)
	hs.expect("GET", "/admin/loggers", "", 200, `{"root":{"level":"INFO","last_modified":null}}`)
	hs.expect("GET", "/admin/loggers/root", "", 200, `{"level":"INFO","last_modified":null}`)
	hs.expect("GET", "/admin/loggers/ROOT", "", 200, `{"level":"INFO","last_modified":null}`)
	hs.expect("GET", "/admin/loggers/org.foo", "", 404, errJSON(404, "Logger org.foo not found."))

	hs.expect("PUT", "/admin/loggers/org.foo", `{"level":"debug"}`, 200, `["org.foo"]`)
	if c := hs.h.lastCall(); c != "SetLogLevel org.foo DEBUG worker" {
		t.Errorf("herder call %q", c)
	}
	hs.expect("GET", "/admin/loggers/org.foo", "", 200, `{"level":"DEBUG","last_modified":1700000000000}`)
	hs.expect("PUT", "/admin/loggers/org.foo.bar", `{"level":"TRACE"}`, 200, `["org.foo.bar"]`)
	hs.expect("PUT", "/admin/loggers/org.foo?scope=WORKER", `{"level":"WARN","other":1}`, 200, `["org.foo","org.foo.bar"]`)
	hs.expect("GET", "/admin/loggers", "", 200,
		`{"org.foo":{"level":"WARN","last_modified":1700000000000},"org.foo.bar":{"level":"WARN","last_modified":1700000000000},"root":{"level":"INFO","last_modified":null}}`)
	// Cluster scope: 204; an unknown scope is taken as worker, as in Kafka.
	hs.expect("PUT", "/admin/loggers/org.foo?scope=cluster", `{"level":"ERROR"}`, 204, "")
	if c := hs.h.lastCall(); c != "SetLogLevel org.foo ERROR cluster" {
		t.Errorf("herder call %q", c)
	}
	hs.expect("PUT", "/admin/loggers/org.foo?scope=galaxy", `{"level":"INFO"}`, 200, `["org.foo","org.foo.bar"]`)

	hs.h.calls = nil
	hs.expect("PUT", "/admin/loggers/org.foo", `{}`, 400, errJSON(400, "Desired 'level' parameter was not specified in request."))
	hs.expect("PUT", "/admin/loggers/org.foo", `{"level":null}`, 400, errJSON(400, "Desired 'level' parameter was not specified in request."))
	hs.expect("PUT", "/admin/loggers/org.foo", `{"level":"LOUD"}`, 404, errJSON(404, "invalid log level 'LOUD'."))
	hs.expect("PUT", "/admin/loggers/org.foo", `{"level":["INFO"]}`, 400, errJSON(400, `"level" must be a string, got array`))
	hs.expect("PUT", "/admin/loggers/org.foo", ``, 400, errJSON(400, "Request body is empty: expected a JSON object"))
	if len(hs.h.calls) != 0 {
		t.Errorf("herder called: %v", hs.h.calls)
	}
}

// initial_state reaches the herder (KIP-980), in any case.
func TestCreateInitialStates(t *testing.T) {
	hs := newHarness(t)
	for _, tc := range []struct{ state, want string }{{"STOPPED", "STOPPED"}, {"running", "STARTED"}, {"Paused", "PAUSED"}} {
		hs.expect("POST", "/connectors", `{"name":"c-`+tc.state+`","config":{},"initial_state":"`+tc.state+`"}`, 201,
			`{"name":"c-`+tc.state+`","config":{"name":"c-`+tc.state+`"},"tasks":[],"type":"source"}`)
		if c := hs.h.lastCall(); c != "CreateConnector c-"+tc.state+" "+tc.want {
			t.Errorf("herder call %q", c)
		}
	}
}

// A plugin descriptor's config key converts directly to the REST entity.
var _ = connect.ConfigKeyInfo(wire.ConfigKey{})

// baseHerder is Herder as it was before the methods Unimplemented covers.
type baseHerder interface {
	ServerInfo(ctx context.Context) connect.ServerInfo
	Connectors(ctx context.Context) ([]string, error)
	ConnectorInfo(ctx context.Context, name string) (connect.ConnectorInfo, error)
	ConnectorConfig(ctx context.Context, name string) (map[string]string, error)
	CreateConnector(ctx context.Context, name string, config map[string]string, initial connect.TargetState) (connect.ConnectorInfo, error)
	PutConnectorConfig(ctx context.Context, name string, config map[string]string) (connect.ConnectorInfo, bool, error)
	DeleteConnector(ctx context.Context, name string) error
	ConnectorStatus(ctx context.Context, name string) (connect.ConnectorStateInfo, error)
	TaskConfigs(ctx context.Context, name string) ([]connect.TaskInfo, error)
	SetTargetState(ctx context.Context, name string, state connect.TargetState) error
	RestartConnector(ctx context.Context, name string, includeTasks, onlyFailed bool) (*connect.ConnectorStateInfo, error)
	RestartTask(ctx context.Context, id connect.TaskID) error
	Plugins(ctx context.Context, kinds ...wire.Kind) []connect.PluginInfo
	Health(ctx context.Context) connect.Health
	Workers(ctx context.Context) (connect.WorkersInfo, error)
}

// A herder with only the older methods satisfies Herder by embedding Unimplemented; the new routes
// then answer 501.
func TestUnimplemented(t *testing.T) {
	hs := newHarness(t)
	hs.srv.Close()
	hs.srv = httptest.NewServer(New(struct {
		baseHerder
		Unimplemented
	}{hs.h, Unimplemented{}}))
	defer hs.srv.Close()
	hs.expect("GET", "/connectors/src/offsets", "", 501, errJSON(501, "GET /connectors/{name}/offsets is not implemented by this worker yet"))
	hs.expect("PATCH", "/connectors/src/config", `{}`, 501, errJSON(501, "PATCH /connectors/{name}/config is not implemented by this worker yet"))
	hs.expect("GET", "/admin/loggers/root", "", 501, errJSON(501, "GET /admin/loggers/{name} is not implemented by this worker yet"))
	hs.expect("GET", "/connectors", "", 200, `["snk","src"]`)
}
