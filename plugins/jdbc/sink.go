package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
	"github.com/wasmconnect/wasmconnect/sdk/go/connect"
)

type sinkConnector struct{}

func (sinkConnector) Validate(cfg sdk.Config) map[string][]string {
	errs := map[string][]string{}
	if _, err := pgConfig(cfg); err != nil {
		errs["connection.url"] = append(errs["connection.url"], configMessage(err))
	}
	s, err := parseSinkSettings(cfg)
	if err != nil {
		return map[string][]string{"": {err.Error()}}
	}
	if s.deleteEnabled && s.pkMode != "record_key" {
		errs["delete.enabled"] = append(errs["delete.enabled"], "delete.enabled=true needs pk.mode=record_key (the key of a tombstone names the row), not "+s.pkMode)
	}
	if s.insertMode != "insert" && s.pkMode == "none" {
		errs["pk.mode"] = append(errs["pk.mode"], "insert.mode="+s.insertMode+" needs a primary key: pk.mode kafka, record_key or record_value, not none")
	}
	return errs
}

// configMessage is the message of a config error without its "Invalid value ... for configuration
// key:" prefix, which VALIDATE adds itself.
func configMessage(err error) string {
	return err.Error()
}

func (sinkConnector) TaskConfigs(cfg sdk.Config, maxTasks int) ([]sdk.Config, error) {
	out := make([]sdk.Config, maxTasks)
	for i := range out {
		out[i] = cfg
	}
	return out, nil
}

func (sinkConnector) NewTask() sdk.SinkTask { return &sinkTask{} }

// sinkSettings are the sink's parsed settings.
type sinkSettings struct {
	insertMode, pkMode string
	pkFields           []string
	whitelist          map[string]bool
	tableFormat        string
	batchSize          int
	deleteEnabled      bool
	autoCreate         bool
	autoEvolve         bool
	maxRetries         int
	retryBackoff       time.Duration
}

func parseSinkSettings(cfg sdk.Config) (*sinkSettings, error) {
	s := &sinkSettings{
		insertMode:  strings.ToLower(cfg.String("insert.mode", "insert")),
		pkMode:      strings.ToLower(cfg.String("pk.mode", "none")),
		pkFields:    cfg.List("pk.fields", nil),
		tableFormat: cfg.String("table.name.format", "${topic}"),
	}
	if wl := cfg.List("fields.whitelist", nil); len(wl) > 0 {
		s.whitelist = map[string]bool{}
		for _, f := range wl {
			s.whitelist[f] = true
		}
	}
	var err error
	var backoff int
	for _, e := range []error{
		get(&s.batchSize, cfg.Int, "batch.size", 3000),
		get(&s.deleteEnabled, cfg.Bool, "delete.enabled", false),
		get(&s.autoCreate, cfg.Bool, "auto.create", false),
		get(&s.autoEvolve, cfg.Bool, "auto.evolve", false),
		get(&s.maxRetries, cfg.Int, "max.retries", 10),
		get(&backoff, cfg.Int, "retry.backoff.ms", 3000),
	} {
		err = errors.Join(err, e)
	}
	s.retryBackoff = time.Duration(backoff) * time.Millisecond
	return s, err
}

func get[T any](dst *T, parse func(string, T) (T, error), key string, def T) error {
	v, err := parse(key, def)
	*dst = v
	return err
}

type sinkTask struct {
	ctx         *sdk.TaskContext
	cfg         sdk.Config
	s           *sinkSettings
	conn        *pgx.Conn
	tables      map[tableID]*tableInfo
	plans       map[planKey]*plan
	retriesLeft int
	params      [][]byte // reused parameter slices
	buf         []byte
}

type planKey struct {
	table      tableID
	key, value *connect.Schema
}

func (t *sinkTask) Start(ctx *sdk.TaskContext, cfg sdk.Config) error {
	s, err := parseSinkSettings(cfg)
	if err != nil {
		return err
	}
	t.ctx, t.cfg, t.s, t.retriesLeft = ctx, cfg, s, s.maxRetries
	t.tables, t.plans = map[tableID]*tableInfo{}, map[planKey]*plan{}
	t.conn, err = dialDB(cfg)
	return err
}

