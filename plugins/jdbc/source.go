package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
	"github.com/wasmconnect/wasmconnect/sdk/go/connect"
)

type sourceConnector struct{}

func (sourceConnector) Validate(cfg sdk.Config) map[string][]string {
	errs := map[string][]string{}
	add := func(key, msg string) { errs[key] = append(errs[key], msg) }
	if _, err := pgConfig(cfg); err != nil {
		add("connection.url", err.Error())
	}
	mode := cfg["mode"]
	if strings.Contains(mode, "incrementing") && cfg["incrementing.column.name"] == "" {
		add("incrementing.column.name", "mode="+mode+" needs incrementing.column.name")
	}
	if strings.Contains(mode, "timestamp") && len(cfg.List("timestamp.column.name", nil)) == 0 {
		add("timestamp.column.name", "mode="+mode+" needs timestamp.column.name")
	}
	if cfg["query"] != "" && (cfg["table.whitelist"] != "" || cfg["table.blacklist"] != "") {
		add("query", "query and table.whitelist/table.blacklist exclude each other: a query is read instead of tables")
	}
	if cfg["table.whitelist"] != "" && cfg["table.blacklist"] != "" {
		add("table.whitelist", "table.whitelist and table.blacklist exclude each other")
	}
	return errs
}

// TaskConfigs spreads the tables over the tasks (the query is one task). Each task config holds its
// tables under "tables", as the Confluent connector's do. The tables are listed when the tasks are
// configured: a table created later is read after the connector restarts.
func (sourceConnector) TaskConfigs(cfg sdk.Config, maxTasks int) ([]sdk.Config, error) {
	if cfg["query"] != "" {
		return []sdk.Config{cfg}, nil
	}
	conn, err := dialDB(cfg)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	tables, err := listTables(conn, cfg)
	if err != nil {
		return nil, err
	}
	if len(tables) == 0 {
		sdk.Logf(sdk.LevelWarn, "no tables match table.whitelist=%q table.blacklist=%q schema.pattern=%q: the connector runs no task", cfg["table.whitelist"], cfg["table.blacklist"], cfg["schema.pattern"])
		return nil, nil
	}
	var out []sdk.Config
	for _, group := range sdk.Split(tables, maxTasks) {
		c := cfg.Clone()
		names := make([]string, len(group))
		for i, t := range group {
			names[i] = t.String()
		}
		c["tables"] = strings.Join(names, ",")
		out = append(out, c)
	}
	return out, nil
}

// listTables lists the ordinary and partitioned tables outside PostgreSQL's own schemas that the
// whitelist (or blacklist) selects; a list entry is a table's name or schema.name.
func listTables(conn *pgx.Conn, cfg sdk.Config) ([]tableID, error) {
	pattern := "%"
	if p, ok := cfg["schema.pattern"]; ok && p != "" {
		pattern = p
	}
	rows, err := conn.Query(context.Background(), `SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\_toast%'
		AND n.nspname LIKE $1 ORDER BY 1, 2`, pattern)
	if err != nil {
		return nil, fmt.Errorf("listing tables: %w", err)
	}
	all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (tableID, error) {
		var t tableID
		err := r.Scan(&t.schema, &t.name)
		return t, err
	})
	if err != nil {
		return nil, fmt.Errorf("listing tables: %w", err)
	}
	white, black := cfg.List("table.whitelist", nil), cfg.List("table.blacklist", nil)
	matches := func(list []string, t tableID) bool {
		return slices.Contains(list, t.name) || slices.Contains(list, t.String())
	}
	var out []tableID
	for _, t := range all {
		if (len(white) > 0 && !matches(white, t)) || matches(black, t) {
			continue
		}
		out = append(out, t)
	}
	return out, nil
}

func (sourceConnector) NewTask() sdk.SourceTask { return &sourceTask{} }

type sourceTask struct {
	ctx          *sdk.TaskContext
	conn         *pgx.Conn
	mode         string
	incCol       string
	tsCols       []string
	delay        time.Duration
	pollInterval time.Duration
	batchMax     int
	queriers     []*querier // the head is polled; a querier goes to the back when its result is read
	records      []sdk.SourceRecord
}

// querier reads one table (or the query) with the mode's WHERE clause, from its offset on.
type querier struct {
	table     tableID // zero in query mode
	query     string
	topic     string
	partition map[string]any
	notNull   map[string]bool
	off       offset
	next      time.Time // when to query again
	rows      pgx.Rows  // the open result, read batch.max.rows at a time
	schema    *connect.Schema
	oids      []uint32
	incIdx    int   // the incrementing column's index in the result, -1 none
	tsIdx     []int // the timestamp columns' indexes
}

