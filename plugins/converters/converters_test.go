package converters_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
	"github.com/wasmconnect/wasmconnect/wasmhost"
	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

// These tests run the converters module (the Rust crate of this directory) in the worker's plugin
// host, through the WebAssembly boundary, one value per call unless a test says otherwise.

func TestMain(m *testing.M) {
	code := m.Run()
	if host != nil {
		host.Close(context.Background())
	}
	pluginbuild.Cleanup()
	os.Exit(code)
}

var (
	hostOnce sync.Once
	host     *wasmhost.Host
	hostErr  error
)

// theHost is a plugin host with the converters module, shared by the package's tests.
func theHost(tb testing.TB) *wasmhost.Host {
	tb.Helper()
	dir := pluginbuild.DirOf(tb, "plugins/transforms")
	hostOnce.Do(func() {
		host, hostErr = wasmhost.New(context.Background(), wasmhost.Config{
			PluginPath: []string{dir},
			CacheDir:   filepath.Join(os.TempDir(), "wasmconnect-plugins-test-cache"),
			Logger:     slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)),
		})
		if hostErr == nil {
			for _, e := range host.LoadErrors() {
				hostErr = errors.Join(hostErr, e)
			}
		}
	})
	if hostErr != nil {
		tb.Fatal(hostErr)
	}
	return host
}

// conv is a converter opened in the plugin host.
type conv struct {
	o    *wasmhost.Object
	fuel *fuelSum
}

// fuelSum adds up the fuel of every call of a session: unlike time, the fuel a guest burns
// (about one unit per WebAssembly instruction run) does not move with the load of a shared machine.
// It also counts the calls and keeps the largest linear memory one ended with.
type fuelSum struct {
	n, maxMem uint64
	calls     int
}

func (f *fuelSum) Plugin(string, string) wasmhost.PluginCalls { return f }

func (f *fuelSum) Call(_ wire.Op, _ time.Duration, fuel, mem uint64, _ bool) {
	f.n += fuel
	f.calls++
	f.maxMem = max(f.maxMem, mem)
}

// open opens the converter class with cfg in a session of its own.
func open(tb testing.TB, class string, cfg map[string]string) (*conv, error) {
	tb.Helper()
	h := theHost(tb)
	p, err := h.Resolve(class, wire.KindConverter)
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	fuel := &fuelSum{}
	sess := h.NewSession(wasmhost.Env{Connector: "converters", Calls: fuel})
	tb.Cleanup(func() { sess.Close(ctx) })
	o, err := sess.Open(ctx, p, wire.RoleConverter, cfg)
	if err != nil {
		return nil, err
	}
	return &conv{o: o, fuel: fuel}, nil
}