func (t *sinkTask) Stop() error {
	if t.conn != nil {
		t.conn.Close(context.Background())
	}
	return nil
}

// Flush has nothing to do: Put returns once its records are committed.
func (t *sinkTask) Flush([]sdk.TopicPartitionOffset) error { return nil }

// Put writes the records in transactions of at most batch.size records, each one round trip to the
// database. A failed write that may succeed later (the connection broke, the server restarted) is
// retried max.retries times retry.backoff.ms apart: the worker hands the same records again.
func (t *sinkTask) Put(records []sdk.SinkRecord) error {
	for len(records) > 0 {
		n := min(len(records), t.s.batchSize)
		if err := t.writeRetrying(records[:n]); err != nil {
			return err
		}
		records = records[n:]
	}
	return nil
}

func (t *sinkTask) writeRetrying(records []sdk.SinkRecord) error {
	err := t.write(records)
	if err == nil {
		t.retriesLeft = t.s.maxRetries
		return nil
	}
	var final *finalError
	if errors.As(err, &final) {
		return final.err
	}
	if t.conn != nil {
		t.conn.Close(context.Background())
		t.conn = nil
	}
	t.tables = map[tableID]*tableInfo{} // the table may have changed while we were away
	if t.retriesLeft <= 0 {
		return fmt.Errorf("writing %d records to PostgreSQL failed, and max.retries (%d) retries are used up: %w", len(records), t.s.maxRetries, err)
	}
	t.retriesLeft--
	t.ctx.Logf(sdk.LevelWarn, "writing %d records failed (%d of max.retries=%d retries left), retrying in %s: %v", len(records), t.retriesLeft, t.s.maxRetries, t.s.retryBackoff, err)
	time.Sleep(t.s.retryBackoff)
	return sdk.Retriable(err)
}

// finalError is an error that retrying does not fix: bad records, a table that does not fit.
type finalError struct{ err error }

func (e *finalError) Error() string { return e.err.Error() }
func (e *finalError) Unwrap() error { return e.err }

func final(err error) error { return &finalError{err} }

// A run is consecutive records of one table written by one statement kind with one plan.
type run struct {
	plan   *plan
	delete bool
	rows   [][][]byte
	byKey  map[string]int // upsert and delete: the row of each key, so a later record replaces it
}

// write writes records in one transaction: per table, in order, runs of rows, each run one or a
// few multi-row statements; all statements go to the server in one pipeline ending in one Sync,
// which PostgreSQL runs as one implicit transaction.
func (t *sinkTask) write(records []sdk.SinkRecord) error {
	if t.conn == nil {
		conn, err := dialDB(t.cfg)
		if err != nil {
			return err
		}
		t.conn = conn
	}
	var order []tableID
	runs := map[tableID][]*run{}
	for i := range records {
		r := &records[i]
		p, tombstone, row, err := t.rowOf(r)
		if err != nil {
			return err
		}
		if p == nil {
			continue
		}
		rs := runs[p.table]
		if rs == nil {
			order = append(order, p.table)
		}
		var cur *run
		if len(rs) > 0 && rs[len(rs)-1].plan == p && rs[len(rs)-1].delete == tombstone {
			cur = rs[len(rs)-1]
		} else {
			cur = &run{plan: p, delete: tombstone}
			if tombstone || t.s.insertMode == "upsert" {
				cur.byKey = map[string]int{}
			}
			runs[p.table] = append(rs, cur)
		}
		if cur.byKey != nil {
			k := rowKey(row[:len(p.keys)])
			if j, ok := cur.byKey[k]; ok {
				cur.rows[j] = row
				continue
			}
			cur.byKey[k] = len(cur.rows)
		}
		cur.rows = append(cur.rows, row)
	}
	batch := &pgconn.Batch{}
	for _, table := range order {
		for _, r := range runs[table] {
			if err := t.queue(batch, r); err != nil {
				return err
			}
		}
	}
	if len(order) == 0 {
		return nil
	}
	results, err := t.conn.PgConn().ExecBatch(context.Background(), batch).ReadAll()
	if err == nil {
		for _, res := range results {
			if res.Err != nil {
				err = res.Err
				break
			}
		}
	}
	if err != nil {
		return classify(fmt.Errorf("writing %d records to %s: %w", len(records), tableList(order), err))
	}
	return nil
}

