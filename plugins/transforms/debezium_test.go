package transforms_test

import (
	"strings"
	"testing"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// Debezium's PostgreSQL change events for a table public.customers(id int primary key, name text):
// the envelope schema as Debezium's JsonConverter output carries it.
const (
	dbzRow    = `{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"string","optional":true,"field":"name"}],"optional":true,"name":"db.public.customers.Value"}`
	dbzSource = `{"type":"struct","fields":[{"type":"string","optional":false,"field":"connector"},{"type":"int64","optional":false,"field":"ts_ms"},{"type":"string","optional":false,"field":"table"},{"type":"int64","optional":true,"field":"lsn"}],"optional":false,"name":"io.debezium.connector.postgresql.Source","field":"source"}`
)

func dbzEnvelope() string {
	row := strings.TrimSuffix(dbzRow, "}")
	return `{"type":"struct","fields":[` + row + `,"field":"before"},` + row + `,"field":"after"},` + dbzSource +
		`,{"type":"string","optional":false,"field":"op"},{"type":"int64","optional":true,"field":"ts_ms"}],"optional":false,"name":"db.public.customers.Envelope","version":1}`
}

func dbzEvent(before, after, op string) wire.Record {
	payload := `{"before":` + before + `,"after":` + after + `,"source":{"connector":"postgresql","ts_ms":1700000000000,"table":"customers","lsn":24023128},"op":"` + op + `","ts_ms":1700000000123}`
	r := sourceRec(js(`{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}],"optional":false,"name":"db.public.customers.Key"}`, `{"id":1}`), js(dbzEnvelope(), payload))
	r.Topic = "db.public.customers"
	return r
}

// TestExtractNewRecordState runs Debezium's event flattening through the WebAssembly boundary:
// creates become their after state, deletes and tombstones follow the delete settings, and
// add.fields/add.headers copy envelope fields.
func TestExtractNewRecordState(t *testing.T) {
	const class = "io.debezium.transforms.ExtractNewRecordState"
	alice := `{"id":1,"name":"alice"}`
	create, del := dbzEvent("null", alice, "c"), dbzEvent(alice, "null", "d")
	tombstone := with(create, func(r *wire.Record) { r.Value = wire.Null() })
	deletedRow := strings.TrimSuffix(dbzRow, `],"optional":true,"name":"db.public.customers.Value"}`) +
		`,{"type":"string","optional":true,"field":"__deleted"}],"optional":true,"name":"db.public.customers.Value"}`
	runCases(t, []tcase{
		{name: "create", class: class, in: create, want: with(create, func(r *wire.Record) { r.Value = js(dbzRow, alice) })},
		{name: "delete dropped by default", class: "ExtractNewRecordState", in: del, drop: true},
		{name: "tombstone dropped by default", class: class, in: *tombstone, drop: true},
		{name: "tombstone kept", class: class, cfg: map[string]string{"drop.tombstones": "false"}, in: *tombstone},
		{name: "delete none", class: class, cfg: map[string]string{"delete.handling.mode": "none"}, in: del,
			want: with(del, func(r *wire.Record) { r.Value = js(dbzRow, `null`) })},
		{name: "delete rewrite", class: class, cfg: map[string]string{"delete.handling.mode": "rewrite"}, in: del,
			want: with(del, func(r *wire.Record) { r.Value = js(deletedRow, `{"id":1,"name":"alice","__deleted":"true"}`) })},
		{name: "delete to tombstone", class: class, cfg: map[string]string{"delete.tombstone.handling.mode": "delete-to-tombstone"}, in: del,
			want: with(del, func(r *wire.Record) { r.Value = wire.Null() })},
		{name: "add fields and headers", class: class, cfg: map[string]string{"add.fields": "op,table,lsn,source.ts_ms", "add.headers": "op,db"}, in: create,
			want: with(create, func(r *wire.Record) {
				r.Value = js(strings.TrimSuffix(dbzRow, `],"optional":true,"name":"db.public.customers.Value"}`)+
					`,{"type":"string","optional":true,"field":"__op"},{"type":"string","optional":true,"field":"__table"},`+
					`{"type":"int64","optional":true,"field":"__lsn"},{"type":"int64","optional":true,"field":"__source_ts_ms"}],"optional":true,"name":"db.public.customers.Value"}`,
					`{"id":1,"name":"alice","__op":"c","__table":"customers","__lsn":24023128,"__source_ts_ms":1700000000000}`)
				r.Headers = []wire.Header{{Key: "__op", Value: wire.String("c")}}
			})},
		{name: "not an envelope", class: class, in: sourceRec(wire.Null(), js(`{"type":"string","optional":false}`, `"x"`))},
	})
	if _, err := tryOpen(class, wire.RoleTransformation, map[string]string{"delete.handling.mode": "keep"}); err == nil || !strings.Contains(err.Error(), "delete.handling.mode") {
		t.Errorf("delete.handling.mode=keep: %v, want an error naming the setting", err)
	}
}