func mustOpen(tb testing.TB, class string, cfg map[string]string) *conv {
	tb.Helper()
	c, err := open(tb, class, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func newJSON(t *testing.T, cfg map[string]string) *conv {
	return mustOpen(t, "org.apache.kafka.connect.json.JsonConverter", cfg)
}

// guestError is the converter's own message of err, as an error.
func guestError(err error) error {
	var ge *wasmhost.GuestError
	if errors.As(err, &ge) {
		return errors.New(ge.Message)
	}
	return err
}

func (c *conv) FromConnect(topic string, v wire.Data) ([]byte, error) {
	bs, err := c.o.FromConnect(context.Background(), []wire.TopicData{{Topic: topic, Value: v}})
	if err != nil {
		return nil, guestError(err)
	}
	return bs[0], nil
}

func (c *conv) ToConnect(topic string, b []byte) (wire.Data, error) {
	ds, err := c.o.ToConnect(context.Background(), []wire.TopicBytes{{Topic: topic, Bytes: b}})
	if err != nil {
		return wire.Data{}, guestError(err)
	}
	return ds[0], nil
}

func dataString(d wire.Data) string {
	switch d.Tag {
	case wire.TagNull:
		return "NULL"
	case wire.TagString:
		return "STRING " + string(d.Bytes)
	case wire.TagBytes:
		return "BYTES " + string(d.Bytes)
	}
	return "JSON " + string(d.Schema) + " " + string(d.Bytes)
}

const envelopeError = `JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain additional fields.` +
	` If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter configuration.`

const personSchema = `{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"string","optional":true,"field":"name"},` +
	`{"type":"array","items":{"type":"string","optional":false},"optional":true,"field":"tags"},` +
	`{"type":"map","keys":{"type":"string","optional":false},"values":{"type":"int64","optional":false},"optional":true,"field":"counts"}],"optional":false,"name":"person"}`

func TestJsonConverterFromConnect(t *testing.T) {
	enabled := newJSON(t, nil)
	disabled := newJSON(t, map[string]string{"schemas.enable": "false"})
	numeric := newJSON(t, map[string]string{"decimal.format": "numeric"})
	noReplace := newJSON(t, map[string]string{"replace.null.with.default": "false"})
	decSchema := `{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"}}`
	for _, tc := range []struct {
		name string
		c    *conv
		in   wire.Data
		want string // "<nil>" for null bytes
	}{
		// Exactly what Kafka's FileStreamSource + JsonConverter write.
		{"file line", enabled, wire.String("line"), `{"schema":{"type":"string","optional":false},"payload":"line"}`},
		{"escapes as Jackson", enabled, wire.String("a\"b\\c\n\t\x01</>\u2028é"), `{"schema":{"type":"string","optional":false},"payload":"a\"b\\c\n\t\u0001</>` + "\u2028é" + `"}`},
		{"invalid utf8", disabled, wire.String("a\xffb"), `"a` + "\uFFFD" + `b"`},
		{"bytes", enabled, wire.Bytes([]byte{0, 1, 2, 255}), `{"schema":{"type":"bytes","optional":true},"payload":"AAEC/w=="}`},
		{"string no schemas", disabled, wire.String("line"), `"line"`},
		{"bytes no schemas", disabled, wire.Bytes([]byte("hi")), `"aGk="`},
		{"null", enabled, wire.Null(), "<nil>"},
		{"null no schemas", disabled, wire.Null(), "<nil>"},
		{"schemaless json", enabled, wire.JSON(nil, []byte(` {"a": [1, 2.5, "x"]} `)), `{"schema":null,"payload":{"a":[1,2.5,"x"]}}`},
		{"schemaless json no schemas", disabled, wire.JSON(nil, []byte(`{"a":1}`)), `{"a":1}`},
		{"schemaless json null", enabled, wire.JSON(nil, []byte(`null`)), "<nil>"},
		{"struct", enabled, wire.JSON([]byte(personSchema), []byte(`{"id":1,"name":"ann","tags":["a"],"counts":{"x":2}}`)),
			`{"schema":` + personSchema + `,"payload":{"id":1,"name":"ann","tags":["a"],"counts":{"x":2}}}`},
		{"struct no schemas", disabled, wire.JSON([]byte(personSchema), []byte(`{"id":1,"name":null}`)), `{"id":1,"name":null}`},
		{"struct field order and extra fields", enabled, wire.JSON([]byte(personSchema), []byte(`{"name":"b","extra":true,"id":2}`)),
			`{"schema":` + personSchema + `,"payload":{"id":2,"name":"b","tags":null,"counts":null}}`},
		{"int schema", disabled, wire.JSON([]byte(`{"type":"int64","optional":false}`), []byte(`42`)), `42`},
		{"optional null with schema", enabled, wire.JSON([]byte(`{"type":"string","optional":true}`), []byte(`null`)),
			`{"schema":{"type":"string","optional":true},"payload":null}`},
		{"null replaced by default", enabled, wire.JSON([]byte(`{"type":"int32","optional":true,"default":7}`), []byte(`null`)),
			`{"schema":{"type":"int32","optional":true,"default":7},"payload":7}`},
		{"null kept without replace", noReplace, wire.JSON([]byte(`{"type":"int32","optional":true,"default":7}`), []byte(`null`)),
			`{"schema":{"type":"int32","optional":true,"default":7},"payload":null}`},
		{"decimal base64", enabled, wire.JSON([]byte(decSchema), []byte(`"MDk="`)), `{"schema":` + decSchema + `,"payload":"MDk="}`},
		{"decimal numeric", numeric, wire.JSON([]byte(decSchema), []byte(`"MDk="`)), `{"schema":` + decSchema + `,"payload":123.45}`},
		{"decimal number to base64", enabled, wire.JSON([]byte(decSchema), []byte(`-1.5`)), `{"schema":` + decSchema + `,"payload":"/2o="}`},
	} {
		got, err := tc.c.FromConnect("t", tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		gs := string(got)
		if got == nil {
			gs = "<nil>"
		}
		if gs != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, gs, tc.want)
		}
	}
}

func TestJsonConverterToConnect(t *testing.T) {
	enabled := newJSON(t, nil)
	disabled := newJSON(t, map[string]string{"schemas.enable": "false"})
	for _, tc := range []struct {
		name string
		c    *conv
		in   []byte
		want string
	}{
		{"file line", enabled, []byte(`{"schema":{"type":"string","optional":false},"payload":"line"}`), `JSON {"type":"string","optional":false} "line"`},
		{"schema compacted", enabled, []byte(`{"payload": 5, "schema": { "type": "int8" }}`), `JSON {"type":"int8"} 5`},
		{"null bytes", enabled, nil, "NULL"},
		{"null schema and payload", enabled, []byte(`{"schema":null,"payload":null}`), "NULL"},
		{"schemaless", enabled, []byte(`{"schema":null,"payload":{"a":1}}`), `JSON  {"a":1}`},
		{"plain json", disabled, []byte(` {"a": 1} `), `JSON  {"a": 1}`},
		{"plain null", disabled, []byte(`null`), "NULL"},
		{"plain string", disabled, []byte(`"x"`), `JSON  "x"`},
		{"struct", enabled, []byte(`{"schema":` + personSchema + `,"payload":{"id":1,"name":"ann","tags":["a"],"counts":{"x":2}}}`),
			`JSON ` + personSchema + ` {"id":1,"name":"ann","tags":["a"],"counts":{"x":2}}`},
		{"struct missing optional field", enabled, []byte(`{"schema":` + personSchema + `,"payload":{"id":1}}`),
			`JSON ` + personSchema + ` {"id":1}`},
		{"struct extra field dropped", enabled, []byte(`{"schema":` + personSchema + `,"payload":{"zzz":0,"id":1}}`),
			`JSON ` + personSchema + ` {"id":1,"name":null,"tags":null,"counts":null}`},
		{"default for null field", enabled, []byte(`{"schema":{"type":"struct","fields":[{"type":"string","optional":true,"default":"d","field":"s"}]},"payload":{"s":null}}`),
			`JSON {"type":"struct","fields":[{"type":"string","optional":true,"default":"d","field":"s"}]} {"s":"d"}`},
		{"int from float", enabled, []byte(`{"schema":{"type":"int32"},"payload":3.0}`), `JSON {"type":"int32"} 3`},
		{"non-string map keys", enabled, []byte(`{"schema":{"type":"map","keys":{"type":"int32"},"values":{"type":"boolean"}},"payload":[[1,true],[2,false]]}`),
			`JSON {"type":"map","keys":{"type":"int32"},"values":{"type":"boolean"}} [[1,true],[2,false]]`},
		{"decimal number", enabled, []byte(`{"schema":{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"}},"payload":123.45}`),
			`JSON {"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"}} "MDk="`},
		{"bytes", enabled, []byte(`{"schema":{"type":"bytes","optional":true},"payload":"AAEC/w=="}`), `JSON {"type":"bytes","optional":true} "AAEC/w=="`},
	} {
		got, err := tc.c.ToConnect("t", tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if gs := dataString(got); gs != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, gs, tc.want)
		}
	}
}