// offset is a position in the Confluent connector's TimestampIncrementingOffset format.
type offset struct {
	ts     time.Time
	hasTS  bool
	inc    int64
	hasInc bool
}

func (o offset) toMap() map[string]any {
	m := map[string]any{}
	if o.hasInc {
		m["incrementing"] = o.inc
	}
	if o.hasTS {
		m["timestamp"] = o.ts.UnixMilli()
		m["timestamp_nanos"] = int64(o.ts.Nanosecond())
	}
	return m
}

func offsetFromMap(m map[string]any) (offset, error) {
	var o offset
	var err error
	num := func(k string) (int64, bool) {
		v, ok := m[k]
		if !ok || v == nil {
			return 0, false
		}
		switch x := v.(type) {
		case int64:
			return x, true
		case float64:
			return int64(x), true
		case json.Number:
			n, e := x.Int64()
			err = errors.Join(err, e)
			return n, true
		}
		err = errors.Join(err, fmt.Errorf("offset %q is a %T, not a number", k, v))
		return 0, false
	}
	o.inc, o.hasInc = num("incrementing")
	if ms, ok := num("timestamp"); ok {
		o.hasTS = true
		nanos, hasNanos := num("timestamp_nanos")
		sec := ms / 1000
		if ms%1000 < 0 {
			sec--
		}
		if !hasNanos {
			nanos = (ms - sec*1000) * int64(time.Millisecond)
		}
		o.ts = time.Unix(sec, nanos).UTC()
	}
	return o, err
}

func (t *sourceTask) Start(ctx *sdk.TaskContext, cfg sdk.Config) error {
	t.ctx, t.mode, t.incCol = ctx, cfg["mode"], cfg["incrementing.column.name"]
	if strings.Contains(t.mode, "timestamp") {
		t.tsCols = cfg.List("timestamp.column.name", nil)
	}
	if !strings.Contains(t.mode, "incrementing") {
		t.incCol = ""
	}
	var pollMs, delayMs int64
	var err error
	for _, e := range []error{
		get(&pollMs, cfg.Int64, "poll.interval.ms", 5000),
		get(&delayMs, cfg.Int64, "timestamp.delay.interval.ms", 0),
		get(&t.batchMax, cfg.Int, "batch.max.rows", 1000),
	} {
		err = errors.Join(err, e)
	}
	if err != nil {
		return err
	}
	t.pollInterval, t.delay = time.Duration(pollMs)*time.Millisecond, time.Duration(delayMs)*time.Millisecond
	var initial *time.Time
	if v := cfg["timestamp.initial"]; v != "" {
		ms, err := cfg.Int64("timestamp.initial", 0)
		if err != nil {
			return err
		}
		ts := time.UnixMilli(ms).UTC()
		if ms == -1 {
			ts = time.Now().UTC()
		}
		initial = &ts
	}
	validate, err := cfg.Bool("validate.non.null", true)
	if err != nil {
		return err
	}
	if t.conn, err = dialDB(cfg); err != nil {
		return err
	}
	prefix := cfg["topic.prefix"]
	if q := cfg["query"]; q != "" {
		t.queriers = []*querier{{query: q, topic: prefix, partition: map[string]any{"query": "query"}}}
	} else {
		for _, name := range cfg.List("tables", nil) {
			id := parseTableID(name)
			q := &querier{table: id, topic: prefix + id.name,
				partition: map[string]any{"protocol": "1", "table": id.String()}}
			if q.notNull, err = t.notNullColumns(id); err != nil {
				return err
			}
			if validate {
				if err := t.checkNonNull(q); err != nil {
					return err
				}
			}
			t.queriers = append(t.queriers, q)
		}
	}
	for _, q := range t.queriers {
		stored, ok, err := ctx.Offset(q.partition)
		if err == nil && !ok && q.table.name != "" {
			// The Confluent connector's protocol 0 partition, {"table": name}, from before protocol 1.
			stored, ok, err = ctx.Offset(map[string]any{"table": q.table.name})
		}
		if err != nil {
			return fmt.Errorf("reading the stored offset of %v: %w", q.partition, err)
		}
		if ok {
			if q.off, err = offsetFromMap(stored); err != nil {
				return fmt.Errorf("stored offset of %v: %w", q.partition, err)
			}
			ctx.Logf(sdk.LevelInfo, "%v resumes at offset %v", q.partition, stored)
		} else if initial != nil {
			q.off = offset{ts: *initial, hasTS: true}
		}
	}
	return nil
}

