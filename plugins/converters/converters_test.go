//go:build !wasip1

package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

func newJSON(t *testing.T, cfg sdk.Config) *jsonConverter {
	t.Helper()
	c := &jsonConverter{}
	if err := c.Configure(cfg, false); err != nil {
		t.Fatal(err)
	}
	return c
}

func dataString(d sdk.Data) string {
	switch d.Tag {
	case sdk.TagNull:
		return "NULL"
	case sdk.TagString:
		return "STRING " + string(d.Bytes)
	case sdk.TagBytes:
		return "BYTES " + string(d.Bytes)
	}
	return "JSON " + string(d.Schema) + " " + string(d.Bytes)
}

const personSchema = `{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"string","optional":true,"field":"name"},` +
	`{"type":"array","items":{"type":"string","optional":false},"optional":true,"field":"tags"},` +
	`{"type":"map","keys":{"type":"string","optional":false},"values":{"type":"int64","optional":false},"optional":true,"field":"counts"}],"optional":false,"name":"person"}`

func TestJsonConverterFromConnect(t *testing.T) {
	enabled := newJSON(t, sdk.Config{})
	disabled := newJSON(t, sdk.Config{"schemas.enable": "false"})
	numeric := newJSON(t, sdk.Config{"decimal.format": "numeric"})
	noReplace := newJSON(t, sdk.Config{"replace.null.with.default": "false"})
	decSchema := `{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"}}`
	for _, tc := range []struct {
		name string
		c    *jsonConverter
		in   sdk.Data
		want string // "<nil>" for null bytes
	}{
		// Exactly what Kafka's FileStreamSource + JsonConverter write.
		{"file line", enabled, sdk.String("line"), `{"schema":{"type":"string","optional":false},"payload":"line"}`},
		{"escapes as Jackson", enabled, sdk.String("a\"b\\c\n\t\x01</>\u2028é"), `{"schema":{"type":"string","optional":false},"payload":"a\"b\\c\n\t\u0001</>` + "\u2028é" + `"}`},
		{"invalid utf8", disabled, sdk.String("a\xffb"), `"a` + "\uFFFD" + `b"`},
		{"bytes", enabled, sdk.Bytes([]byte{0, 1, 2, 255}), `{"schema":{"type":"bytes","optional":true},"payload":"AAEC/w=="}`},
		{"string no schemas", disabled, sdk.String("line"), `"line"`},
		{"bytes no schemas", disabled, sdk.Bytes([]byte("hi")), `"aGk="`},
		{"null", enabled, sdk.Null(), "<nil>"},
		{"null no schemas", disabled, sdk.Null(), "<nil>"},
		{"schemaless json", enabled, sdk.JSON(nil, []byte(` {"a": [1, 2.5, "x"]} `)), `{"schema":null,"payload":{"a":[1,2.5,"x"]}}`},
		{"schemaless json no schemas", disabled, sdk.JSON(nil, []byte(`{"a":1}`)), `{"a":1}`},
		{"schemaless json null", enabled, sdk.JSON(nil, []byte(`null`)), "<nil>"},
		{"struct", enabled, sdk.JSON([]byte(personSchema), []byte(`{"id":1,"name":"ann","tags":["a"],"counts":{"x":2}}`)),
			`{"schema":` + personSchema + `,"payload":{"id":1,"name":"ann","tags":["a"],"counts":{"x":2}}}`},
		{"struct no schemas", disabled, sdk.JSON([]byte(personSchema), []byte(`{"id":1,"name":null}`)), `{"id":1,"name":null}`},
		{"struct field order and extra fields", enabled, sdk.JSON([]byte(personSchema), []byte(`{"name":"b","extra":true,"id":2}`)),
			`{"schema":` + personSchema + `,"payload":{"id":2,"name":"b","tags":null,"counts":null}}`},
		{"int schema", disabled, sdk.JSON([]byte(`{"type":"int64","optional":false}`), []byte(`42`)), `42`},
		{"optional null with schema", enabled, sdk.JSON([]byte(`{"type":"string","optional":true}`), []byte(`null`)),
			`{"schema":{"type":"string","optional":true},"payload":null}`},
		{"null replaced by default", enabled, sdk.JSON([]byte(`{"type":"int32","optional":true,"default":7}`), []byte(`null`)),
			`{"schema":{"type":"int32","optional":true,"default":7},"payload":7}`},
		{"null kept without replace", noReplace, sdk.JSON([]byte(`{"type":"int32","optional":true,"default":7}`), []byte(`null`)),
			`{"schema":{"type":"int32","optional":true,"default":7},"payload":null}`},
		{"decimal base64", enabled, sdk.JSON([]byte(decSchema), []byte(`"MDk="`)), `{"schema":` + decSchema + `,"payload":"MDk="}`},
		{"decimal numeric", numeric, sdk.JSON([]byte(decSchema), []byte(`"MDk="`)), `{"schema":` + decSchema + `,"payload":123.45}`},
		{"decimal number to base64", enabled, sdk.JSON([]byte(decSchema), []byte(`-1.5`)), `{"schema":` + decSchema + `,"payload":"/2o="}`},
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
	enabled := newJSON(t, sdk.Config{})
	disabled := newJSON(t, sdk.Config{"schemas.enable": "false"})
	for _, tc := range []struct {
		name string
		c    *jsonConverter
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
	enabled := newJSON(t, sdk.Config{})
	disabled := newJSON(t, sdk.Config{"schemas.enable": "false"})
	s := func(schema, payload string) []byte {
		return []byte(`{"schema":` + schema + `,"payload":` + payload + `}`)
	}
	for _, tc := range []struct {
		name string
		c    *jsonConverter
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
		in   sdk.Data
		want string
	}{
		{"required null", sdk.JSON([]byte(`{"type":"string"}`), []byte(`null`)), "Conversion error: null value for field that is required and has no default value"},
		{"type mismatch", sdk.JSON([]byte(`{"type":"boolean"}`), []byte(`1`)), "Invalid value for schema type BOOLEAN at payload: found NUMBER 1"},
		{"bad payload", sdk.JSON(nil, []byte(`{`)), "Converting Kafka Connect data to byte[] failed due to serialization error"},
		{"bad schema", sdk.JSON([]byte(`{"type":"nope"}`), []byte(`1`)), "Unknown schema type: nope"},
	} {
		_, err := enabled.FromConnect("t", tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("write %s: got %v\nwant %s", tc.name, err, tc.want)
		}
	}
}

func TestJsonConverterRoundTrip(t *testing.T) {
	for _, cfg := range []sdk.Config{{}, {"schemas.enable": "false"}, {"decimal.format": "NUMERIC"}, {"schemas.cache.size": "1"}} {
		c := newJSON(t, cfg)
		for _, in := range []sdk.Data{
			sdk.JSON([]byte(personSchema), []byte(`{"id":1,"name":"ann","tags":["a","b"],"counts":{"x":2}}`)),
			sdk.JSON([]byte(`{"type":"int64","optional":false}`), []byte(`-9223372036854775808`)),
			sdk.JSON([]byte(`{"type":"double","optional":false}`), []byte(`1.5E300`)),
			sdk.JSON([]byte(`{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"3"}}`), []byte(`"/2o="`)),
			sdk.JSON(nil, []byte(`{"nested":{"a":[true,null]}}`)),
			sdk.Null(),
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
			if cfg["schemas.enable"] == "false" && in.Tag == sdk.TagJSON {
				want = sdk.JSON(nil, in.Bytes) // the schema is not written
			}
			if dataString(out) != dataString(want) {
				t.Errorf("%v: round trip of %s gave %s (bytes %s)", cfg, dataString(in), dataString(out), b)
			}
		}
	}
	// String and bytes come back as JSON values with their schemas.
	c := newJSON(t, sdk.Config{})
	b, _ := c.FromConnect("t", sdk.String("x"))
	if out, _ := c.ToConnect("t", b); dataString(out) != `JSON {"type":"string","optional":false} "x"` {
		t.Errorf("string round trip: %s", dataString(out))
	}
}

func TestStringConverter(t *testing.T) {
	c := &stringConverter{}
	if err := c.Configure(sdk.Config{"converter.encoding": "UTF-8"}, false); err != nil {
		t.Fatal(err)
	}
	if err := (&stringConverter{}).Configure(sdk.Config{"converter.encoding": "UTF-16"}, false); err == nil || !strings.Contains(err.Error(), "only UTF-8") {
		t.Errorf("UTF-16: %v", err)
	}
	for _, tc := range []struct {
		in   sdk.Data
		want string
	}{
		{sdk.String("héllo"), "héllo"},
		{sdk.Bytes([]byte("raw")), "raw"},
		{sdk.JSON([]byte(`{"type":"string"}`), []byte(`"quoted \"x\""`)), `quoted "x"`},
		{sdk.JSON(nil, []byte(`{"a":1}`)), `{"a":1}`},
		{sdk.JSON(nil, []byte(`12`)), `12`},
	} {
		got, err := c.FromConnect("t", tc.in)
		if err != nil || string(got) != tc.want {
			t.Errorf("FromConnect(%s) = %q %v, want %q", dataString(tc.in), got, err, tc.want)
		}
	}
	if got, err := c.FromConnect("t", sdk.Null()); got != nil || err != nil {
		t.Errorf("null: %q %v", got, err)
	}
	if got, _ := c.ToConnect("t", []byte("abc")); dataString(got) != "STRING abc" {
		t.Errorf("ToConnect: %s", dataString(got))
	}
	if got, _ := c.ToConnect("t", []byte{}); got.Tag != sdk.TagString || len(got.Bytes) != 0 {
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
	c := &byteArrayConverter{}
	if got, err := c.FromConnect("t", sdk.Bytes([]byte{1, 2})); err != nil || !bytes.Equal(got, []byte{1, 2}) {
		t.Errorf("bytes: %v %v", got, err)
	}
	if got, err := c.FromConnect("t", sdk.Bytes(nil)); err != nil || got == nil || len(got) != 0 {
		t.Errorf("empty bytes: %v %v", got, err)
	}
	if got, err := c.FromConnect("t", sdk.Null()); err != nil || got != nil {
		t.Errorf("null: %v %v", got, err)
	}
	if got, err := c.FromConnect("t", sdk.JSON([]byte(`{"type":"bytes","optional":true}`), []byte(`"AQI="`))); err != nil || !bytes.Equal(got, []byte{1, 2}) {
		t.Errorf("JSON bytes: %v %v", got, err)
	}
	for _, tc := range []struct {
		in   sdk.Data
		want string
	}{
		{sdk.String("x"), "ByteArrayConverter is not compatible with objects of type class java.lang.String"},
		{sdk.JSON(nil, []byte(`{"a":1}`)), "ByteArrayConverter is not compatible with objects of type class java.util.HashMap"},
		{sdk.JSON(nil, []byte(`12`)), "ByteArrayConverter is not compatible with objects of type class java.lang.Long"},
		{sdk.JSON([]byte(`{"type":"string"}`), []byte(`"x"`)), "Invalid schema type for ByteArrayConverter: STRING"},
	} {
		if _, err := c.FromConnect("t", tc.in); err == nil || err.Error() != tc.want {
			t.Errorf("FromConnect(%s): %v, want %s", dataString(tc.in), err, tc.want)
		}
	}
	if got, _ := c.ToConnect("t", []byte{9}); got.Tag != sdk.TagBytes || !bytes.Equal(got.Bytes, []byte{9}) {
		t.Errorf("ToConnect: %s", dataString(got))
	}
	if got, _ := c.ToConnect("t", nil); !got.IsNull() {
		t.Errorf("ToConnect null: %s", dataString(got))
	}
}

// TestThroughDispatcher drives the registered converters through the SDK's ABI dispatch.
func TestThroughDispatcher(t *testing.T) {
	var desc wire.Descriptor
	if err := json.Unmarshal(sdk.Describe(), &desc); err != nil {
		t.Fatal(err)
	}
	classes := map[string]string{}
	for _, p := range desc.Plugins {
		if p.Kind != wire.KindConverter {
			t.Errorf("%s has kind %s", p.Name, p.Kind)
		}
		classes[p.Name] = p.Class
	}
	if classes["JsonConverter"] != "org.apache.kafka.connect.json.JsonConverter" || classes["StringConverter"] != "org.apache.kafka.connect.storage.StringConverter" ||
		classes["ByteArrayConverter"] != "org.apache.kafka.connect.converters.ByteArrayConverter" {
		t.Errorf("classes: %v", classes)
	}
	req, _ := json.Marshal(wire.OpenRequest{Plugin: "org.apache.kafka.connect.json.JsonConverter", Role: wire.RoleConverter,
		Config: map[string]string{"converter.type": "value", "schemas.enable": "true"}})
	out, err := sdk.Invoke(wire.OpOpen, 0, req)
	if err != nil {
		t.Fatal(err)
	}
	var open wire.OpenResponse
	_ = json.Unmarshal(out, &open)
	out, err = sdk.Invoke(wire.OpFromConnect, open.Handle, wire.AppendDataBatch(nil, []wire.TopicData{{Topic: "t", Value: wire.String("line")}, {Topic: "t", Value: wire.Null()}}))
	if err != nil {
		t.Fatal(err)
	}
	bs, err := wire.DecodeBytesBatch(out)
	if err != nil || len(bs) != 2 || string(bs[0]) != `{"schema":{"type":"string","optional":false},"payload":"line"}` || bs[1] != nil {
		t.Errorf("FROM_CONNECT: %q %v", bs, err)
	}
	_, err = sdk.Invoke(wire.OpToConnect, open.Handle, wire.AppendTopicBytesBatch(nil, []wire.TopicBytes{{Topic: "t", Bytes: []byte(`{"a":1}`)}}))
	if err == nil || err.Error() != envelopeError {
		t.Errorf("TO_CONNECT plain JSON: %v", err)
	}
	req, _ = json.Marshal(wire.OpenRequest{Plugin: "JsonConverter", Role: wire.RoleConverter, Config: map[string]string{"decimal.format": "HEX"}})
	if _, err := sdk.Invoke(wire.OpOpen, 0, req); err == nil || !strings.Contains(err.Error(), "Invalid value HEX for configuration decimal.format: String must be one of (case insensitive): BASE64, NUMERIC") {
		t.Errorf("bad decimal.format: %v", err)
	}
}