func tableList(ts []tableID) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.quoted()
	}
	return strings.Join(names, ", ")
}

// classify marks errors the data or the schema cause as final: data exceptions (class 22),
// constraint violations (23) and undefined or mistyped objects (42) fail the same way again; the
// bad records' errors are record errors, so errors.tolerance=all can send them to the DLQ.
func classify(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code[:2] {
		case "22", "23":
			return final(&sdk.RecordError{Class: "org.apache.kafka.connect.errors.DataException", Err: err})
		case "42":
			return final(err)
		}
	}
	return err
}

func rowKey(keys [][]byte) string {
	var b strings.Builder
	for _, k := range keys {
		if k == nil {
			b.WriteString("N")
		} else {
			b.WriteString(strconv.Itoa(len(k)))
			b.WriteByte(':')
			b.Write(k)
		}
	}
	return b.String()
}

// rowOf decodes a record and returns its plan and its row (key columns first, in text format,
// nil for NULL); a nil plan when the record is skipped.
func (t *sinkTask) rowOf(r *sdk.SinkRecord) (*plan, bool, [][]byte, error) {
	table := parseTableID(strings.ReplaceAll(t.s.tableFormat, "${topic}", r.Topic))
	where := fmt.Sprintf("record at topic %q partition %d offset %d", r.Topic, r.Partition, r.Offset)
	var keySchema *connect.Schema
	var key any
	if t.s.pkMode == "record_key" || t.s.deleteEnabled {
		var err error
		if keySchema, key, err = connect.Decode(r.Key); err != nil {
			return nil, false, nil, final(sdk.DataError("%s: key: %v", where, err))
		}
		if key == nil || keySchema == nil {
			return nil, false, nil, final(sdk.DataError("%s has a %s key, but pk.mode=%s and delete.enabled=%t need a non-null key with a schema (a Struct or a primitive): use a converter that gives keys schemas (JsonConverter with schemas.enable=true, StringConverter)",
				where, nullOr(key, "schemaless"), t.s.pkMode, t.s.deleteEnabled))
		}
	}
	valueSchema, value, err := connect.Decode(r.Value)
	if err != nil {
		return nil, false, nil, final(sdk.DataError("%s: value: %v", where, err))
	}
	tombstone := value == nil
	if tombstone && !t.s.deleteEnabled {
		return nil, false, nil, final(sdk.DataError("%s has a null value (a tombstone), but delete.enabled=false and pk.mode=%s need non-null Struct values with a schema", where, t.s.pkMode))
	}
	if !tombstone && valueSchema == nil {
		return nil, false, nil, final(sdk.DataError("%s has a value without a schema, but the JDBC sink needs Struct values with a schema: set value.converter.schemas.enable=true (JsonConverter with {\"schema\":...,\"payload\":...} values)", where))
	}
	if tombstone {
		valueSchema = nil
	}
	pk := planKey{table, keySchema, valueSchema}
	p := t.plans[pk]
	if p == nil {
		if p, err = t.s.newPlan(table, keySchema, valueSchema); err != nil {
			return nil, false, nil, final(err)
		}
		if err := t.ensureTable(p); err != nil {
			return nil, false, nil, err
		}
		t.plans[pk] = p
	}
	var st *connect.Struct
	if !tombstone {
		var ok bool
		if st, ok = value.(*connect.Struct); !ok {
			return nil, false, nil, final(sdk.DataError("%s: the value is a %T, not a Struct", where, value))
		}
	}
	cols := p.keys
	if !tombstone {
		cols = p.columns()
	}
	row := make([][]byte, len(cols))
	for i, c := range cols {
		var v any
		switch c.from {
		case fromTopic:
			v = r.Topic
		case fromPartition:
			v = r.Partition
		case fromOffset:
			v = r.Offset
		case fromKey:
			v = key
		case fromKeyField:
			v = key.(*connect.Struct).GetAt(c.index)
		case fromValueField:
			v = st.GetAt(c.index)
		}
		if v == nil {
			continue
		}
		b, err := appendText(nil, c.schema, v)
		if err != nil {
			return nil, false, nil, final(sdk.DataError("%s: field %q: %v", where, c.name, err))
		}
		row[i] = b
	}
	return p, tombstone, row, nil
}