// notNullColumns reads which of a table's columns are NOT NULL; the Connect fields of the others
// are optional.
func (t *sourceTask) notNullColumns(id tableID) (map[string]bool, error) {
	rows, err := t.conn.Query(context.Background(), `SELECT a.attname, a.attnotnull FROM pg_attribute a
		WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped`, id.quoted())
	if err != nil {
		return nil, fmt.Errorf("reading the columns of table %s: %w", id.quoted(), err)
	}
	defer rows.Close()
	m := map[string]bool{}
	for rows.Next() {
		var name string
		var nn bool
		if err := rows.Scan(&name, &nn); err != nil {
			return nil, err
		}
		m[name] = nn
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("table %s does not exist (tables)", id.quoted())
	}
	return m, nil
}

// checkNonNull fails, as the Confluent connector does with validate.non.null=true, when the
// incrementing column or all the timestamp columns may be NULL: such rows would never be read.
func (t *sourceTask) checkNonNull(q *querier) error {
	if t.incCol != "" {
		nn, ok := q.notNull[t.incCol]
		if !ok {
			return fmt.Errorf("table %s has no incrementing.column.name column %q", q.table.quoted(), t.incCol)
		}
		if !nn {
			return fmt.Errorf("table %s: incrementing.column.name column %q is nullable; make it NOT NULL or set validate.non.null=false", q.table.quoted(), t.incCol)
		}
	}
	if len(t.tsCols) > 0 {
		any := false
		for _, c := range t.tsCols {
			nn, ok := q.notNull[c]
			if !ok {
				return fmt.Errorf("table %s has no timestamp.column.name column %q", q.table.quoted(), c)
			}
			any = any || nn
		}
		if !any {
			return fmt.Errorf("table %s: all the timestamp.column.name columns %v are nullable; make one NOT NULL or set validate.non.null=false", q.table.quoted(), t.tsCols)
		}
	}
	return nil
}

func (t *sourceTask) Commit() error { return nil }

func (t *sourceTask) Stop() error {
	for _, q := range t.queriers {
		if q.rows != nil {
			q.rows.Close()
		}
	}
	if t.conn != nil {
		t.conn.Close(context.Background())
	}
	return nil
}

// Poll reads up to batch.max.rows rows of the head querier's result, querying when its
// poll.interval.ms has passed; it returns nothing when no table is due.
func (t *sourceTask) Poll() ([]sdk.SourceRecord, error) {
	if len(t.queriers) == 0 {
		return nil, nil
	}
	q := t.queriers[0]
	if q.rows == nil {
		if time.Now().Before(q.next) {
			// The head is due first: the queriers go round in the order of their next poll.
			return nil, nil
		}
		if err := t.startQuery(q); err != nil {
			return nil, err
		}
	}
	t.records = t.records[:0]
	for len(t.records) < t.batchMax {
		if !q.rows.Next() {
			q.rows.Close()
			err := q.rows.Err()
			q.rows, q.next = nil, time.Now().Add(t.pollInterval)
			t.queriers = append(t.queriers[1:], q)
			if err != nil {
				return nil, fmt.Errorf("reading %s: %w", q.name(), err)
			}
			break
		}
		rec, err := t.record(q)
		if err != nil {
			q.rows.Close()
			q.rows = nil
			return nil, err
		}
		t.records = append(t.records, rec)
	}
	return t.records, nil
}

func (q *querier) name() string {
	if q.query != "" {
		return "query"
	}
	return "table " + q.table.quoted()
}

