package main

import (
	"encoding/json"
	"testing"
	"time"
)

func defaults() *settings {
	return &settings{server: "dbserver1", db: "inventory", decimalMode: "precise", timeMode: "adaptive"}
}

// TestColumnValues: text values as PostgreSQL writes them become Debezium's JSON, with the schemas
// Debezium gives the column types.
func TestColumnValues(t *testing.T) {
	s := defaults()
	for _, tc := range []struct {
		oid    uint32
		typmod int32
		mode   string // decimal.handling.mode or time.precision.mode when not the default
		text   string
		want   string
		schema string
	}{
		{oidInt4, -1, "", "42", `42`, `{"type":"int32","optional":true}`},
		{oidBool, -1, "", "t", `true`, `{"type":"boolean","optional":true}`},
		{oidNumeric, (12<<16 | 2) + 4, "", "-1.50", `"/2o="`, `{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2","connect.decimal.precision":"12"}}`},
		{oidNumeric, (12<<16 | 2) + 4, "", "128.00", `"MgA="`, ""},
		{oidNumeric, (12<<16 | 2) + 4, "", "1.28", `"AIA="`, ""},
		{oidNumeric, -1, "", "3.14", `{"scale":2,"value":"ATo="}`, ""},
		{oidNumeric, -1, "string", "3.14", `"3.14"`, `{"type":"string","optional":true}`},
		{oidNumeric, -1, "double", "3.14", `3.14`, `{"type":"double","optional":true}`},
		{oidTimestamp, -1, "", "2024-01-01 00:00:01.5", `1704067201500000`, `{"type":"int64","optional":true,"name":"io.debezium.time.MicroTimestamp","version":1}`},
		{oidTimestamp, 3, "", "2024-01-01 00:00:01.5", `1704067201500`, `{"type":"int64","optional":true,"name":"io.debezium.time.Timestamp","version":1}`},
		{oidTimestampTZ, -1, "", "2024-01-01 10:00:00.25+00", `"2024-01-01T10:00:00.25Z"`, `{"type":"string","optional":true,"name":"io.debezium.time.ZonedTimestamp","version":1}`},
		{oidDate, -1, "", "1970-01-11", `10`, `{"type":"int32","optional":true,"name":"io.debezium.time.Date","version":1}`},
		{oidTime, -1, "", "01:00:00.000001", `3600000001`, `{"type":"int64","optional":true,"name":"io.debezium.time.MicroTime","version":1}`},
		{oidBytea, -1, "", `\x0102ff`, `"AQL/"`, `{"type":"bytes","optional":true}`},
		{oidText, -1, "", "a\"b\n", `"a\"b\n"`, `{"type":"string","optional":true}`},
		{oidJSONB, -1, "", `{"a": 1}`, `"{\"a\": 1}"`, `{"type":"string","optional":true,"name":"io.debezium.data.Json","version":1}`},
	} {
		cs := *s
		switch tc.mode {
		case "string", "double":
			cs.decimalMode = tc.mode
		}
		c := newColumn("c", tc.oid, tc.typmod, true, false, &cs)
		got, err := c.appendValue(nil, []byte(tc.text))
		if err != nil || string(got) != tc.want {
			t.Errorf("oid %d %q: %s, %v; want %s", tc.oid, tc.text, got, err, tc.want)
		}
		if tc.schema != "" && c.schema != tc.schema {
			t.Errorf("oid %d schema %s, want %s", tc.oid, c.schema, tc.schema)
		}
	}
}

// TestEnvelopeIsJSON: the key and value schemas and an event's payload are valid JSON with
// Debezium's names, and a required column without a value gets its fallback.
func TestEnvelopeIsJSON(t *testing.T) {
	s := defaults()
	cols := []column{newColumn("id", oidInt4, -1, false, true, s), newColumn("name", oidText, -1, false, false, s)}
	tb := newTable(s, "public", "customers", cols, []int{0})
	var value struct {
		Name   string
		Fields []struct{ Field, Name string }
	}
	if err := json.Unmarshal(tb.valueSchema, &value); err != nil || value.Name != "dbserver1.public.customers.Envelope" || len(value.Fields) != 8 {
		t.Fatalf("value schema %s: %v", tb.valueSchema, err)
	}
	var key struct{ Name string }
	if err := json.Unmarshal(tb.keySchema, &key); err != nil || key.Name != "dbserver1.public.customers.Key" {
		t.Fatalf("key schema %s: %v", tb.keySchema, err)
	}
	before, err := tb.appendRow(nil, [][]byte{[]byte("7"), nil}, nil)
	if err != nil || string(before) != `{"id":7,"name":""}` {
		t.Fatalf("key-only before: %s, %v", before, err)
	}
	src := sourceInfo{ts: time.UnixMilli(1700000000000), snapshot: "false", txID: 9, lsn: 100, lastCommit: 90}
	payload := tb.appendEnvelope(nil, s, 'd', before, nil, &src, time.UnixMilli(1700000000001))
	var ev struct {
		Op     string
		Source map[string]any
	}
	if err := json.Unmarshal(payload, &ev); err != nil || ev.Op != "d" || ev.Source["sequence"] != `["90","100"]` || ev.Source["table"] != "customers" {
		t.Fatalf("payload %s: %v", payload, err)
	}
}

func TestCaptures(t *testing.T) {
	s := defaults()
	var err error
	if s.include, err = regexps(map[string]string{"table.include.list": "public.cust.*,inv\\.orders"}, "table.include.list"); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]bool{"public.customers": true, "inv.orders": true, "public.orders": false, "xpublic.customers": false} {
		schema, name, _ := cut(id)
		if got := s.captures(schema, name); got != want {
			t.Errorf("captures(%s) = %v, want %v", id, got, want)
		}
	}
}

func cut(id string) (string, string, bool) {
	for i := range id {
		if id[i] == '.' {
			return id[:i], id[i+1:], true
		}
	}
	return "", id, false
}
