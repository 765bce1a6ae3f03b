//go:build !wasip1

package main

// These tests run the built module (GOOS=wasip1, as the worker loads it) in the worker's plugin
// host, against a real PostgreSQL server (plugins/pgtest), with the network granted to that
// server only.

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/plugins/pgtest"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
	"github.com/wasmconnect/wasmconnect/wasmhost"
	"github.com/wasmconnect/wasmconnect/wasmhost/hosttest"
	"github.com/wasmconnect/wasmconnect/wasmhost/netgrant"
	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pluginbuild.Cleanup()
	os.Exit(code)
}

// jdbcHost is a plugin host with the jdbc module whose plugins may connect to grant.
func jdbcHost(t *testing.T, grant string) *wasmhost.Host { return jdbcHostB(t, grant) }

func jdbcHostB(t testing.TB, grant string) *wasmhost.Host {
	t.Helper()
	dir, err := pluginbuild.Dir("plugins/jdbc")
	if err != nil {
		t.Fatal(err)
	}
	g, err := netgrant.Parse(grant)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := hosttest.New(t, wasmhost.Config{
		PluginPath:       []string{dir},
		MemoryLimitBytes: 256 << 20,
		CallTimeout:      30 * time.Second,
		NetAllow:         g,
	})
	return h
}

type offsets map[string]string

func (o offsets) Offset(p []byte) ([]byte, bool) {
	v, ok := o[string(p)]
	return []byte(v), ok
}

// open opens a task of plugin with cfg, closed when the test ends.
func open(t *testing.T, h *wasmhost.Host, plugin string, stored offsets, cfg map[string]string) (*wasmhost.Object, error) {
	t.Helper()
	kind := wire.KindSink
	if strings.Contains(plugin, "Source") {
		kind = wire.KindSource
	}
	p, err := h.Resolve(plugin, kind)
	if err != nil {
		t.Fatal(err)
	}
	s := h.NewSession(wasmhost.Env{Connector: "jdbc-test", Offsets: stored})
	t.Cleanup(func() { s.Close(context.Background()) })
	return s.Open(context.Background(), p, wire.RoleTask, cfg)
}

func mustOpenB(b *testing.B, h *wasmhost.Host, cfg map[string]string) *wasmhost.Object {
	b.Helper()
	p, err := h.Resolve("JdbcSinkConnector", wire.KindSink)
	if err != nil {
		b.Fatal(err)
	}
	s := h.NewSession(wasmhost.Env{Connector: "jdbc-bench"})
	b.Cleanup(func() { s.Close(context.Background()) })
	o, err := s.Open(context.Background(), p, wire.RoleTask, cfg)
	if err != nil {
		b.Fatal(err)
	}
	return o
}

