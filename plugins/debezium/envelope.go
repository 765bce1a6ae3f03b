package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// table is a captured table: its columns and the JSON schemas of its events.
type table struct {
	schema, name string
	topic        string
	cols         []column
	keyCols      []int  // indexes of the primary key's columns, in key order
	keySchema    []byte // nil: the table has no primary key, its events have a null key
	valueSchema  []byte
}

// newTable builds a table's key and value schemas as Debezium names them:
// <prefix>.<schema>.<table>.Key, .Value and .Envelope.
func newTable(s *settings, schema, name string, cols []column, keyCols []int) *table {
	t := &table{schema: schema, name: name, topic: s.server + "." + schema + "." + name, cols: cols, keyCols: keyCols}
	base := t.topic
	if len(keyCols) > 0 {
		var b strings.Builder
		b.WriteString(`{"type":"struct","fields":[`)
		for i, k := range keyCols {
			if i > 0 {
				b.WriteByte(',')
			}
			writeField(&b, cols[k])
		}
		b.WriteString(`],"optional":false,"name":` + strconv.Quote(base+".Key") + `}`)
		t.keySchema = []byte(b.String())
	}
	var row strings.Builder
	row.WriteString(`{"type":"struct","fields":[`)
	for i, c := range cols {
		if i > 0 {
			row.WriteByte(',')
		}
		writeField(&row, c)
	}
	row.WriteString(`],"optional":true,"name":` + strconv.Quote(base+".Value"))
	value := row.String()
	t.valueSchema = []byte(`{"type":"struct","fields":[` +
		value + `,"field":"before"},` +
		value + `,"field":"after"},` +
		sourceSchema + `,` +
		`{"type":"struct","fields":[{"type":"string","optional":false,"field":"id"},{"type":"int64","optional":false,"field":"total_order"},{"type":"int64","optional":false,"field":"data_collection_order"}],"optional":true,"name":"event.block","version":1,"field":"transaction"},` +
		`{"type":"string","optional":false,"field":"op"},` +
		`{"type":"int64","optional":true,"field":"ts_ms"},` +
		`{"type":"int64","optional":true,"field":"ts_us"},` +
		`{"type":"int64","optional":true,"field":"ts_ns"}` +
		`],"optional":false,"name":` + strconv.Quote(base+".Envelope") + `,"version":2}`)
	return t
}

func writeField(b *strings.Builder, c column) {
	b.WriteString(c.schema[:len(c.schema)-1])
	b.WriteString(`,"field":` + strconv.Quote(c.name) + `}`)
}

// sourceSchema is io.debezium.connector.postgresql.Source, as the envelope's source field.
const sourceSchema = `{"type":"struct","fields":[` +
	`{"type":"string","optional":false,"field":"version"},` +
	`{"type":"string","optional":false,"field":"connector"},` +
	`{"type":"string","optional":false,"field":"name"},` +
	`{"type":"int64","optional":false,"field":"ts_ms"},` +
	`{"type":"string","optional":true,"name":"io.debezium.data.Enum","version":1,"parameters":{"allowed":"true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"},"default":"false","field":"snapshot"},` +
	`{"type":"string","optional":false,"field":"db"},` +
	`{"type":"string","optional":true,"field":"sequence"},` +
	`{"type":"int64","optional":true,"field":"ts_us"},` +
	`{"type":"int64","optional":true,"field":"ts_ns"},` +
	`{"type":"string","optional":false,"field":"schema"},` +
	`{"type":"string","optional":false,"field":"table"},` +
	`{"type":"int64","optional":true,"field":"txId"},` +
	`{"type":"int64","optional":true,"field":"lsn"},` +
	`{"type":"int64","optional":true,"field":"xmin"}` +
	`],"optional":false,"name":"io.debezium.connector.postgresql.Source","version":1,"field":"source"}`

// unavailable stands for an unchanged TOASTed value that pgoutput does not send, as Debezium's
// unavailable.value.placeholder.
const unavailable = "__debezium_unavailable_value"

// appendRow appends a row's JSON object. vals[i] is column i's text (nil = NULL); unchanged[i]
// marks a TOASTed value pgoutput left out.
func (t *table) appendRow(b []byte, vals [][]byte, unchanged []bool) ([]byte, error) {
	b = append(b, '{')
	for i := range t.cols {
		c := &t.cols[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, []byte(c.name))
		b = append(b, ':')
		switch {
		case unchanged != nil && unchanged[i]:
			if c.kind == kString || c.kind == kJSONText {
				b = append(b, `"`+unavailable+`"`...)
			} else {
				b = append(b, "null"...)
			}
		case vals[i] == nil && !c.optional:
			// A required column without a value: the non-key columns of a delete's before under
			// REPLICA IDENTITY DEFAULT. Debezium writes the type's fallback so.
			b = c.appendFallback(b)
		case vals[i] == nil:
			b = append(b, "null"...)
		default:
			var err error
			if b, err = c.appendValue(b, vals[i]); err != nil {
				return nil, fmt.Errorf("%s.%s column %q: %w", t.schema, t.name, c.name, err)
			}
		}
	}
	return append(b, '}'), nil
}