func TestJsonConverterErrors(t *testing.T) {
	enabled := newJSON(t, nil)
	disabled := newJSON(t, map[string]string{"schemas.enable": "false"})
	s := func(schema, payload string) []byte {
		return []byte(`{"schema":` + schema + `,"payload":` + payload + `}`)
	}
	for _, tc := range []struct {
		name string
		c    *conv
		in   []byte
		want string
	}{
		{"plain json with schemas", enabled, []byte(`{"a":1}`), envelopeError},
		{"extra field", enabled, []byte(`{"schema":null,"payload":1,"x":2}`), envelopeError},
		{"only payload", enabled, []byte(`{"payload":1}`), envelopeError},
		{"not an object", enabled, []byte(`[1]`), envelopeError},
		{"json null", enabled, []byte(`null`), envelopeError},
		{"empty", enabled, []byte{}, envelopeError},
		{"bad json", enabled, []byte(`{"schema":`), "Converting byte[] to Kafka Connect data failed due to serialization error: "},
		{"bad plain json", disabled, []byte(`{x}`), "Converting byte[] to Kafka Connect data failed due to serialization error: "},
		{"no type", enabled, s(`{"optional":true}`, `1`), "Schema must contain 'type' field"},
		{"unknown type", enabled, s(`{"type":"int128"}`, `1`), "Unknown schema type: int128"},
		{"array without items", enabled, s(`{"type":"array"}`, `[]`), "Array schema did not specify the element type"},
		{"map without keys", enabled, s(`{"type":"map","values":{"type":"string"}}`, `{}`), "Map schema did not specify the key type"},
		{"fields not array", enabled, s(`{"type":"struct","fields":{}}`, `{}`), `Struct schema's "fields" argument is not an array.`},
		{"field name", enabled, s(`{"type":"struct","fields":[{"type":"string"}]}`, `{}`), "Struct schema's field name not specified properly"},
		{"string for int", enabled, s(`{"type":"int32"}`, `"abc"`), `Invalid value for schema type INT32 at payload: found STRING "abc"`},
		{"int out of range", enabled, s(`{"type":"int8"}`, `300`), "Invalid value for schema type INT8 at payload: 300 is not an integer in range"},
		{"fraction for int", enabled, s(`{"type":"int64"}`, `1.5`), "Invalid value for schema type INT64 at payload: 1.5 is not an integer in range"},
		{"bool for string", enabled, s(`{"type":"string"}`, `true`), "Invalid value for schema type STRING at payload: found BOOLEAN true"},
		{"null for required", enabled, s(`{"type":"string","optional":false}`, `null`), "Invalid null value for required STRING field (at payload)"},
		{"struct not object", enabled, s(`{"type":"struct","fields":[]}`, `[1]`), "Structs should be encoded as JSON objects, but found ARRAY (at payload)"},
		{"nested field", enabled, s(personSchema, `{"id":1,"tags":["a",2]}`), `Invalid value for schema type STRING at payload.tags[1]: found NUMBER 2`},
		{"missing required field", enabled, s(personSchema, `{"name":"x"}`), "Invalid null value for required INT32 field (at payload.id)"},
		{"map values", enabled, s(personSchema, `{"id":1,"counts":{"a":"b"}}`), `Invalid value for schema type INT64 at payload.counts.a: found STRING "b"`},
		{"string map as array", enabled, s(`{"type":"map","keys":{"type":"string"},"values":{"type":"string"}}`, `[]`), "Maps with string fields should be encoded as JSON objects, but found ARRAY (at payload)"},
		{"tuple map as object", enabled, s(`{"type":"map","keys":{"type":"int8"},"values":{"type":"string"}}`, `{}`), "Maps with non-string fields should be encoded as JSON array of tuples, but found OBJECT (at payload)"},
		{"bad tuple", enabled, s(`{"type":"map","keys":{"type":"int8"},"values":{"type":"string"}}`, `[[1]]`), "Found invalid map entry, expected length 2 but found :1 (at payload[0])"},
		{"bad base64", enabled, s(`{"type":"bytes"}`, `"!!"`), "Invalid bytes field at payload: "},
		{"number for bytes", enabled, s(`{"type":"bytes"}`, `12`), "Invalid value for schema type BYTES at payload: found NUMBER 12"},
		{"bad default", enabled, s(`{"type":"int32","default":"x"}`, `1`), `Invalid default value: Invalid value for schema type INT32 at default: found STRING "x"`},
		{"decimal rounding", enabled, s(`{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"1"}}`, `1.25`), "rounding necessary"},
	} {
		_, err := tc.c.ToConnect("t", tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v\nwant %s", tc.name, err, tc.want)
		}
	}
	// Writing.
	for _, tc := range []struct {
		name string
		in   wire.Data
		want string
	}{
		{"required null", wire.JSON([]byte(`{"type":"string"}`), []byte(`null`)), "Conversion error: null value for field that is required and has no default value"},
		{"type mismatch", wire.JSON([]byte(`{"type":"boolean"}`), []byte(`1`)), "Invalid value for schema type BOOLEAN at payload: found NUMBER 1"},
		{"bad payload", wire.JSON(nil, []byte(`{`)), "Converting Kafka Connect data to byte[] failed due to serialization error"},
		{"bad schema", wire.JSON([]byte(`{"type":"nope"}`), []byte(`1`)), "Unknown schema type: nope"},
	} {
		_, err := enabled.FromConnect("t", tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("write %s: got %v\nwant %s", tc.name, err, tc.want)
		}
	}
}