func mustOpen(t *testing.T, h *wasmhost.Host, plugin string, stored offsets, cfg map[string]string) *wasmhost.Object {
	t.Helper()
	o, err := open(t, h, plugin, stored, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func sinkConfig(srv *pgtest.Server, extra ...string) map[string]string {
	cfg := map[string]string{"connection.url": srv.JDBCURL(), "connection.user": srv.User, "connection.password": srv.Password,
		"topics": "orders"}
	for i := 0; i+1 < len(extra); i += 2 {
		cfg[extra[i]] = extra[i+1]
	}
	return cfg
}

// The schema of the test records: every type the sink maps, as JsonConverter writes it.
const allTypesSchema = `{"type":"struct","name":"order","optional":false,"fields":[
 {"field":"id","type":"int64","optional":false},
 {"field":"i8","type":"int8","optional":true},
 {"field":"i16","type":"int16","optional":true},
 {"field":"i32","type":"int32","optional":true},
 {"field":"f32","type":"float","optional":true},
 {"field":"f64","type":"double","optional":true},
 {"field":"ok","type":"boolean","optional":true},
 {"field":"name","type":"string","optional":true},
 {"field":"raw","type":"bytes","optional":true},
 {"field":"price","type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"}},
 {"field":"day","type":"int32","optional":true,"name":"org.apache.kafka.connect.data.Date","version":1},
 {"field":"at","type":"int32","optional":true,"name":"org.apache.kafka.connect.data.Time","version":1},
 {"field":"ts","type":"int64","optional":true,"name":"org.apache.kafka.connect.data.Timestamp","version":1},
 {"field":"tags","type":"array","items":{"type":"string"},"optional":true}]}`

func allTypesRecord(topic string, offset int64, id int, name string) wire.Record {
	// price 12.34 is unscaled 1234 = 0x04d2, base64 "BNI="; day 19000 = 2022-01-08; at 3723004 ms =
	// 01:02:03.004; ts 1700000000123 = 2023-11-14 22:13:20.123 UTC.
	payload := fmt.Sprintf(`{"id":%d,"i8":-8,"i16":1600,"i32":320000,"f32":1.5,"f64":2.25,"ok":true,"name":%q,"raw":"AQID",
		"price":"BNI=","day":19000,"at":3723004,"ts":1700000000123,"tags":["a","b \"c\""]}`, id, name)
	return wire.Record{Topic: topic, Partition: 0, Offset: offset, Timestamp: -1, Key: wire.Null(),
		Value: wire.JSON([]byte(allTypesSchema), []byte(payload))}
}

// TestSinkWritesEveryTypeAndUpsertsRedeliveries: auto.create makes the table with the Confluent
// connector's PostgreSQL types, every Connect type lands as the same value, and in upsert mode a
// redelivered batch (as after a worker crash) leaves one row per key.
func TestSinkWritesEveryTypeAndUpsertsRedeliveries(t *testing.T) {
	srv := pgtest.Start(t, pgtest.Options{})
	h := jdbcHost(t, srv.Addr())
	task := mustOpen(t, h, "io.confluent.connect.jdbc.JdbcSinkConnector", nil, sinkConfig(srv,
		"auto.create", "true", "insert.mode", "upsert", "pk.mode", "record_value", "pk.fields", "id", "batch.size", "7"))
	var batch []wire.Record
	for i := range 50 {
		batch = append(batch, allTypesRecord("orders", int64(i), i, fmt.Sprintf("order %d 'quoted'", i)))
	}
	ctx := context.Background()
	if err := task.Put(ctx, batch); err != nil {
		t.Fatal(err)
	}
	// Redelivery with a changed name: still 50 rows, the names updated.
	for i := range batch {
		batch[i] = allTypesRecord("orders", int64(i), i, fmt.Sprintf("again %d", i))
	}
	if err := task.Put(ctx, batch); err != nil {
		t.Fatal(err)
	}
	c := srv.Connect(t)
	var n int
	if err := c.QueryRow(ctx, `SELECT count(*) FROM orders`).Scan(&n); err != nil || n != 50 {
		t.Fatalf("count %d (%v), want 50", n, err)
	}
	types := map[string]string{}
	rows, _ := c.Query(ctx, `SELECT column_name, data_type, is_nullable FROM information_schema.columns WHERE table_name = 'orders'`)
	for rows.Next() {
		var col, typ, null string
		rows.Scan(&col, &typ, &null)
		types[col] = typ + "/" + null
	}
	want := map[string]string{"id": "bigint/NO", "i8": "smallint/YES", "i16": "smallint/YES", "i32": "integer/YES",
		"f32": "real/YES", "f64": "double precision/YES", "ok": "boolean/YES", "name": "text/YES", "raw": "bytea/YES",
		"price": "numeric/YES", "day": "date/YES", "at": "time without time zone/YES", "ts": "timestamp without time zone/YES",
		"tags": "ARRAY/YES"}
	for col, w := range want {
		if types[col] != w {
			t.Errorf("column %s: %s, want %s", col, types[col], w)
		}
	}
	var row string
	if err := c.QueryRow(ctx, `SELECT concat_ws('|', id, i8, i16, i32, f32, f64, ok, name, encode(raw, 'hex'), price, day, at, ts, tags::text)
		FROM orders WHERE id = 7`).Scan(&row); err != nil {
		t.Fatal(err)
	}
	if w := `7|-8|1600|320000|1.5|2.25|t|again 7|010203|12.34|2022-01-08|01:02:03.004|2023-11-14 22:13:20.123|{a,"b \"c\""}`; row != w {
		t.Errorf("row 7:\n got %s\nwant %s", row, w)
	}
}

// TestSinkDeletesOnTombstones: with pk.mode=record_key and delete.enabled, a null value deletes the
// key's row, in order with the inserts around it.
func TestSinkDeletesOnTombstones(t *testing.T) {
	srv := pgtest.Start(t, pgtest.Options{})
	h := jdbcHost(t, srv.Addr())
	task := mustOpen(t, h, "JdbcSinkConnector", nil, sinkConfig(srv,
		"auto.create", "true", "insert.mode", "upsert", "pk.mode", "record_key", "delete.enabled", "true"))
	keySchema := []byte(`{"type":"struct","fields":[{"field":"k","type":"int32","optional":false}]}`)
	valueSchema := []byte(`{"type":"struct","fields":[{"field":"v","type":"string","optional":true}]}`)
	rec := func(k int, v string) wire.Record {
		val := wire.Null()
		if v != "" {
			val = wire.JSON(valueSchema, []byte(fmt.Sprintf(`{"v":%q}`, v)))
		}
		return wire.Record{Topic: "kv", Offset: int64(k), Timestamp: -1, Key: wire.JSON(keySchema, []byte(fmt.Sprintf(`{"k":%d}`, k))), Value: val}
	}
	ctx := context.Background()
	if err := task.Put(ctx, []wire.Record{rec(1, "a"), rec(2, "b"), rec(3, "c"), rec(2, ""), rec(3, ""), rec(3, "c again")}); err != nil {
		t.Fatal(err)
	}
	var got string
	if err := srv.Connect(t).QueryRow(ctx, `SELECT string_agg(k || '=' || v, ',' ORDER BY k) FROM kv`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != "1=a,3=c again" {
		t.Errorf("rows %s, want 1=a,3=c again", got)
	}
}

// TestSinkAutoEvolve: a record with a new optional field adds a column with auto.evolve; without it
// the task fails naming the table, the field and the setting.
func TestSinkAutoEvolve(t *testing.T) {
	srv := pgtest.Start(t, pgtest.Options{})
	srv.Exec(t, `CREATE TABLE people (id bigint PRIMARY KEY, name text)`)
	h := jdbcHost(t, srv.Addr())
	schema := []byte(`{"type":"struct","fields":[{"field":"id","type":"int64"},{"field":"name","type":"string","optional":true},{"field":"email","type":"string","optional":true}]}`)
	rec := wire.Record{Topic: "people", Offset: 0, Timestamp: -1, Key: wire.Null(),
		Value: wire.JSON(schema, []byte(`{"id":1,"name":"ann","email":"ann@example.com"}`))}
	ctx := context.Background()

	strict := mustOpen(t, h, "JdbcSinkConnector", nil, sinkConfig(srv, "topics", "people"))
	err := strict.Put(ctx, []wire.Record{rec})
	if err == nil || !strings.Contains(err.Error(), `table "people" has no column for the fields email of the records, and auto.evolve is false`) {
		t.Fatalf("Put without auto.evolve: %v", err)
	}
	evolving := mustOpen(t, h, "JdbcSinkConnector", nil, sinkConfig(srv, "topics", "people", "auto.evolve", "true"))
	if err := evolving.Put(ctx, []wire.Record{rec}); err != nil {
		t.Fatal(err)
	}
	var email string
	if err := srv.Connect(t).QueryRow(ctx, `SELECT email FROM people WHERE id = 1`).Scan(&email); err != nil || email != "ann@example.com" {
		t.Fatalf("email %q (%v)", email, err)
	}
}

// TestSinkBadInputIsAClearError: a record without a schema, an unreachable database and a wrong
// password each fail with a message naming the cause and the setting.
func TestSinkBadInputIsAClearError(t *testing.T) {
	srv := pgtest.Start(t, pgtest.Options{})
	h := jdbcHost(t, "127.0.0.1:*")
	ctx := context.Background()

	task := mustOpen(t, h, "JdbcSinkConnector", nil, sinkConfig(srv, "auto.create", "true"))
	schemaless := wire.Record{Topic: "orders", Partition: 2, Offset: 41, Timestamp: -1, Key: wire.Null(), Value: wire.JSON(nil, []byte(`{"id":1}`))}
	if err := task.Put(ctx, []wire.Record{schemaless}); err == nil ||
		!strings.Contains(err.Error(), `record at topic "orders" partition 2 offset 41 has a value without a schema`) ||
		!strings.Contains(err.Error(), "schemas.enable=true") {
		t.Errorf("schemaless record: %v", err)
	}

	closed := fmt.Sprintf("127.0.0.1:%d", closedPort(t))
	_, err := open(t, h, "JdbcSinkConnector", nil, map[string]string{"connection.url": "jdbc:postgresql://" + closed + "/test",
		"connection.user": "test", "connection.attempts": "2", "connection.backoff.ms": "10", "topics": "x"})
	if err == nil || !strings.Contains(err.Error(), "cannot connect to PostgreSQL at 127.0.0.1:") ||
		!strings.Contains(err.Error(), "after 2 attempt(s) (connection.attempts)") {
		t.Errorf("unreachable database: %v", err)
	}

	_, err = open(t, h, "JdbcSinkConnector", nil, sinkConfig(srv, "connection.password", "wrong"))
	if err == nil || !strings.Contains(err.Error(), `rejected connection.user "test"`) ||
		!strings.Contains(err.Error(), "password authentication failed") {
		t.Errorf("wrong password: %v", err)
	}
}

// closedPort is a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestValidateChecksSettingsTogether: the plugins describe the Confluent settings (served by
// /validate) and reject combinations that cannot work, under the key to change.
func TestValidateChecksSettingsTogether(t *testing.T) {
	h := jdbcHost(t, "")
	ctx := context.Background()
	sink, err := h.Resolve("io.confluent.connect.jdbc.JdbcSinkConnector", wire.KindSink)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	for _, k := range sink.Config {
		keys[k.Name] = true
	}
	for _, k := range []string{"connection.url", "connection.user", "connection.password", "table.name.format", "insert.mode",
		"pk.mode", "pk.fields", "auto.create", "auto.evolve", "delete.enabled", "fields.whitelist", "batch.size", "max.retries", "retry.backoff.ms"} {
		if !keys[k] {
			t.Errorf("the sink's ConfigDef lacks %s", k)
		}
	}
	errs, err := h.Validate(ctx, sink, map[string]string{"connection.url": "postgres://db/x", "topics": "t",
		"delete.enabled": "true", "insert.mode": "upsert"})
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		"connection.url": "must be a PostgreSQL JDBC URL",
		"delete.enabled": "delete.enabled=true needs pk.mode=record_key",
		"pk.mode":        "insert.mode=upsert needs a primary key",
	} {
		if !strings.Contains(strings.Join(errs[key], "; "), want) {
			t.Errorf("%s: %q, want %q", key, errs[key], want)
		}
	}
	source, err := h.Resolve("io.confluent.connect.jdbc.JdbcSourceConnector", wire.KindSource)
	if err != nil {
		t.Fatal(err)
	}
	errs, err = h.Validate(ctx, source, map[string]string{"connection.url": "jdbc:postgresql://db/x", "topic.prefix": "p",
		"mode": "timestamp+incrementing"})
	if err != nil {
		t.Fatal(err)
	}
	if len(errs["incrementing.column.name"]) == 0 || len(errs["timestamp.column.name"]) == 0 {
		t.Errorf("timestamp+incrementing without columns: %v", errs)
	}
	errs, _ = h.Validate(ctx, source, map[string]string{"connection.url": "jdbc:postgresql://db/x", "topic.prefix": "p", "mode": "sometimes"})
	if len(errs["mode"]) == 0 {
		t.Errorf("mode=sometimes: %v", errs)
	}
}
