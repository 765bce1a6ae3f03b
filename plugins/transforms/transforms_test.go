package transforms_test

import (
	"strings"
	"testing"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

const (
	// Kafka's InsertFieldTest: SchemaBuilder.struct().name("name").version(1).doc("doc").field("magic", OPTIONAL_INT64_SCHEMA)
	magicSchema = `{"type":"struct","fields":[{"type":"int64","optional":true,"field":"magic"}],"optional":false,"name":"name","version":1,"doc":"doc"}`
	tsName      = `"name":"org.apache.kafka.connect.data.Timestamp","version":1`
)

func TestInsertField(t *testing.T) {
	cfg := map[string]string{"topic.field": "topic_field!", "partition.field": "partition_field", "timestamp.field": "timestamp_field?",
		"static.field": "instance_id", "static.value": "my-instance-id"}
	schemaless := sourceRec(wire.Null(), js("", `{"magic":42}`))
	withSchema := sourceRec(wire.Null(), js(magicSchema, `{"magic":42}`))
	runCases(t, []tcase{
		{name: "schemaless", class: "org.apache.kafka.connect.transforms.InsertField$Value", cfg: cfg, in: schemaless,
			want: with(schemaless, func(r *wire.Record) {
				r.Value = js("", `{"magic":42,"topic_field":"test","partition_field":0,"timestamp_field":null,"instance_id":"my-instance-id"}`)
			})},
		{name: "schema", class: "InsertField$Value", cfg: cfg, in: withSchema,
			want: with(withSchema, func(r *wire.Record) {
				r.Value = js(`{"type":"struct","fields":[{"type":"int64","optional":true,"field":"magic"},`+
					`{"type":"string","optional":false,"field":"topic_field"},{"type":"int32","optional":true,"field":"partition_field"},`+
					`{"type":"int64","optional":true,`+tsName+`,"field":"timestamp_field"},{"type":"string","optional":true,"field":"instance_id"}],`+
					`"optional":false,"name":"name","version":1,"doc":"doc"}`,
					`{"magic":42,"topic_field":"test","partition_field":0,"timestamp_field":null,"instance_id":"my-instance-id"}`)
			})},
		{name: "sink record offset and timestamp", class: "InsertField$Value",
			cfg: map[string]string{"offset.field": "off", "timestamp.field": "ts"}, in: sinkRec(wire.Null(), js(magicSchema, `{"magic":1}`), 1483425001864),
			want: with(sinkRec(wire.Null(), wire.Null(), 1483425001864), func(r *wire.Record) {
				r.Value = js(`{"type":"struct","fields":[{"type":"int64","optional":true,"field":"magic"},{"type":"int64","optional":true,"field":"off"},`+
					`{"type":"int64","optional":true,`+tsName+`,"field":"ts"}],"optional":false,"name":"name","version":1,"doc":"doc"}`,
					`{"magic":1,"off":42,"ts":1483425001864}`)
			})},
		{name: "key", class: "InsertField$Key", cfg: map[string]string{"static.field": "k", "static.value": "v"},
			in:   sourceRec(js("", `{"id":1}`), wire.String("x")),
			want: with(sourceRec(js("", `{"id":1,"k":"v"}`), wire.String("x")), func(*wire.Record) {})},
		{name: "tombstone passes through", class: "InsertField$Value", cfg: cfg, in: sourceRec(wire.Null(), wire.Null())},
		{name: "offset of a source record", class: "InsertField$Value", cfg: map[string]string{"offset.field": "off"}, in: schemaless,
			err: "Only SinkRecord supported for [field insertion], found: org.apache.kafka.connect.source.SourceRecord"},
		{name: "schemaless non-map", class: "InsertField$Value", cfg: cfg, in: sourceRec(wire.Null(), wire.String("plain")),
			err: "Only Struct objects supported for [field insertion], found: java.lang.String"},
		{name: "schemaless array", class: "InsertField$Value", cfg: cfg, in: sourceRec(wire.Null(), js("", `[1]`)),
			err: "Only Map objects supported in absence of schema for [field insertion], found: java.util.ArrayList"},
	})
}

func TestReplaceField(t *testing.T) {
	// Kafka's ReplaceFieldTest.
	in := sourceRec(wire.Null(), js("", `{"dont":"whatever","abc":42,"foo":true,"etc":"etc"}`))
	schema := `{"type":"struct","fields":[{"type":"string","optional":false,"field":"dont"},{"type":"int32","optional":false,"field":"abc"},` +
		`{"type":"boolean","optional":false,"field":"foo"},{"type":"string","optional":false,"field":"etc"}],"optional":false}`
	inS := sourceRec(wire.Null(), js(schema, `{"dont":"whatever","abc":42,"foo":true,"etc":"etc"}`))
	runCases(t, []tcase{
		{name: "schemaless exclude and rename", class: "org.apache.kafka.connect.transforms.ReplaceField$Value",
			cfg: map[string]string{"exclude": "dont", "renames": "abc:xyz,foo:bar"}, in: in,
			want: with(in, func(r *wire.Record) { r.Value = js("", `{"xyz":42,"bar":true,"etc":"etc"}`) })},
		{name: "schema include and rename", class: "ReplaceField$Value",
			cfg: map[string]string{"include": "abc,foo", "renames": "abc:xyz,foo:bar"}, in: inS,
			want: with(inS, func(r *wire.Record) {
				r.Value = js(`{"type":"struct","fields":[{"type":"int32","optional":false,"field":"xyz"},{"type":"boolean","optional":false,"field":"bar"}],"optional":false}`,
					`{"xyz":42,"bar":true}`)
			})},
		{name: "null replaced with default", class: "ReplaceField$Value", cfg: map[string]string{"exclude": "x"},
			in:   sourceRec(wire.Null(), js(`{"type":"struct","fields":[{"type":"string","optional":true,"default":"d","field":"s"}],"optional":false}`, `{"s":null}`)),
			want: with(sourceRec(wire.Null(), js(`{"type":"struct","fields":[{"type":"string","optional":true,"default":"d","field":"s"}],"optional":false}`, `{"s":"d"}`)), func(*wire.Record) {})},
		{name: "null kept", class: "ReplaceField$Value", cfg: map[string]string{"exclude": "x", "replace.null.with.default": "false"},
			in:   sourceRec(wire.Null(), js(`{"type":"struct","fields":[{"type":"string","optional":true,"default":"d","field":"s"}],"optional":false}`, `{"s":null}`)),
			want: with(sourceRec(wire.Null(), js(`{"type":"struct","fields":[{"type":"string","optional":true,"default":"d","field":"s"}],"optional":false}`, `{"s":null}`)), func(*wire.Record) {})},
		{name: "exclude wins over include", class: "ReplaceField$Value", cfg: map[string]string{"include": "abc,foo", "exclude": "foo"}, in: in,
			want: with(in, func(r *wire.Record) { r.Value = js("", `{"abc":42}`) })},
	})
	if _, err := tryOpen("ReplaceField$Value", wire.RoleTransformation, map[string]string{"renames": "abc"}); err == nil {
		t.Fatal("bad renames accepted")
	}
}

func TestMaskField(t *testing.T) {
	in := sourceRec(wire.Null(), js("", `{"magic":42,"int":42,"str":"foo","bool":true,"list":[1],"map":{"a":1}}`))
	schema := `{"type":"struct","fields":[{"type":"int32","optional":false,"field":"magic"},{"type":"string","optional":false,"field":"str"},` +
		`{"type":"double","optional":false,"field":"dbl"},{"type":"int64","optional":false,` + tsName + `,"field":"ts"}],"optional":false}`
	inS := sourceRec(wire.Null(), js(schema, `{"magic":42,"str":"foo","dbl":4.5,"ts":1483425001864}`))
	runCases(t, []tcase{
		{name: "schemaless", class: "org.apache.kafka.connect.transforms.MaskField$Value", cfg: map[string]string{"fields": "int,str,bool,list,map,missing"}, in: in,
			want: with(in, func(r *wire.Record) {
				r.Value = js("", `{"magic":42,"int":0,"str":"","bool":false,"list":[],"map":{},"missing":null}`)
			})},
		{name: "schema", class: "MaskField$Value", cfg: map[string]string{"fields": "magic,str,dbl,ts"}, in: inS,
			want: with(inS, func(r *wire.Record) { r.Value = js(schema, `{"magic":0,"str":"","dbl":0.0,"ts":0}`) })},
		{name: "replacement", class: "MaskField$Value", cfg: map[string]string{"fields": "magic,str,dbl", "replacement": "123"}, in: inS,
			want: with(inS, func(r *wire.Record) { r.Value = js(schema, `{"magic":123,"str":"123","dbl":123.0,"ts":1483425001864}`) })},
		{name: "replacement of a boolean", class: "MaskField$Value", cfg: map[string]string{"fields": "bool", "replacement": "x"}, in: in,
			err: "Cannot mask value of type class java.lang.Boolean with custom replacement."},
		{name: "replacement not a number", class: "MaskField$Value", cfg: map[string]string{"fields": "int", "replacement": "***"}, in: in,
			err: "Unable to convert *** (class java.lang.String) to number"},
	})
	if _, err := tryOpen("MaskField$Value", wire.RoleTransformation, nil); err == nil || !strings.Contains(err.Error(), `Missing required configuration "fields" which has no default value.`) {
		t.Fatal("MaskField without fields accepted")
	}
}

func TestValueToKey(t *testing.T) {
	in := sourceRec(wire.Null(), js("", `{"a":1,"b":2,"c":3}`))
	schema := `{"type":"struct","fields":[{"type":"int32","optional":false,"field":"a"},{"type":"int32","optional":false,"field":"b"},{"type":"int32","optional":false,"field":"c"}],"optional":false}`
	inS := sourceRec(wire.Null(), js(schema, `{"a":1,"b":2,"c":3}`))
	runCases(t, []tcase{
		{name: "schemaless", class: "org.apache.kafka.connect.transforms.ValueToKey", cfg: map[string]string{"fields": "a,b"}, in: in,
			want: with(in, func(r *wire.Record) { r.Key = js("", `{"a":1,"b":2}`) })},
		{name: "schema", class: "ValueToKey", cfg: map[string]string{"fields": "a,b"}, in: inS,
			want: with(inS, func(r *wire.Record) {
				r.Key = js(`{"type":"struct","fields":[{"type":"int32","optional":false,"field":"a"},{"type":"int32","optional":false,"field":"b"}],"optional":false}`, `{"a":1,"b":2}`)
			})},
		{name: "missing field", class: "ValueToKey", cfg: map[string]string{"fields": "a,d"}, in: inS, err: "Field does not exist: d"},
	})
}

func TestExtractAndHoistField(t *testing.T) {
	keyS := `{"type":"struct","fields":[{"type":"int32","optional":false,"field":"magic"}],"optional":false}`
	nested := `{"type":"struct","fields":[{"type":"struct","fields":[{"type":"string","optional":false,"field":"b"}],"optional":false,"field":"a"}],"optional":false}`
	runCases(t, []tcase{
		{name: "extract schemaless", class: "org.apache.kafka.connect.transforms.ExtractField$Key", cfg: map[string]string{"field": "magic"},
			in: sourceRec(js("", `{"magic":42}`), wire.Null()), want: with(sourceRec(js("", `42`), wire.Null()), func(*wire.Record) {})},
		{name: "extract schema", class: "ExtractField$Key", cfg: map[string]string{"field": "magic"},
			in: sourceRec(js(keyS, `{"magic":42}`), wire.Null()), want: with(sourceRec(js(`{"type":"int32","optional":false}`, `42`), wire.Null()), func(*wire.Record) {})},
		{name: "extract null schemaless", class: "ExtractField$Key", cfg: map[string]string{"field": "magic"}, in: sourceRec(wire.Null(), wire.Null())},
		{name: "extract null field", class: "ExtractField$Value", cfg: map[string]string{"field": "n"},
			in:   sourceRec(wire.Null(), js(`{"type":"struct","fields":[{"type":"int32","optional":true,"field":"n"}],"optional":false}`, `{"n":null}`)),
			want: with(sourceRec(wire.Null(), js(`{"type":"int32","optional":true}`, `null`)), func(*wire.Record) {})},
		{name: "extract unknown field", class: "ExtractField$Key", cfg: map[string]string{"field": "nonexistent"},
			in: sourceRec(js(keyS, `{"magic":42}`), wire.Null()), err: "Unknown field: nonexistent"},
		{name: "extract nested V2", class: "ExtractField$Value", cfg: map[string]string{"field": "a.b", "field.syntax.version": "V2"},
			in: sourceRec(wire.Null(), js(nested, `{"a":{"b":"deep"}}`)), want: with(sourceRec(wire.Null(), wire.String("deep")), func(*wire.Record) {})},
		{name: "hoist schemaless", class: "org.apache.kafka.connect.transforms.HoistField$Key", cfg: map[string]string{"field": "magic"},
			in: sourceRec(js("", `42`), wire.Null()), want: with(sourceRec(js("", `{"magic":42}`), wire.Null()), func(*wire.Record) {})},
		{name: "hoist schema", class: "HoistField$Key", cfg: map[string]string{"field": "magic"},
			in:   sourceRec(js(`{"type":"int32","optional":false}`, `42`), wire.Null()),
			want: with(sourceRec(js(keyS, `{"magic":42}`), wire.Null()), func(*wire.Record) {})},
		{name: "hoist string", class: "HoistField$Value", cfg: map[string]string{"field": "line"},
			in:   sourceRec(wire.Null(), wire.String("hello")),
			want: with(sourceRec(wire.Null(), js(`{"type":"struct","fields":[{"type":"string","optional":false,"field":"line"}],"optional":false}`, `{"line":"hello"}`)), func(*wire.Record) {})},
	})
}

func TestCast(t *testing.T) {
	schema := `{"type":"struct","fields":[{"type":"int8","optional":false,"field":"int8"},{"type":"int32","optional":false,"field":"int32"},` +
		`{"type":"float","optional":false,"field":"float32"},{"type":"string","optional":false,"field":"string"},` +
		`{"type":"boolean","optional":false,"field":"boolean"},{"type":"int64","optional":true,"field":"optional"}],"optional":false}`
	inS := sourceRec(wire.Null(), js(schema, `{"int8":8,"int32":32,"float32":32.5,"string":"42","boolean":true,"optional":null}`))
	runCases(t, []tcase{
		{name: "fields with schema", class: "org.apache.kafka.connect.transforms.Cast$Value",
			cfg: map[string]string{"spec": "int8:int16,int32:string,float32:int32,string:int64,boolean:int8,optional:int32"}, in: inS,
			want: with(inS, func(r *wire.Record) {
				r.Value = js(`{"type":"struct","fields":[{"type":"int16","optional":false,"field":"int8"},{"type":"string","optional":false,"field":"int32"},`+
					`{"type":"int32","optional":false,"field":"float32"},{"type":"int64","optional":false,"field":"string"},`+
					`{"type":"int8","optional":false,"field":"boolean"},{"type":"int32","optional":true,"field":"optional"}],"optional":false}`,
					`{"int8":8,"int32":"32","float32":32,"string":42,"boolean":1,"optional":null}`)
			})},
		{name: "fields schemaless", class: "Cast$Value", cfg: map[string]string{"spec": "a:string,b:boolean,c:float64,d:int8"},
			in:   sourceRec(wire.Null(), js("", `{"a":42,"b":"true","c":1,"d":300,"e":"kept"}`)),
			want: with(sourceRec(wire.Null(), js("", `{"a":"42","b":true,"c":1.0,"d":44,"e":"kept"}`)), func(*wire.Record) {})},
		{name: "whole value with schema", class: "Cast$Value", cfg: map[string]string{"spec": "int64"},
			in: sourceRec(wire.Null(), wire.String("42")), want: with(sourceRec(wire.Null(), js(`{"type":"int64","optional":false}`, `42`)), func(*wire.Record) {})},
		{name: "whole key schemaless", class: "Cast$Key", cfg: map[string]string{"spec": "string"},
			in: sourceRec(js("", `1.5`), wire.Null()), want: with(sourceRec(js("", `"1.5"`), wire.Null()), func(*wire.Record) {})},
		{name: "double to string", class: "Cast$Value", cfg: map[string]string{"spec": "float32:string"}, in: inS,
			want: with(inS, func(r *wire.Record) {
				r.Value = js(`{"type":"struct","fields":[{"type":"int8","optional":false,"field":"int8"},{"type":"int32","optional":false,"field":"int32"},`+
					`{"type":"string","optional":false,"field":"float32"},{"type":"string","optional":false,"field":"string"},`+
					`{"type":"boolean","optional":false,"field":"boolean"},{"type":"int64","optional":true,"field":"optional"}],"optional":false}`,
					`{"int8":8,"int32":32,"float32":"32.5","string":"42","boolean":true,"optional":null}`)
			})},
		{name: "logical types to string", class: "Cast$Value", cfg: map[string]string{"spec": "ts:string,d:string,t:string"},
			in: sourceRec(wire.Null(), js(`{"type":"struct","fields":[{"type":"int64","optional":false,`+tsName+`,"field":"ts"},`+
				`{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Date","version":1,"field":"d"},`+
				`{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Time","version":1,"field":"t"}],"optional":false}`,
				`{"ts":1483425001864,"d":17169,"t":3600001}`)),
			want: with(sourceRec(wire.Null(), js(`{"type":"struct","fields":[{"type":"string","optional":false,"field":"ts"},`+
				`{"type":"string","optional":false,"field":"d"},{"type":"string","optional":false,"field":"t"}],"optional":false}`,
				`{"ts":"2017-01-03T06:30:01.864Z","d":"2017-01-03","t":"01:00:00.001Z"}`)), func(*wire.Record) {})},
		{name: "not a number", class: "Cast$Value", cfg: map[string]string{"spec": "int32"}, in: sourceRec(wire.Null(), wire.String("forty-two")),
			err: "was out of range for requested data type"},
		{name: "struct field", class: "Cast$Value", cfg: map[string]string{"spec": "a:string"},
			in:  sourceRec(wire.Null(), js(`{"type":"struct","fields":[{"type":"array","items":{"type":"int32","optional":false},"optional":false,"field":"a"}],"optional":false}`, `{"a":[1]}`)),
			err: "Cast transformation does not support casting to/from ARRAY"},
	})
	for _, spec := range []string{"foo:bar", "int8,int16", ""} {
		if _, err := tryOpen("Cast$Value", wire.RoleTransformation, map[string]string{"spec": spec}); err == nil {
			t.Errorf("spec %q accepted", spec)
		}
	}
}

func TestTimestampConverter(t *testing.T) {
	// Kafka's TimestampConverterTest: DATE_PLUS_TIME = 1970-01-02T00:00:01Z, STRING_DATE_FMT = "yyyy MM dd HH mm ss SSS z".
	const fmtS, str, unix = "yyyy MM dd HH mm ss SSS z", "1970 01 02 00 00 01 000 UTC", "86401000"
	ts := `{"type":"int64","optional":false,` + tsName + `}`
	runCases(t, []tcase{
		{name: "unix to string schemaless", class: "org.apache.kafka.connect.transforms.TimestampConverter$Value",
			cfg: map[string]string{"target.type": "string", "format": fmtS}, in: sourceRec(wire.Null(), js("", unix)),
			want: with(sourceRec(wire.Null(), js("", `"`+str+`"`)), func(*wire.Record) {})},
		{name: "string to Timestamp with schema", class: "TimestampConverter$Value",
			cfg: map[string]string{"target.type": "Timestamp", "format": fmtS}, in: sourceRec(wire.Null(), wire.String(str)),
			want: with(sourceRec(wire.Null(), js(ts, unix)), func(*wire.Record) {})},
		{name: "Timestamp to Date", class: "TimestampConverter$Value", cfg: map[string]string{"target.type": "Date"},
			in:   sourceRec(wire.Null(), js(ts, unix)),
			want: with(sourceRec(wire.Null(), js(`{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Date","version":1}`, `1`)), func(*wire.Record) {})},
		{name: "Timestamp to Time", class: "TimestampConverter$Value", cfg: map[string]string{"target.type": "Time"},
			in:   sourceRec(wire.Null(), js(ts, unix)),
			want: with(sourceRec(wire.Null(), js(`{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Time","version":1}`, `1000`)), func(*wire.Record) {})},
		{name: "field to unix seconds", class: "TimestampConverter$Value", cfg: map[string]string{"target.type": "unix", "field": "ts", "unix.precision": "seconds"},
			in: sourceRec(wire.Null(), js(`{"type":"struct","fields":[{"type":"string","optional":false,"field":"other"},{"type":"int64","optional":true,`+tsName+`,"field":"ts"}],"optional":false}`,
				`{"other":"x","ts":86401000}`)),
			want: with(sourceRec(wire.Null(), js(`{"type":"struct","fields":[{"type":"string","optional":false,"field":"other"},{"type":"int64","optional":true,"field":"ts"}],"optional":false}`,
				`{"other":"x","ts":86401}`)), func(*wire.Record) {})},
		{name: "field schemaless to string", class: "TimestampConverter$Value", cfg: map[string]string{"target.type": "string", "field": "ts", "format": "yyyy-MM-dd'T'HH:mm:ss.SSSX"},
			in:   sourceRec(wire.Null(), js("", `{"ts":1483425001864,"x":1}`)),
			want: with(sourceRec(wire.Null(), js("", `{"ts":"2017-01-03T06:30:01.864Z","x":1}`)), func(*wire.Record) {})},
		{name: "null with a schema", class: "TimestampConverter$Value", cfg: map[string]string{"target.type": "unix"},
			in:   sourceRec(wire.Null(), js(`{"type":"string","optional":true}`, `null`)),
			want: with(sourceRec(wire.Null(), js(`{"type":"int64","optional":true}`, `null`)), func(*wire.Record) {})},
		{name: "unparseable", class: "TimestampConverter$Value", cfg: map[string]string{"target.type": "unix", "format": "yyyy-MM-dd"},
			in: sourceRec(wire.Null(), wire.String("yesterday")), err: "Could not parse timestamp"},
		{name: "not a timestamp schema", class: "TimestampConverter$Value", cfg: map[string]string{"target.type": "unix"},
			in: sourceRec(wire.Null(), js(`{"type":"boolean","optional":false}`, `true`)), err: "does not correspond to a known timestamp type format"},
	})
	if _, err := tryOpen("TimestampConverter$Value", wire.RoleTransformation, map[string]string{"target.type": "string"}); err == nil {
		t.Error("string target without format accepted")
	}
}

func TestFlatten(t *testing.T) {
	// The example of Kafka's documentation of Flatten.
	in := sourceRec(wire.Null(), js("", `{"content":{"id":42,"name":{"first":"David","middle":null,"last":"Wong"}}}`))
	inner := `{"type":"struct","fields":[{"type":"int8","optional":false,"field":"int8"},{"type":"string","optional":true,"field":"string"}],"optional":false}`
	schema := `{"type":"struct","fields":[{"type":"struct","fields":[{"type":"struct","fields":[{"type":"int8","optional":false,"field":"int8"},{"type":"string","optional":true,"field":"string"}],"optional":true,"field":"B"}],"optional":false,"field":"A"},{"type":"array","items":{"type":"int32","optional":false},"optional":false,"field":"list"}],"optional":false,"name":"n"}`
	_ = inner
	inS := sourceRec(wire.Null(), js(schema, `{"A":{"B":{"int8":8,"string":"stringy"}},"list":[1,2]}`))
	runCases(t, []tcase{
		{name: "schemaless", class: "org.apache.kafka.connect.transforms.Flatten$Value", in: in,
			want: with(in, func(r *wire.Record) {
				r.Value = js("", `{"content.id":42,"content.name.first":"David","content.name.middle":null,"content.name.last":"Wong"}`)
			})},
		{name: "schema with delimiter", class: "Flatten$Value", cfg: map[string]string{"delimiter": "#"}, in: inS,
			want: with(inS, func(r *wire.Record) {
				r.Value = js(`{"type":"struct","fields":[{"type":"int8","optional":true,"field":"A#B#int8"},{"type":"string","optional":true,"field":"A#B#string"},`+
					`{"type":"array","items":{"type":"int32","optional":false},"optional":false,"field":"list"}],"optional":false,"name":"n"}`,
					`{"A#B#int8":8,"A#B#string":"stringy","list":[1,2]}`)
			})},
		{name: "null struct", class: "Flatten$Value", cfg: map[string]string{"delimiter": "_"},
			in: sourceRec(wire.Null(), js(schema, `{"A":{"B":null},"list":[]}`)),
			want: with(inS, func(r *wire.Record) {
				r.Value = js(`{"type":"struct","fields":[{"type":"int8","optional":true,"field":"A_B_int8"},{"type":"string","optional":true,"field":"A_B_string"},`+
					`{"type":"array","items":{"type":"int32","optional":false},"optional":false,"field":"list"}],"optional":false,"name":"n"}`,
					`{"A_B_int8":null,"A_B_string":null,"list":[]}`)
			})},
		{name: "tombstone", class: "Flatten$Value", in: sourceRec(wire.Null(), wire.Null())},
		{name: "optional parent", class: "Flatten$Key",
			in:   sourceRec(js(`{"type":"struct","fields":[{"type":"struct","fields":[{"type":"int32","optional":false,"field":"b"}],"optional":false,"field":"a"}],"optional":true}`, `{"a":{"b":1}}`), wire.Null()),
			want: with(sourceRec(js(`{"type":"struct","fields":[{"type":"int32","optional":true,"field":"a.b"}],"optional":false}`, `{"a.b":1}`), wire.Null()), func(*wire.Record) {})},
	})
}

func TestSetSchemaMetadata(t *testing.T) {
	schema := `{"type":"struct","fields":[{"type":"string","optional":false,"field":"f"}],"optional":false}`
	in := sourceRec(wire.Null(), js(schema, `{"f":"x"}`))
	runCases(t, []tcase{
		{name: "name and version", class: "org.apache.kafka.connect.transforms.SetSchemaMetadata$Value", cfg: map[string]string{"schema.name": "foo", "schema.version": "42"}, in: in,
			want: with(in, func(r *wire.Record) {
				r.Value = js(`{"type":"struct","fields":[{"type":"string","optional":false,"field":"f"}],"optional":false,"name":"foo","version":42}`, `{"f":"x"}`)
			})},
		{name: "string key", class: "SetSchemaMetadata$Key", cfg: map[string]string{"schema.name": "foo"}, in: sourceRec(wire.String("k"), wire.Null()),
			want: with(sourceRec(js(`{"type":"string","optional":false,"name":"foo"}`, `"k"`), wire.Null()), func(*wire.Record) {})},
		{name: "schemaless", class: "SetSchemaMetadata$Value", cfg: map[string]string{"schema.name": "foo"}, in: sourceRec(wire.Null(), js("", `{}`)),
			err: "Schema required for [updating schema metadata]"},
	})
}

func TestRouters(t *testing.T) {
	topic := func(name string) wire.Record { r := sourceRec(wire.Null(), wire.String("v")); r.Topic = name; return r }
	routed := func(name string) *wire.Record { r := topic(name); return &r }
	cases := []tcase{}
	// Kafka's RegexRouterTest.
	for _, c := range []struct{ regex, replacement, topic, want string }{
		{"foo", "bar", "foo", "bar"},
		{"(.*)", "$1", "orig", ""},
		{"(.*)", "prefix-$1", "orig", "prefix-orig"},
		{"(.*)", "$1-suffix", "orig", "orig-suffix"},
		{`(.*)-(\d\d\d\d\d\d\d\d)`, "$1", "index-20160117", "index"},
		{"foo", "bar", "f", ""},
		{"(?<name>a+)b", "${name}-$0", "aab", "aa-aab"},
	} {
		tc := tcase{name: "regex " + c.regex + " " + c.topic, class: "org.apache.kafka.connect.transforms.RegexRouter",
			cfg: map[string]string{"regex": c.regex, "replacement": c.replacement}, in: topic(c.topic)}
		if c.want != "" {
			tc.want = routed(c.want)
		}
		cases = append(cases, tc)
	}
	// Kafka's TimestampRouterTest: 1483425001864 is 2017-01-03.
	withTS := topic("test")
	withTS.Timestamp = 1483425001864
	cases = append(cases,
		tcase{name: "timestamp router defaults", class: "TimestampRouter", in: withTS,
			want: with(withTS, func(r *wire.Record) { r.Topic = "test-20170103" })},
		tcase{name: "timestamp router format", class: "org.apache.kafka.connect.transforms.TimestampRouter",
			cfg: map[string]string{"topic.format": "${timestamp}.${topic}", "timestamp.format": "yyyy-MM-dd HH"}, in: withTS,
			want: with(withTS, func(r *wire.Record) { r.Topic = "2017-01-03 06.test" })},
		tcase{name: "timestamp router without timestamp", class: "TimestampRouter", in: topic("test"), err: "Timestamp missing on record"},
		tcase{name: "filter", class: "org.apache.kafka.connect.transforms.Filter", in: withTS, drop: true},
	)
	runCases(t, cases)
	if _, err := tryOpen("RegexRouter", wire.RoleTransformation, map[string]string{"regex": "(a", "replacement": "x"}); err == nil {
		t.Error("bad regex accepted")
	}
	if _, err := tryOpen("RegexRouter", wire.RoleTransformation, map[string]string{"regex": "(a)", "replacement": "$2"}); err == nil {
		t.Error("reference to a missing group accepted")
	}
}

func TestHeaderTransforms(t *testing.T) {
	base := sourceRec(wire.Null(), wire.String("v"))
	base.Headers = []wire.Header{{Key: "keep", Value: wire.String("k")}, {Key: "dont-keep", Value: wire.String("d")}, {Key: "also-dont", Value: wire.Null()}}
	schema := `{"type":"struct","fields":[{"type":"string","optional":false,"field":"field1"},{"type":"int32","optional":false,"field":"field2"},{"type":"string","optional":false,"field":"field3"}],"optional":false}`
	structRec := sourceRec(wire.Null(), js(schema, `{"field1":"field1-value","field2":2,"field3":"f3"}`))
	mapRec := sourceRec(wire.Null(), js("", `{"field1":"field1-value","field2":2,"field3":"f3"}`))
	runCases(t, []tcase{
		{name: "insert header", class: "org.apache.kafka.connect.transforms.InsertHeader", cfg: map[string]string{"header": "inserted", "value.literal": "inserted-value"}, in: base,
			want: with(base, func(r *wire.Record) {
				r.Headers = append(r.Headers[:3:3], wire.Header{Key: "inserted", Value: wire.String("inserted-value")})
			})},
		{name: "insert number header", class: "InsertHeader", cfg: map[string]string{"header": "n", "value.literal": "42"}, in: sourceRec(wire.Null(), wire.Null()),
			want: with(sourceRec(wire.Null(), wire.Null()), func(r *wire.Record) {
				r.Headers = []wire.Header{{Key: "n", Value: js(`{"type":"int8","optional":false}`, `42`)}}
			})},
		{name: "drop headers", class: "org.apache.kafka.connect.transforms.DropHeaders", cfg: map[string]string{"headers": "dont-keep,also-dont"}, in: base,
			want: with(base, func(r *wire.Record) { r.Headers = r.Headers[:1] })},
		{name: "drop absent header", class: "DropHeaders", cfg: map[string]string{"headers": "nope"}, in: base},
		{name: "header from struct, copy", class: "org.apache.kafka.connect.transforms.HeaderFrom$Value",
			cfg: map[string]string{"fields": "field1,field2", "headers": "inserted1,inserted2", "operation": "copy"}, in: structRec,
			want: with(structRec, func(r *wire.Record) {
				r.Headers = []wire.Header{{Key: "inserted1", Value: wire.String("field1-value")}, {Key: "inserted2", Value: js(`{"type":"int32","optional":false}`, `2`)}}
			})},
		{name: "header from struct, move", class: "HeaderFrom$Value",
			cfg: map[string]string{"fields": "field1,field2", "headers": "inserted1,inserted2", "operation": "move"}, in: structRec,
			want: with(structRec, func(r *wire.Record) {
				r.Headers = []wire.Header{{Key: "inserted1", Value: wire.String("field1-value")}, {Key: "inserted2", Value: js(`{"type":"int32","optional":false}`, `2`)}}
				r.Value = js(`{"type":"struct","fields":[{"type":"string","optional":false,"field":"field3"}],"optional":false}`, `{"field3":"f3"}`)
			})},
		{name: "header from map, move", class: "HeaderFrom$Value",
			cfg: map[string]string{"fields": "field1,field2", "headers": "inserted1,inserted2", "operation": "move"}, in: mapRec,
			want: with(mapRec, func(r *wire.Record) {
				r.Headers = []wire.Header{{Key: "inserted1", Value: wire.String("field1-value")}, {Key: "inserted2", Value: js("", `2`)}}
				r.Value = js("", `{"field3":"f3"}`)
			})},
	})
	if _, err := tryOpen("HeaderFrom$Value", wire.RoleTransformation, map[string]string{"fields": "a,b", "headers": "x", "operation": "copy"}); err == nil {
		t.Error("fields and headers of different lengths accepted")
	}
}

func TestPredicates(t *testing.T) {
	rec := func(topic string, value wire.Data, headers ...string) wire.Record {
		r := sourceRec(wire.Null(), value)
		r.Topic = topic
		for _, h := range headers {
			r.Headers = append(r.Headers, wire.Header{Key: h, Value: wire.String("x")})
		}
		return r
	}
	recs := []wire.Record{rec("my-prefix-orders", wire.String("v"), "h"), rec("other", wire.Null()),
		rec("my-prefix-", js(`{"type":"string","optional":true}`, "null"), "a", "b")}
	for _, c := range []struct {
		class string
		cfg   map[string]string
		want  []bool
	}{
		{"org.apache.kafka.connect.transforms.predicates.TopicNameMatches", map[string]string{"pattern": "my-prefix-.*"}, []bool{true, false, true}},
		{"TopicNameMatches", map[string]string{"pattern": "prefix"}, []bool{false, false, false}},
		{"org.apache.kafka.connect.transforms.predicates.HasHeaderKey", map[string]string{"name": "b"}, []bool{false, false, true}},
		{"org.apache.kafka.connect.transforms.predicates.RecordIsTombstone", nil, []bool{false, true, true}},
	} {
		h := open(t, c.class, wire.RolePredicate, c.cfg)
		if got := test(t, h, recs...); !equalBools(got, c.want) {
			t.Errorf("%s %v: %v, want %v", c.class, c.cfg, got, c.want)
		}
	}
	if _, err := tryOpen("TopicNameMatches", wire.RolePredicate, map[string]string{"pattern": "("}); err == nil {
		t.Error("bad pattern accepted")
	}
	if _, err := tryOpen("HasHeaderKey", wire.RolePredicate, map[string]string{"name": ""}); err == nil {
		t.Error("empty header name accepted")
	}
	if _, err := tryOpen("HasHeaderKey", wire.RoleTransformation, map[string]string{"name": "x"}); err == nil {
		t.Error("predicate opened as a transformation")
	}
}

func equalBools(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