func TestJsonConverterRoundTrip(t *testing.T) {
	for _, cfg := range []map[string]string{{}, {"schemas.enable": "false"}, {"decimal.format": "NUMERIC"}, {"schemas.cache.size": "1"}} {
		c := newJSON(t, cfg)
		for _, in := range []wire.Data{
			wire.JSON([]byte(personSchema), []byte(`{"id":1,"name":"ann","tags":["a","b"],"counts":{"x":2}}`)),
			wire.JSON([]byte(`{"type":"int64","optional":false}`), []byte(`-9223372036854775808`)),
			wire.JSON([]byte(`{"type":"double","optional":false}`), []byte(`1.5E300`)),
			wire.JSON([]byte(`{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"3"}}`), []byte(`"/2o="`)),
			wire.JSON(nil, []byte(`{"nested":{"a":[true,null]}}`)),
			wire.Null(),
		} {
			b, err := c.FromConnect("t", in)
			if err != nil {
				t.Fatalf("%v: FromConnect(%s): %v", cfg, dataString(in), err)
			}
			out, err := c.ToConnect("t", b)
			if err != nil {
				t.Fatalf("%v: ToConnect(%s): %v", cfg, b, err)
			}
			want := in
			if cfg["schemas.enable"] == "false" && in.Tag == wire.TagJSON {
				want = wire.JSON(nil, in.Bytes) // the schema is not written
			}
			if dataString(out) != dataString(want) {
				t.Errorf("%v: round trip of %s gave %s (bytes %s)", cfg, dataString(in), dataString(out), b)
			}
		}
	}
	// String and bytes come back as JSON values with their schemas.
	c := newJSON(t, nil)
	b, _ := c.FromConnect("t", wire.String("x"))
	if out, _ := c.ToConnect("t", b); dataString(out) != `JSON {"type":"string","optional":false} "x"` {
		t.Errorf("string round trip: %s", dataString(out))
	}
}