// startQuery runs the querier's statement from its offset on, with results in text format.
func (t *sourceTask) startQuery(q *querier) error {
	var sql strings.Builder
	if q.query != "" {
		sql.WriteString(q.query)
	} else {
		sql.WriteString("SELECT * FROM " + q.table.quoted())
	}
	ts := ""
	if len(t.tsCols) == 1 {
		ts = quoteIdent(t.tsCols[0])
	} else if len(t.tsCols) > 1 {
		cols := make([]string, len(t.tsCols))
		for i, c := range t.tsCols {
			cols[i] = quoteIdent(c)
		}
		ts = "COALESCE(" + strings.Join(cols, ",") + ")"
	}
	inc := quoteIdent(t.incCol)
	end := "(CURRENT_TIMESTAMP - $1::float8 * INTERVAL '1 millisecond')"
	args := []any{pgx.QueryResultFormats{pgx.TextFormatCode}}
	begin := q.off.ts
	if !q.off.hasTS {
		begin = time.Unix(0, 0).UTC()
	}
	lastInc := int64(-1)
	if q.off.hasInc {
		lastInc = q.off.inc
	}
	switch {
	case ts != "" && t.incCol != "":
		fmt.Fprintf(&sql, " WHERE %s < %s AND ((%s = $2 AND %s > $3) OR %s > $2) ORDER BY %s,%s ASC", ts, end, ts, inc, ts, ts, inc)
		args = append(args, float64(t.delay.Milliseconds()), begin, lastInc)
	case ts != "":
		fmt.Fprintf(&sql, " WHERE %s > $2 AND %s < %s ORDER BY %s ASC", ts, ts, end, ts)
		args = append(args, float64(t.delay.Milliseconds()), begin)
	case t.incCol != "":
		fmt.Fprintf(&sql, " WHERE %s > $1 ORDER BY %s ASC", inc, inc)
		args = append(args, lastInc)
	}
	rows, err := t.conn.Query(context.Background(), sql.String(), args...)
	if err != nil {
		return fmt.Errorf("querying %s (%s): %w", q.name(), sql.String(), err)
	}
	q.rows = rows
	return t.describe(q)
}

// describe builds the querier's value schema from its result's columns, once per change of them:
// a struct named after the table, as the Confluent connector names it.
func (t *sourceTask) describe(q *querier) error {
	fds := q.rows.FieldDescriptions()
	if q.schema != nil && len(fds) == len(q.oids) {
		same := true
		for i, fd := range fds {
			same = same && fd.DataTypeOID == q.oids[i] && fd.Name == q.schema.Fields[i].Name
		}
		if same {
			return nil
		}
	}
	s := &connect.Schema{Type: connect.TypeStruct, Name: q.table.name}
	q.oids, q.incIdx, q.tsIdx = make([]uint32, len(fds)), -1, nil
	for i, fd := range fds {
		optional := !q.notNull[fd.Name]
		s.Fields = append(s.Fields, connect.Field{Name: fd.Name, Schema: fieldSchema(fd.DataTypeOID, fd.TypeModifier, optional)})
		q.oids[i] = fd.DataTypeOID
		if fd.Name == t.incCol {
			q.incIdx = i
		}
	}
	for _, c := range t.tsCols {
		i := s.FieldIndex(c)
		if i < 0 {
			return fmt.Errorf("%s has no timestamp.column.name column %q", q.name(), c)
		}
		q.tsIdx = append(q.tsIdx, i)
	}
	if t.incCol != "" && q.incIdx < 0 {
		return fmt.Errorf("%s has no incrementing.column.name column %q", q.name(), t.incCol)
	}
	q.schema = s
	return nil
}

// record turns the current row into a source record with the offset that follows it.
func (t *sourceTask) record(q *querier) (sdk.SourceRecord, error) {
	raw := q.rows.RawValues()
	st := connect.NewStruct(q.schema)
	for i, b := range raw {
		if b == nil {
			continue
		}
		v, err := parseText(q.oids[i], q.schema.Fields[i].Schema, b)
		if err != nil {
			return sdk.SourceRecord{}, fmt.Errorf("%s column %q: %w", q.name(), q.schema.Fields[i].Name, err)
		}
		st.PutAt(i, v)
	}
	if q.incIdx >= 0 {
		switch v := st.GetAt(q.incIdx).(type) {
		case int16:
			q.off.inc = int64(v)
		case int32:
			q.off.inc = int64(v)
		case int64:
			q.off.inc = v
		case nil:
			return sdk.SourceRecord{}, fmt.Errorf("%s: incrementing column %q is NULL", q.name(), t.incCol)
		default:
			return sdk.SourceRecord{}, fmt.Errorf("%s: incrementing column %q is a %s, not an integer", q.name(), t.incCol, describe(q.schema.Fields[q.incIdx].Schema))
		}
		q.off.hasInc = true
	}
	for _, i := range q.tsIdx {
		if ts, ok := st.GetAt(i).(time.Time); ok {
			// The offset keeps the column's microseconds (timestamp_nanos); the record's Timestamp
			// field holds milliseconds, as Connect's Timestamp does.
			q.off.ts, q.off.hasTS = ts, true
			break
		}
	}
	value, err := connect.Encode(q.schema, st)
	if err != nil {
		return sdk.SourceRecord{}, fmt.Errorf("%s: %w", q.name(), err)
	}
	rec := sdk.SourceRecord{Topic: q.topic, Value: value, SourcePartition: q.partition}
	if t.mode != "bulk" {
		rec.SourceOffset = q.off.toMap()
	}
	return rec, nil
}