// appendKey appends the key's JSON object of a row.
func (t *table) appendKey(b []byte, vals [][]byte) ([]byte, error) {
	b = append(b, '{')
	for i, k := range t.keyCols {
		c := &t.cols[k]
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, []byte(c.name))
		b = append(b, ':')
		if vals[k] == nil {
			b = append(b, "null"...)
			continue
		}
		var err error
		if b, err = c.appendValue(b, vals[k]); err != nil {
			return nil, fmt.Errorf("%s.%s key column %q: %w", t.schema, t.name, c.name, err)
		}
	}
	return append(b, '}'), nil
}

// sourceInfo is what an event's source block says about where it came from.
type sourceInfo struct {
	ts         time.Time // commit time (snapshot: the snapshot's start)
	snapshot   string    // true, first, last_in_data_collection, last; false when streaming
	txID       int64
	lsn        int64
	lastCommit int64 // the commit LSN before this event's transaction, for sequence
}

// appendEnvelope appends an event's value payload: before and after are row JSON (nil = null).
func (t *table) appendEnvelope(b []byte, s *settings, op byte, before, after []byte, src *sourceInfo, now time.Time) []byte {
	b = append(b, `{"before":`...)
	b = appendRaw(b, before)
	b = append(b, `,"after":`...)
	b = appendRaw(b, after)
	b = append(b, `,"source":{"version":"`+debeziumVersion+`","connector":"postgresql","name":`...)
	b = strconv.AppendQuote(b, s.server)
	b = append(b, `,"ts_ms":`...)
	b = strconv.AppendInt(b, src.ts.UnixMilli(), 10)
	b = append(b, `,"snapshot":"`...)
	b = append(b, src.snapshot...)
	b = append(b, `","db":`...)
	b = strconv.AppendQuote(b, s.db)
	b = append(b, `,"sequence":"[`...)
	b = appendLSNString(b, src.lastCommit)
	b = append(b, ',')
	b = appendLSNString(b, src.lsn)
	b = append(b, `]","ts_us":`...)
	b = strconv.AppendInt(b, src.ts.UnixMicro(), 10)
	b = append(b, `,"ts_ns":`...)
	b = strconv.AppendInt(b, src.ts.UnixNano(), 10)
	b = append(b, `,"schema":`...)
	b = strconv.AppendQuote(b, t.schema)
	b = append(b, `,"table":`...)
	b = strconv.AppendQuote(b, t.name)
	b = append(b, `,"txId":`...)
	b = strconv.AppendInt(b, src.txID, 10)
	b = append(b, `,"lsn":`...)
	b = strconv.AppendInt(b, src.lsn, 10)
	b = append(b, `,"xmin":null},"transaction":null,"op":"`...)
	b = append(b, op)
	b = append(b, `","ts_ms":`...)
	b = strconv.AppendInt(b, now.UnixMilli(), 10)
	b = append(b, `,"ts_us":`...)
	b = strconv.AppendInt(b, now.UnixMicro(), 10)
	b = append(b, `,"ts_ns":`...)
	b = strconv.AppendInt(b, now.UnixNano(), 10)
	return append(b, '}')
}

// appendLSNString appends an LSN as Debezium's sequence writes it: a quoted decimal, or null.
func appendLSNString(b []byte, lsn int64) []byte {
	if lsn <= 0 {
		return append(b, "null"...)
	}
	b = append(b, `\"`...)
	b = strconv.AppendInt(b, lsn, 10)
	return append(b, `\"`...)
}

func appendRaw(b, raw []byte) []byte {
	if raw == nil {
		return append(b, "null"...)
	}
	return append(b, raw...)
}

// heartbeat schemas: io.debezium.connector.common.ServerNameKey and .Heartbeat.
const (
	heartbeatKeySchema   = `{"type":"struct","fields":[{"type":"string","optional":false,"field":"serverName"}],"optional":false,"name":"io.debezium.connector.common.ServerNameKey","version":1}`
	heartbeatValueSchema = `{"type":"struct","fields":[{"type":"int64","optional":false,"field":"ts_ms"}],"optional":false,"name":"io.debezium.connector.common.Heartbeat","version":1}`
)