func TestStringConverter(t *testing.T) {
	c := mustOpen(t, "org.apache.kafka.connect.storage.StringConverter", map[string]string{"converter.encoding": "UTF-8"})
	if _, err := open(t, "StringConverter", map[string]string{"converter.encoding": "UTF-16"}); err == nil ||
		guestError(err).Error() != `StringConverter: converter.encoding "UTF-16" is not supported: only UTF-8 is` {
		t.Errorf("UTF-16: %v", err)
	}
	for _, tc := range []struct {
		in   wire.Data
		want string
	}{
		{wire.String("héllo"), "héllo"},
		{wire.Bytes([]byte("raw")), "raw"},
		{wire.JSON([]byte(`{"type":"string"}`), []byte(`"quoted \"x\""`)), `quoted "x"`},
		{wire.JSON(nil, []byte(`{"a":1}`)), `{"a":1}`},
		{wire.JSON(nil, []byte(`12`)), `12`},
	} {
		got, err := c.FromConnect("t", tc.in)
		if err != nil || string(got) != tc.want {
			t.Errorf("FromConnect(%s) = %q %v, want %q", dataString(tc.in), got, err, tc.want)
		}
	}
	if got, err := c.FromConnect("t", wire.Null()); got != nil || err != nil {
		t.Errorf("null: %q %v", got, err)
	}
	if got, _ := c.ToConnect("t", []byte("abc")); dataString(got) != "STRING abc" {
		t.Errorf("ToConnect: %s", dataString(got))
	}
	if got, _ := c.ToConnect("t", []byte{}); got.Tag != wire.TagString || len(got.Bytes) != 0 {
		t.Errorf("empty: %s", dataString(got))
	}
	if got, _ := c.ToConnect("t", nil); !got.IsNull() {
		t.Errorf("null: %s", dataString(got))
	}
	if got, _ := c.ToConnect("t", []byte("a\xffb")); string(got.Bytes) != "a\uFFFDb" {
		t.Errorf("invalid UTF-8: %q", got.Bytes)
	}
}

func TestByteArrayConverter(t *testing.T) {
	c := mustOpen(t, "org.apache.kafka.connect.converters.ByteArrayConverter", nil)
	if got, err := c.FromConnect("t", wire.Bytes([]byte{1, 2})); err != nil || !bytes.Equal(got, []byte{1, 2}) {
		t.Errorf("bytes: %v %v", got, err)
	}
	if got, err := c.FromConnect("t", wire.Bytes(nil)); err != nil || got == nil || len(got) != 0 {
		t.Errorf("empty bytes: %v %v", got, err)
	}
	if got, err := c.FromConnect("t", wire.Null()); err != nil || got != nil {
		t.Errorf("null: %v %v", got, err)
	}
	if got, err := c.FromConnect("t", wire.JSON([]byte(`{"type":"bytes","optional":true}`), []byte(`"AQI="`))); err != nil || !bytes.Equal(got, []byte{1, 2}) {
		t.Errorf("JSON bytes: %v %v", got, err)
	}
	for _, tc := range []struct {
		in   wire.Data
		want string
	}{
		{wire.String("x"), "ByteArrayConverter is not compatible with objects of type class java.lang.String"},
		{wire.JSON(nil, []byte(`{"a":1}`)), "ByteArrayConverter is not compatible with objects of type class java.util.HashMap"},
		{wire.JSON(nil, []byte(`12`)), "ByteArrayConverter is not compatible with objects of type class java.lang.Long"},
		{wire.JSON([]byte(`{"type":"string"}`), []byte(`"x"`)), "Invalid schema type for ByteArrayConverter: STRING"},
	} {
		if _, err := c.FromConnect("t", tc.in); err == nil || err.Error() != tc.want {
			t.Errorf("FromConnect(%s): %v, want %s", dataString(tc.in), err, tc.want)
		}
	}
	if got, _ := c.ToConnect("t", []byte{9}); got.Tag != wire.TagBytes || !bytes.Equal(got.Bytes, []byte{9}) {
		t.Errorf("ToConnect: %s", dataString(got))
	}
	if got, _ := c.ToConnect("t", nil); !got.IsNull() {
		t.Errorf("ToConnect null: %s", dataString(got))
	}
}

