package connect

import (
	"encoding/base64"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

func TestRoundTrip(t *testing.T) {
	// Each payload is written back byte for byte as JsonConverter writes it.
	for _, c := range []struct{ schema, payload string }{
		{"", `{"a":1,"b":[true,null,"x"],"c":{"d":1.5}}`},
		{"", `42`},
		{"", `"text"`},
		{`{"type":"int8","optional":false}`, `-8`},
		{`{"type":"double","optional":true}`, `1.0`},
		{`{"type":"float","optional":false}`, `0.1`},
		{`{"type":"bytes","optional":false}`, `"AAEC"`},
		{`{"type":"array","items":{"type":"string","optional":false},"optional":false}`, `["a","b"]`},
		{`{"type":"map","keys":{"type":"string","optional":false},"values":{"type":"int32","optional":false},"optional":false}`, `{"a":1,"b":2}`},
		{`{"type":"map","keys":{"type":"int32","optional":false},"values":{"type":"string","optional":false},"optional":false}`, `[[1,"a"],[2,"b"]]`},
		{`{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"string","optional":true,"field":"name"},` +
			`{"type":"struct","fields":[{"type":"boolean","optional":false,"field":"ok"}],"optional":true,"field":"inner"}],"optional":false,"name":"rec","version":2,"doc":"d","parameters":{"a":"b"}}`,
			`{"id":7,"name":"q\"uote\n","inner":{"ok":true}}`},
		{`{"type":"int64","optional":false,"name":"org.apache.kafka.connect.data.Timestamp","version":1}`, `1483425001864`},
		{`{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Date","version":1}`, `17169`},
		{`{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Time","version":1}`, `3600001`},
		{`{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"}}`, `"/zk="`},
		{`{"type":"string","optional":false,"default":"x"}`, `"y"`},
	} {
		s, v, err := Decode(jsonData(c.schema, c.payload))
		if err != nil {
			t.Errorf("%s %s: %v", c.schema, c.payload, err)
			continue
		}
		d, err := Encode(s, v)
		if err != nil {
			t.Errorf("%s %s: encode: %v", c.schema, c.payload, err)
			continue
		}
		if d.Tag == wire.TagString {
			d = wire.JSON([]byte(`{"type":"string","optional":false}`), []byte(`"`+string(d.Bytes)+`"`))
		}
		if string(d.Schema) != c.schema || string(d.Bytes) != c.payload {
			t.Errorf("round trip of %s %s:\n got %s %s", c.schema, c.payload, d.Schema, d.Bytes)
		}
	}
}

func jsonData(schema, payload string) wire.Data {
	if schema == "" {
		return wire.JSON(nil, []byte(payload))
	}
	return wire.JSON([]byte(schema), []byte(payload))
}

func TestGoValues(t *testing.T) {
	s, v, err := Decode(jsonData(`{"type":"struct","fields":[{"type":"int16","optional":false,"field":"n"},`+
		`{"type":"int64","optional":true,"name":"org.apache.kafka.connect.data.Timestamp","version":1,"field":"ts"},`+
		`{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"},"field":"price"},`+
		`{"type":"string","optional":false,"default":"none","field":"label"}],"optional":false}`,
		`{"n":3,"ts":86401000,"price":"AQI=","label":null,"ignored":{"x":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	st := v.(*Struct)
	if st.Schema() != s || st.GetAt(0) != int16(3) || !st.GetAt(1).(time.Time).Equal(time.Date(1970, 1, 2, 0, 0, 1, 0, time.UTC)) ||
		st.GetAt(2).(*big.Rat).FloatString(2) != "2.58" || st.GetAt(3) != "none" {
		t.Fatalf("values %#v", st)
	}
	if _, err := st.Get("nope"); err == nil || err.Error() != "nope is not a valid field name" {
		t.Errorf("Get unknown: %v", err)
	}
	// Same schema JSON, same *Schema.
	s2, _, _ := Decode(jsonData(string(mustJSON(t, s)), `{"n":1,"label":"x"}`))
	if s2 != s {
		t.Error("equal schemas parsed twice")
	}
	// Plain strings and bytes keep their tags.
	if d, _ := Encode(StringSchema, "s"); d.Tag != wire.TagString {
		t.Errorf("string: %+v", d)
	}
	if d, _ := Encode(OptionalBytesSchema, []byte{1}); d.Tag != wire.TagBytes {
		t.Errorf("bytes: %+v", d)
	}
	if d, _ := Encode(OptionalStringSchema, nil); d.Tag != wire.TagJSON || string(d.Schema) != `{"type":"string","optional":true}` || string(d.Bytes) != "null" || !IsNull(d) {
		t.Errorf("null with a schema: %+v", d)
	}
	if d, _ := Encode(nil, nil); d.Tag != wire.TagNull || !IsNull(d) || IsNull(wire.String("")) {
		t.Errorf("null: %+v", d)
	}
	sch, val, _ := Decode(wire.String("x"))
	if sch != StringSchema || val != "x" {
		t.Errorf("string decodes to %v %v", sch, val)
	}
}

func mustJSON(t *testing.T, s *Schema) []byte {
	b, err := s.JSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestErrors(t *testing.T) {
	for _, c := range []struct{ schema, payload, want string }{
		{`{"type":"int32","optional":false}`, `"x"`, `Invalid value for schema type INT32: found STRING "x"`},
		{`{"type":"int8","optional":false}`, `300`, "Invalid value for schema type INT8: 300 is not an integer in range"},
		{`{"type":"struct","fields":[{"type":"array","items":{"type":"int8"},"field":"a"}]}`, `{"a":[1,true]}`, "Invalid value for schema type INT8 at a[1]: found BOOLEAN true"},
		// Kafka's JsonConverter.asConnectSchema texts.
		{`{"type":"array"}`, `[]`, "Array schema did not specify the element type"},
		{`{"type":"map","values":{"type":"string"}}`, `{}`, "Map schema did not specify the key type"},
		{`{"type":"map","keys":{"type":"string"}}`, `{}`, "Map schema did not specify the value type"},
		{`{"type":"int32","optional":false}`, `null`, "Invalid null value for required INT32 field"},
		{`{"type":"struct","fields":[{"type":"string","optional":false,"field":"a"}],"optional":false}`, `{}`, "Invalid null value for required STRING field"},
		{`{"type":"nope"}`, `1`, "Unknown schema type: nope"},
		{`{"optional":true}`, `1`, "Schema must contain 'type' field"},
		{"", `{"a":}`, "invalid JSON payload"},
		{"", `[1,2`, "invalid JSON payload"},
		{"", `"\x01"`, "invalid JSON payload"},
		{"", `1 2`, "unexpected data after the JSON value"},
	} {
		_, _, err := Decode(jsonData(c.schema, c.payload))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v, want %q", c.schema, c.payload, err, c.want)
		}
	}
	s := &Schema{Type: TypeStruct, Fields: []Field{{Name: "a", Schema: Int32Schema}}}
	st := NewStruct(s)
	if _, err := Encode(s, st); err == nil || !strings.Contains(err.Error(), `null used for required field: "a"`) {
		t.Errorf("null required field: %v", err)
	}
	st.PutAt(0, "x")
	if _, err := Encode(s, st); err == nil || !strings.Contains(err.Error(), "Invalid Java object for schema with type INT32: string for field: \"a\"") {
		t.Errorf("wrong type: %v", err)
	}
	if _, err := Encode(nil, struct{}{}); err == nil {
		t.Error("unknown Go type encoded")
	}
}

func TestStringEscapes(t *testing.T) {
	_, v, err := Decode(jsonData("", `"a\"b\\c\/d\u00e9\ud83d\ude00\n"`))
	if err != nil || v != "a\"b\\c/dé😀\n" {
		t.Fatalf("%q %v", v, err)
	}
	d, _ := Encode(nil, "tab\there \x01 \"q\" \xff")
	if string(d.Bytes) != "\"tab\\there \\u0001 \\\"q\\\" \uFFFD\"" {
		t.Errorf("escaped %s", d.Bytes)
	}
}

func TestDecimalBytes(t *testing.T) {
	for _, c := range []struct {
		v     string
		scale int
		b64   string
	}{{"2.58", 2, "AQI="}, {"-2.01", 2, "/zc="}, {"0", 0, "AA=="}, {"1.28", 2, "AIA="}, {"-1.28", 2, "gA=="}} {
		r, _ := new(big.Rat).SetString(c.v)
		s := &Schema{Type: TypeBytes, Name: DecimalName, Parameters: map[string]string{"scale": itoa(c.scale)}}
		d, err := Encode(s, r)
		if err != nil || string(d.Bytes) != `"`+c.b64+`"` {
			t.Errorf("%s: %s %v, want %s", c.v, d.Bytes, err, c.b64)
		}
	}
}

func itoa(n int) string { return string(rune('0' + n)) }

func FuzzDecode(f *testing.F) {
	f.Add("", `{"a":[1,2.5,"x",null,true],"b":{"c":"\u00e9"}}`)
	f.Add(`{"type":"struct","fields":[{"type":"int32","optional":true,"field":"a"}],"optional":false}`, `{"a":1}`)
	f.Add(`{"type":"map","keys":{"type":"int8","optional":false},"values":{"type":"bytes","optional":true},"optional":false}`, `[[1,"AA=="]]`)
	f.Fuzz(func(t *testing.T, schema, payload string) {
		s, v, err := Decode(jsonData(schema, payload))
		if err != nil {
			return
		}
		d, err := Encode(s, v)
		if err != nil {
			return // e.g. a null for a required schema
		}
		// What Encode writes decodes again to the same JSON.
		s2, v2, err := Decode(d)
		if err != nil {
			t.Fatalf("re-decoding %q %q: %v", d.Schema, d.Bytes, err)
		}
		d2, err := Encode(s2, v2)
		if err != nil || string(d2.Bytes) != string(d.Bytes) {
			t.Fatalf("not stable: %q then %q (%v)", d.Bytes, d2.Bytes, err)
		}
	})
}

func TestScanObject(t *testing.T) {
	payload := []byte(` {"a": 1, "b\"q":{"x":[1,{"y":"}"}]},"c":"s\"t" , "d":null} `)
	var got []string
	err := ScanObject(payload, func(k []byte, start, end int) error {
		got = append(got, string(k)+"="+string(payload[start:end]))
		return nil
	})
	want := []string{`a=1`, `b"q={"x":[1,{"y":"}"}]}`, `c="s\"t"`, `d=null`}
	if err != nil || strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q %v", got, err)
	}
	for _, bad := range []string{`[1]`, `{"a":}`, `{"a":1}x`, `{"a":"x`} {
		if err := ScanObject([]byte(bad), func([]byte, int, int) error { return nil }); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestDecodeJSONRejectsTrailingData(t *testing.T) {
	for _, in := range []string{`{} {}`, `{} }`, `{} ]`, `1 2`, `"a" x`} {
		if v, err := DecodeJSON([]byte(in)); err == nil {
			t.Errorf("DecodeJSON(%s) = %v, want an error", in, v)
		}
	}
	for in, want := range map[string]string{` {"a": 1.0} `: "map[a:1.0]", "[]\n": "[]", `null`: "<nil>"} {
		if v, err := DecodeJSON([]byte(in)); err != nil || fmt.Sprint(v) != want {
			t.Errorf("DecodeJSON(%s) = %v %v, want %s", in, v, err, want)
		}
	}
}

// TestDecimals checks the Decimal bytes (BigInteger.toByteArray of the unscaled value) and the
// NUMERIC form for positive, zero and negative scales.
func TestDecimals(t *testing.T) {
	for _, tc := range []struct {
		num   string
		scale int
		b64   string
		text  string // decimal.format=NUMERIC
	}{
		{"123.45", 2, "MDk=", "123.45"}, {"-1.50", 2, "/2o=", "-1.50"}, {"0", 0, "AA==", "0"}, {"128", 0, "AIA=", "128"},
		{"-128", 0, "gA==", "-128"}, {"-129", 0, "/38=", "-129"}, {"0.001", 3, "AQ==", "0.001"}, {"1000", -3, "AQ==", "1000"},
		{"-0.05", 2, "+w==", "-0.05"},
	} {
		r, err := decimalFromText(tc.num, tc.scale)
		if err != nil {
			t.Fatalf("decimalFromText(%s, %d): %v", tc.num, tc.scale, err)
		}
		b, err := decimalBytes(r, tc.scale)
		if err != nil || base64.StdEncoding.EncodeToString(b) != tc.b64 {
			t.Errorf("decimalBytes(%s, %d) = %s %v, want %s", tc.num, tc.scale, base64.StdEncoding.EncodeToString(b), err, tc.b64)
		}
		raw, _ := base64.StdEncoding.DecodeString(tc.b64)
		back := decimalFromBytes(raw, tc.scale)
		if back.Cmp(r) != 0 {
			t.Errorf("decimalFromBytes(%s, %d) = %s, want %s", tc.b64, tc.scale, back.RatString(), r.RatString())
		}
		if got, err := decimalText(back, tc.scale); err != nil || got != tc.text {
			t.Errorf("decimalText(%s, %d) = %s %v, want %s", tc.b64, tc.scale, got, err, tc.text)
		}
	}
	if _, err := decimalFromText("1.25", 1); err == nil || !strings.Contains(err.Error(), "rounding necessary") {
		t.Errorf("1.25 at scale 1: %v", err)
	}
}

// TestReadPayload checks JsonConverter's reading and writing options and whether a payload must be
// rewritten to say what was read.
func TestReadPayload(t *testing.T) {
	person, err := ParseSchema([]byte(`{"type":"struct","fields":[{"type":"int32","field":"id"},{"type":"string","optional":true,"default":"d","field":"s"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	dec, _ := ParseSchema([]byte(`{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"}}`))
	for _, tc := range []struct {
		s         *Schema
		payload   string
		o         PayloadOptions
		rewritten bool
		out       string
	}{
		{person, `{"id":1,"s":"x"}`, PayloadOptions{}, false, `{"id":1,"s":"x"}`},
		{person, ` { "s" : "x" , "id" : 1.0E0 } `, PayloadOptions{}, true, `{"id":1,"s":"x"}`},
		{person, `{"id":1}`, PayloadOptions{}, true, `{"id":1,"s":"d"}`},
		{person, `{"id":1}`, PayloadOptions{KeepNulls: true}, false, `{"id":1,"s":null}`},
		{person, `{"id":1,"extra":[1]}`, PayloadOptions{}, true, `{"id":1,"s":"d"}`},
		{dec, `"MDk="`, PayloadOptions{}, false, `"MDk="`},
		{dec, `123.45`, PayloadOptions{}, true, `"MDk="`},
		{dec, `"MDk="`, PayloadOptions{Writing: true, DecimalNumeric: true}, true, `123.45`},
		{dec, `123.45`, PayloadOptions{Writing: true, DecimalNumeric: true}, false, `123.45`},
	} {
		v, rewritten, err := ReadPayload(tc.s, []byte(tc.payload), tc.o)
		if err != nil {
			t.Errorf("%s %+v: %v", tc.payload, tc.o, err)
			continue
		}
		out, err := AppendPayload(nil, tc.s, v, tc.o)
		if err != nil || rewritten != tc.rewritten || string(out) != tc.out {
			t.Errorf("%s %+v: rewritten %v, %s %v; want %v, %s", tc.payload, tc.o, rewritten, out, err, tc.rewritten, tc.out)
		}
	}
	for _, tc := range []struct {
		payload string
		o       PayloadOptions
		want    string
	}{
		{`{"s":"x"}`, PayloadOptions{Root: "payload"}, "Invalid null value for required INT32 field (at payload.id)"},
		{`{"s":"x"}`, PayloadOptions{Root: "payload", Writing: true}, "Conversion error: null value for field that is required and has no default value (at payload.id)"},
		{`{"id":"1"}`, PayloadOptions{Root: "payload"}, `Invalid value for schema type INT32 at payload.id: found STRING "1"`},
		{`[1]`, PayloadOptions{}, "Structs should be encoded as JSON objects, but found ARRAY"},
	} {
		if _, _, err := ReadPayload(person, []byte(tc.payload), tc.o); err == nil || err.Error() != tc.want {
			t.Errorf("%s %+v: %v, want %s", tc.payload, tc.o, err, tc.want)
		}
	}
}

// TestParseSchemaManyFields: every field of a struct with more than 8 fields (where FieldIndex
// switches to a map) is found, and its payload read.
func TestParseSchemaManyFields(t *testing.T) {
	schema, payload := `{"type":"struct","optional":false,"fields":[`, `{`
	for i := range 12 {
		if i > 0 {
			schema, payload = schema+",", payload+","
		}
		schema += fmt.Sprintf(`{"field":"f%d","type":"int32","optional":false}`, i)
		payload += fmt.Sprintf(`"f%d":%d`, i, i)
	}
	s, v, err := Decode(wire.JSON([]byte(schema+"]}"), []byte(payload+"}")))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		if got := s.FieldIndex(fmt.Sprintf("f%d", i)); got != i {
			t.Errorf("FieldIndex(f%d) = %d", i, got)
		}
		if got := v.(*Struct).GetAt(i); got != int32(i) {
			t.Errorf("field f%d = %v, want %d", i, got, i)
		}
	}
}