func nullOr(v any, otherwise string) string {
	if v == nil {
		return "null"
	}
	return otherwise
}

// maxParams is PostgreSQL's limit of parameters in one statement.
const maxParams = 65535

// queue adds the statements of a run to the batch.
func (t *sinkTask) queue(b *pgconn.Batch, r *run) error {
	info := t.tables[r.plan.table]
	cols := r.plan.keys
	if !r.delete {
		cols = r.plan.columns()
	}
	oids := make([]uint32, len(cols))
	names := make([]string, len(cols))
	for i, c := range cols {
		dbc := info.column(c.name)
		oids[i], names[i] = dbc.oid, quoteIdent(dbc.name)
	}
	if r.delete || t.s.insertMode != "update" {
		per := max(1, maxParams/len(cols))
		for start := 0; start < len(r.rows); start += per {
			rows := r.rows[start:min(len(r.rows), start+per)]
			var sql strings.Builder
			if r.delete {
				deleteSQL(&sql, r.plan.table, names, len(rows))
			} else {
				insertSQL(&sql, r.plan.table, names, len(r.plan.keys), len(rows), t.s.insertMode == "upsert")
			}
			params := make([][]byte, 0, len(rows)*len(cols))
			allOIDs := make([]uint32, 0, len(rows)*len(cols))
			for _, row := range rows {
				params = append(params, row...)
				allOIDs = append(allOIDs, oids...)
			}
			b.ExecParams(sql.String(), params, allOIDs, nil, nil)
		}
		return nil
	}
	// update: one statement per row, SET the values WHERE the keys match.
	var sql strings.Builder
	sql.WriteString("UPDATE " + r.plan.table.quoted() + " SET ")
	nk := len(r.plan.keys)
	for i, n := range names[nk:] {
		if i > 0 {
			sql.WriteByte(',')
		}
		fmt.Fprintf(&sql, "%s=$%d", n, i+1)
	}
	sql.WriteString(" WHERE ")
	for i, n := range names[:nk] {
		if i > 0 {
			sql.WriteString(" AND ")
		}
		fmt.Fprintf(&sql, "%s=$%d", n, len(names)-nk+i+1)
	}
	stmt := sql.String()
	updOIDs := append(append([]uint32(nil), oids[nk:]...), oids[:nk]...)
	for _, row := range r.rows {
		params := append(append([][]byte(nil), row[nk:]...), row[:nk]...)
		b.ExecParams(stmt, params, updOIDs, nil, nil)
	}
	return nil
}

func insertSQL(sql *strings.Builder, table tableID, names []string, nkeys, nrows int, upsert bool) {
	sql.WriteString("INSERT INTO " + table.quoted() + " (" + strings.Join(names, ",") + ") VALUES ")
	n := 1
	for r := range nrows {
		if r > 0 {
			sql.WriteByte(',')
		}
		sql.WriteByte('(')
		for c := range names {
			if c > 0 {
				sql.WriteByte(',')
			}
			sql.WriteByte('$')
			sql.WriteString(strconv.Itoa(n))
			n++
		}
		sql.WriteByte(')')
	}
	if !upsert {
		return
	}
	sql.WriteString(" ON CONFLICT (" + strings.Join(names[:nkeys], ",") + ")")
	if len(names) == nkeys {
		sql.WriteString(" DO NOTHING")
		return
	}
	sql.WriteString(" DO UPDATE SET ")
	for i, n := range names[nkeys:] {
		if i > 0 {
			sql.WriteByte(',')
		}
		sql.WriteString(n + "=EXCLUDED." + n)
	}
}

func deleteSQL(sql *strings.Builder, table tableID, keys []string, nrows int) {
	sql.WriteString("DELETE FROM " + table.quoted() + " WHERE (" + strings.Join(keys, ",") + ") IN (")
	n := 1
	for r := range nrows {
		if r > 0 {
			sql.WriteByte(',')
		}
		sql.WriteByte('(')
		for c := range keys {
			if c > 0 {
				sql.WriteByte(',')
			}
			sql.WriteByte('$')
			sql.WriteString(strconv.Itoa(n))
			n++
		}
		sql.WriteByte(')')
	}
	sql.WriteByte(')')
}