// TestDescriptorAndSettings checks the module's descriptor and the settings' checks as the worker
// sees them.
func TestDescriptorAndSettings(t *testing.T) {
	h := theHost(t)
	for name, class := range map[string]string{
		"JsonConverter":      "org.apache.kafka.connect.json.JsonConverter",
		"StringConverter":    "org.apache.kafka.connect.storage.StringConverter",
		"ByteArrayConverter": "org.apache.kafka.connect.converters.ByteArrayConverter",
	} {
		p, err := h.Resolve(name, wire.KindConverter)
		if err != nil || p.Class != class {
			t.Errorf("%s: %+v %v", name, p, err)
		}
	}
	c := mustOpen(t, "org.apache.kafka.connect.json.JsonConverter", map[string]string{"converter.type": "value", "schemas.enable": "true"})
	bs, err := c.o.FromConnect(context.Background(), []wire.TopicData{{Topic: "t", Value: wire.String("line")}, {Topic: "t", Value: wire.Null()}})
	if err != nil || len(bs) != 2 || string(bs[0]) != `{"schema":{"type":"string","optional":false},"payload":"line"}` || bs[1] != nil {
		t.Errorf("FROM_CONNECT: %q %v", bs, err)
	}
	if _, err := c.ToConnect("t", []byte(`{"a":1}`)); err == nil || err.Error() != envelopeError {
		t.Errorf("TO_CONNECT plain JSON: %v", err)
	}
	for cfg, want := range map[string]string{
		"decimal.format=HEX":          "Invalid value HEX for configuration decimal.format: String must be one of (case insensitive): BASE64, NUMERIC",
		"schemas.enable=yes":          "Invalid value yes for configuration schemas.enable: Expected value to be either true or false",
		"schemas.cache.size=many":     "Invalid value many for configuration schemas.cache.size: Not a number of type INT",
		"converter.type=middle":       "Invalid value middle for configuration converter.type: String must be one of: key, value, header",
		"replace.null.with.default=0": "Invalid value 0 for configuration replace.null.with.default: Expected value to be either true or false",
	} {
		k, v, _ := strings.Cut(cfg, "=")
		if _, err := open(t, "JsonConverter", map[string]string{k: v}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", cfg, err)
		}
	}
	// decimal.format is case insensitive.
	numeric := mustOpen(t, "JsonConverter", map[string]string{"decimal.format": "Numeric", "schemas.enable": "false"})
	dec := []byte(`{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"}}`)
	if b, err := numeric.FromConnect("t", wire.JSON(dec, []byte(`"MDk="`))); err != nil || string(b) != "123.45" {
		t.Errorf("NUMERIC: %s %v", b, err)
	}
}

// TestRustUnitTests runs the crate's own unit tests (the #[test] functions of src/: JSON syntax
// texts, base64, decimals, schemas) natively, against a native build of the SDK.
func TestRustUnitTests(t *testing.T) {
	rustc, err := pluginbuild.Rustc()
	if err != nil {
		pluginbuild.Missing(t, "rustc", pluginbuild.RustInstall)
	}
	dir := t.TempDir()
	run := func(args ...string) []byte {
		out, err := exec.Command(rustc, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("rustc %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	sdk := filepath.Join(dir, "libwasmconnect.rlib")
	run("--edition", "2021", "--crate-type", "rlib", "--crate-name", "wasmconnect", "-o", sdk, "../../sdk/rust/src/lib.rs")
	bin := filepath.Join(dir, "converters-tests")
	run("--edition", "2021", "--test", "--crate-name", "converters", "--extern", "wasmconnect="+sdk, "-o", bin, "src/lib.rs")
	out, err := exec.Command(bin).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// TestJsonConverterLogicalTypesAndNulls reads and writes the logical types, defaults with and
// without replace.null.with.default, and maps written again (sorted, the last of repeated keys).
func TestJsonConverterLogicalTypesAndNulls(t *testing.T) {
	enabled := newJSON(t, nil)
	disabled := newJSON(t, map[string]string{"schemas.enable": "false"})
	numeric := newJSON(t, map[string]string{"schemas.enable": "false", "decimal.format": "NUMERIC"})
	keep := newJSON(t, map[string]string{"schemas.enable": "false", "replace.null.with.default": "false"})
	const logical = `{"type":"struct","fields":[` +
		`{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Date","version":1,"field":"d"},` +
		`{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Time","version":1,"field":"t"},` +
		`{"type":"int64","optional":false,"name":"org.apache.kafka.connect.data.Timestamp","version":1,"field":"ts"},` +
		`{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"},"field":"dec"},` +
		`{"type":"string","optional":true,"default":"none","field":"s"}],"optional":false}`
	in := `{"ts":1700000000000,"t":3600000,"x":[1,{"y":null}],"d":19000,"dec":"MDk=","s":null}`
	const requiredDefault = `{"type":"struct","fields":[{"type":"int32","optional":false,"default":5,"field":"a"},{"type":"string","optional":true,"field":"b"}],"optional":false}`
	for _, tc := range []struct {
		name string
		c    *conv
		in   wire.Data
		want string
	}{
		// An unknown field dropped, the null replaced by the default: written again in the schema's order.
		{"logical types", disabled, wire.JSON([]byte(logical), []byte(in)), `{"d":19000,"t":3600000,"ts":1700000000000,"dec":"MDk=","s":"none"}`},
		{"logical types numeric", numeric, wire.JSON([]byte(logical), []byte(in)), `{"d":19000,"t":3600000,"ts":1700000000000,"dec":123.45,"s":"none"}`},
		{"null kept", keep, wire.JSON([]byte(logical), []byte(`{"d":1,"t":2,"ts":3,"dec":null,"s":null}`)), `{"d":1,"t":2,"ts":3,"dec":null,"s":null}`},
		{"absent field kept null", keep, wire.JSON([]byte(logical), []byte(`{"d":1,"t":2,"ts":3}`)), `{"d":1,"t":2,"ts":3}`},
		{"required null kept default", keep, wire.JSON([]byte(requiredDefault), []byte(`{"a":null,"b":"x"}`)), `{"a":5,"b":"x"}`},
		{"required absent kept default", keep, wire.JSON([]byte(requiredDefault), []byte(`{"b":"x"}`)), `{"a":5,"b":"x"}`},
		{"absent field default", disabled, wire.JSON([]byte(logical), []byte(`{"d":1,"t":2,"ts":3}`)), `{"d":1,"t":2,"ts":3,"dec":null,"s":"none"}`},
		{"map written again", disabled, wire.JSON([]byte(`{"type":"map","keys":{"type":"string"},"values":{"type":"int32"}}`), []byte(`{"b":1,"a":2.0,"b":3}`)), `{"a":2,"b":3}`},
		{"map kept", disabled, wire.JSON([]byte(`{"type":"map","keys":{"type":"string"},"values":{"type":"int32"}}`), []byte(`{ "b": 1, "a": 2 }`)), `{"b":1,"a":2}`},
		{"float written again", disabled, wire.JSON([]byte(`{"type":"array","items":{"type":"double"}}`), []byte(`[1e2, 2.50, 1]`)), `[1e2,2.50,1]`},
		{"decimal default", numeric, wire.JSON([]byte(`{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"1"},"default":"AQ=="}`), []byte(`null`)), `0.1`},
		{"schema kept as written", enabled, wire.JSON([]byte(` { "type" : "int8" } `), []byte(` 5 `)), `{"schema":{"type":"int8"},"payload":5}`},
	} {
		got, err := tc.c.FromConnect("t", tc.in)
		if err != nil || string(got) != tc.want {
			t.Errorf("%s:\n got %s %v\nwant %s", tc.name, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		name, in, want string
	}{
		{"time out of range", `{"schema":{"type":"int32","name":"org.apache.kafka.connect.data.Time"},"payload":86400001}`,
			"Time values must use number of milliseconds greater than 0 and less than 86400000 (at payload)"},
		{"decimal as string of digits", `{"schema":{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"}},"payload":"12.5"}`,
			"Invalid bytes field at payload: illegal base64 data at input byte 2"},
		{"date as string", `{"schema":{"type":"int32","name":"org.apache.kafka.connect.data.Date"},"payload":"2024-01-01"}`,
			`Invalid value for schema type INT32 at payload: found STRING "2024-01-01"`},
		{"deep nesting in an unknown field", `{"schema":{"type":"struct","fields":[]},"payload":{"x":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}}`, ""},
	} {
		_, err := enabled.ToConnect("t", []byte(tc.in))
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || err.Error() != tc.want) {
			t.Errorf("%s: got %v\nwant %s", tc.name, err, tc.want)
		}
	}
	// Many schemas through a cache of one: each value keeps its own.
	small := newJSON(t, map[string]string{"schemas.cache.size": "1"})
	for i := 0; i < 6; i++ {
		schema := `{"type":"int32"}`
		if i%2 == 1 {
			schema = `{"type":"string","optional":true}`
		}
		d, err := small.ToConnect("t", []byte(`{"schema":`+schema+`,"payload":null}`))
		if i%2 == 0 && (err == nil || !strings.Contains(err.Error(), "Invalid null value for required INT32 field")) || i%2 == 1 && (err != nil || string(d.Schema) != schema) {
			t.Errorf("value %d: %s %v", i, dataString(d), err)
		}
	}
}

// benchBatch converts batches of 1,000 values through the plugin host, as a task's converter
// stage does, and reports records/s.
func benchBatch(b *testing.B, class string, cfg map[string]string, call func(c *conv) error) {
	benchBatchOf(b, 1000, class, cfg, call)
}

// benchBatchOf is benchBatch of batches of n values.
func benchBatchOf(b *testing.B, n int, class string, cfg map[string]string, call func(c *conv) error) {
	c := mustOpen(b, class, cfg)
	b.ReportAllocs()
	b.ResetTimer()
	c.fuel.n = 0
	for b.Loop() {
		if err := call(c); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(c.fuel.n)/float64(b.N*n), "fuel/record")
}

// The data plane's busiest call: FileStreamSource lines through JsonConverter (schemas off, as
// make bench runs it; and on).
func BenchmarkJsonConverterFromConnectLines(b *testing.B) {
	values := make([]wire.TopicData, 1000)
	for i := range values {
		values[i] = wire.TopicData{Topic: "lines", Value: wire.String(strings.Repeat("x", 90) + "0123456789")}
	}
	for _, schemas := range []string{"false", "true"} {
		b.Run("schemas.enable="+schemas, func(b *testing.B) {
			benchBatch(b, "JsonConverter", map[string]string{"schemas.enable": schemas}, func(c *conv) error {
				_, err := c.o.FromConnect(context.Background(), values)
				return err
			})
		})
	}
	// As a source task runs it: a batch of FileStreamSource's default size (2,000 lines, more than
	// one call's worth), into the buffers the batch before returned.
	lines := slices.Repeat(values, 2)
	var buf []byte
	var out [][]byte
	b.Run("batch.size=2000/reused", func(b *testing.B) {
		benchBatchOf(b, len(lines), "JsonConverter", map[string]string{"schemas.enable": "false"}, func(c *conv) error {
			var err error
			out, buf, err = c.o.FromConnectInto(context.Background(), lines, buf, out)
			return err
		})
	})
}

// The same lines after the bench table's chain (HoistField$Value field=line, InsertField$Value
// static.field=origin): structs with a schema, which JsonConverter checks the payload against
// before it writes it (schemas off, as make bench runs it; and on); next to lines, a run of both
// shows what the chain adds to the conversion.
//
//	go test -run '^$' -bench 'FromConnect(Lines|Hoisted)' -benchmem ./plugins/converters/
func BenchmarkJsonConverterFromConnectHoisted(b *testing.B) {
	schema := []byte(`{"type":"struct","fields":[{"type":"string","optional":false,"field":"line"},{"type":"string","optional":true,"field":"origin"}],"optional":false}`)
	values := make([]wire.TopicData, 1000)
	for i := range values {
		values[i] = wire.TopicData{Topic: "lines", Value: wire.JSON(schema, []byte(`{"line":"`+strings.Repeat("x", 90)+`0123456789","origin":"bench"}`))}
	}
	for _, schemas := range []string{"false", "true"} {
		b.Run("schemas.enable="+schemas, func(b *testing.B) {
			benchBatch(b, "JsonConverter", map[string]string{"schemas.enable": schemas}, func(c *conv) error {
				_, err := c.o.FromConnect(context.Background(), values)
				return err
			})
		})
	}
}

func BenchmarkJsonConverterToConnectStruct(b *testing.B) {
	in := []byte(`{"schema":` + personSchema + `,"payload":{"id":1,"name":"ann","tags":["a","b"],"counts":{"x":2}}}`)
	values := make([]wire.TopicBytes, 1000)
	for i := range values {
		values[i] = wire.TopicBytes{Topic: "t", Bytes: in}
	}
	benchBatch(b, "JsonConverter", nil, func(c *conv) error {
		_, err := c.o.ToConnect(context.Background(), values)
		return err
	})
}

// A batch larger than one FROM_CONNECT call takes goes to the guest in several
// (wasmhost.Object.FromConnectInto): the values come back in order and as one call per value gives
// them, nulls included, and the converter's memory stays the size of one call's values, not grown
// to the batch's (which it would keep: linear memory never shrinks).
func TestFromConnectLargeBatchInSeveralCalls(t *testing.T) {
	ctx := context.Background()
	c := newJSON(t, map[string]string{"schemas.enable": "false"})
	values := make([]wire.TopicData, 8000) // ~1 MB encoded
	for i := range values {
		values[i] = wire.TopicData{Topic: "lines", Value: wire.String(fmt.Sprintf("%06d %s", i, strings.Repeat("x", 110)))}
	}
	values[4321].Value = wire.Null()
	values[7000].Value = wire.String(strings.Repeat("y", 100_000)) // larger than a call: alone
	want := func(i int) string {
		switch i {
		case 4321:
			return "null"
		case 7000:
			return `"` + strings.Repeat("y", 100_000) + `"`
		}
		return fmt.Sprintf(`"%06d %s"`, i, strings.Repeat("x", 110))
	}
	var buf []byte
	var out [][]byte
	for round := 0; round < 2; round++ { // the second with the buffers the first returned
		calls := c.fuel.calls
		got, b, err := c.o.FromConnectInto(ctx, values, buf, out)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(values) {
			t.Fatalf("round %d: %d results for %d values", round, len(got), len(values))
		}
		for i := range values {
			if g := orNull(got[i]); g != want(i) {
				t.Fatalf("round %d, value %d: %.60s, want %.60s", round, i, g, want(i))
			}
		}
		if n := c.fuel.calls - calls; n < 15 {
			t.Errorf("round %d: %d FROM_CONNECT calls for ~1 MB of values", round, n)
		}
		buf, out = b, got
	}
	if c.fuel.maxMem > 1<<20 {
		t.Errorf("the converter's memory grew to %d bytes for calls of 64 KiB", c.fuel.maxMem)
	}
}

// orNull is a converted value as text, "null" for a null.
func orNull(b []byte) string {
	if b == nil {
		return "null"
	}
	return string(b)
}
