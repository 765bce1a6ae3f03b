//go:build e2e

package main

// End-to-end tests of the JDBC connectors (plugins/jdbc): broker, worker and PostgreSQL as separate
// processes, the connectors created over REST with the Confluent connectors' configs.

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/wasmconnect/wasmconnect/plugins/pgtest"
	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

// jdbcWorker starts a broker and a worker whose plugin path has the jdbc module and whose
// plugin.net.allow is grant.
func jdbcWorker(t *testing.T, grant string) (w *worker, brokerAddr string, props map[string]string) {
	t.Helper()
	jdbc, err := pluginbuild.Dir("plugins/jdbc")
	if err != nil {
		t.Fatal(err)
	}
	_, brokerAddr = startBroker(t)
	props = map[string]string{"plugin.path": pluginDir + "," + jdbc, "plugin.net.allow": grant}
	return startWorker(t, "worker", brokerAddr, props), brokerAddr, props
}

func jdbcConfig(srv *pgtest.Server, class string, kv ...string) map[string]string {
	cfg := map[string]string{"connector.class": class, "connection.url": srv.JDBCURL(),
		"connection.user": srv.User, "connection.password": srv.Password, "tasks.max": "1"}
	for i := 0; i+1 < len(kv); i += 2 {
		cfg[kv[i]] = kv[i+1]
	}
	return cfg
}

const jdbcSink = "io.confluent.connect.jdbc.JdbcSinkConnector"

// count is SELECT count(*) of a table; -1 while it does not exist.
func count(t *testing.T, c *pgx.Conn, table string) int {
	t.Helper()
	var n int
	if err := c.QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		return -1
	}
	return n
}

// datagenOrders runs the datagen orders quickstart into topic orders and waits for its n records.
func datagenOrders(t *testing.T, w *worker, addr string, n int) []*kgo.Record {
	t.Helper()
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "datagen", "config": map[string]string{
		"connector.class": "io.confluent.kafka.connect.datagen.DatagenConnector",
		"kafka.topic":     "orders", "quickstart": "orders", "max.interval": "0", "iterations": fmt.Sprint(n),
		"random.seed": "7", "tasks.max": "1",
	}})
	recs := consumeN(t, addr, "orders", n, 2*time.Minute)
	if len(recs) != n {
		t.Fatalf("datagen wrote %d orders, want %d", len(recs), n)
	}
	return recs
}

// ordersSink is the JDBC sink of the datagen orders: upserts keyed by the record key (orderid),
// the nested address flattened into address_city, address_state, address_zipcode columns.
func ordersSink(srv *pgtest.Server) map[string]string {
	return jdbcConfig(srv, jdbcSink, "topics", "orders", "auto.create", "true", "insert.mode", "upsert",
		"pk.mode", "record_key", "pk.fields", "orderid",
		"transforms", "flatten", "transforms.flatten.type", "org.apache.kafka.connect.transforms.Flatten$Value",
		"transforms.flatten.delimiter", "_")
}

// TestJDBCSinkWritesDatagenOrders: 100,000 datagen orders go through the JDBC sink into PostgreSQL:
// the table has 100,000 rows whose columns hold the records' fields. The sink's rate is measured
// next to psql \copy of the same rows into the same server.
func TestJDBCSinkWritesDatagenOrders(t *testing.T) {
	const n = 100_000
	srv := pgtest.Start(t, pgtest.Options{})
	w, addr, _ := jdbcWorker(t, srv.Addr())
	recs := datagenOrders(t, w, addr, n)
	// The rate may include the jdbc module's first compile: a module described from the shared
	// compile cache compiles (from that cache) on first use, so waiting for the log line would not
	// keep it out.

	start := time.Now()
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "orders-sink", "config": ordersSink(srv)})
	c := srv.Connect(t)
	var first time.Time // when the first rows were in: the rate from then on is the steady one
	firstRows := 0
	waitFor(t, 2*time.Minute, "100,000 rows in orders", func() bool {
		m := count(t, c, "orders")
		if m > 0 && first.IsZero() {
			first, firstRows = time.Now(), m
		}
		return m == n
	})
	took, steady := time.Since(start), time.Since(first)

	type order struct {
		OrderTime  int64   `json:"ordertime"`
		OrderID    int32   `json:"orderid"`
		ItemID     string  `json:"itemid"`
		OrderUnits float64 `json:"orderunits"`
		Address    struct {
			City, State string
			Zipcode     int64
		} `json:"address"`
	}
	want := make(map[int32]order, n)
	for _, r := range recs {
		var v struct{ Payload order }
		if err := json.Unmarshal(r.Value, &v); err != nil {
			t.Fatal(err)
		}
		want[v.Payload.OrderID] = v.Payload
	}
	rows, err := c.Query(context.Background(), `SELECT ordertime, orderid, itemid, orderunits, address_city, address_state, address_zipcode FROM orders`)
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for rows.Next() {
		var o order
		if err := rows.Scan(&o.OrderTime, &o.OrderID, &o.ItemID, &o.OrderUnits, &o.Address.City, &o.Address.State, &o.Address.Zipcode); err != nil {
			t.Fatal(err)
		}
		if o != want[o.OrderID] {
			t.Fatalf("row %+v, record %+v", o, want[o.OrderID])
		}
		got++
	}
	if rows.Err() != nil || got != n {
		t.Fatalf("%d rows match (%v), want %d", got, rows.Err(), n)
	}

	// The same rows through psql's \copy into a table like it, in the same server.
	file := filepath.Join(t.TempDir(), "orders.tsv")
	if out, err := srv.Psql("-c", `\copy orders TO '`+file+`'`, "-c", "CREATE TABLE orders_copy (LIKE orders INCLUDING ALL)").CombinedOutput(); err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
	copyStart := time.Now()
	if out, err := srv.Psql("-c", `\copy orders_copy FROM '`+file+`'`).CombinedOutput(); err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
	copyTook := time.Since(copyStart)
	if m := count(t, c, "orders_copy"); m != n {
		t.Fatalf("orders_copy has %d rows", m)
	}
	t.Logf("JDBC sink (upsert, from sink creation to the last row): %d rows in %s = %.0f rows/s (from the first rows on: %.0f rows/s); psql \\copy: %s = %.0f rows/s (sink/copy %.2f)",
		n, took.Round(time.Millisecond), float64(n)/took.Seconds(), float64(n-firstRows)/steady.Seconds(),
		copyTook.Round(time.Millisecond), float64(n)/copyTook.Seconds(), copyTook.Seconds()/took.Seconds())
}

// TestJDBCSinkUpsertSurvivesKill9: the worker is killed with SIGKILL while the sink upserts the
// orders; after a restart the records it had written but not committed come again, which upsert
// makes harmless: exactly 100,000 rows.
func TestJDBCSinkUpsertSurvivesKill9(t *testing.T) {
	const n = 100_000
	srv := pgtest.Start(t, pgtest.Options{})
	w, addr, props := jdbcWorker(t, srv.Addr())
	datagenOrders(t, w, addr, n)
	// Commits seldom, so that the kill comes between a write and its commit.
	cfg := ordersSink(srv)
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "orders-sink", "config": cfg})
	c := srv.Connect(t)
	waitFor(t, time.Minute, "the sink to be under way", func() bool { return count(t, c, "orders") >= n/4 })
	w.stop(syscall.SIGKILL)
	before := count(t, c, "orders")
	if before >= n {
		t.Fatalf("the sink finished (%d rows) before the kill; the test needs it mid-stream", before)
	}
	w2 := startWorker(t, "worker-2", addr, props)
	waitFor(t, 2*time.Minute, "100,000 rows after the restart", func() bool { return count(t, c, "orders") == n })
	time.Sleep(2 * time.Second) // redelivered batches still to come must not add rows
	if m := count(t, c, "orders"); m != n {
		t.Fatalf("%d rows, want %d", m, n)
	}
	var distinct int
	if err := c.QueryRow(context.Background(), "SELECT count(DISTINCT orderid) FROM orders").Scan(&distinct); err != nil || distinct != n {
		t.Fatalf("%d distinct orderids (%v)", distinct, err)
	}
	if s := w2.mustStatus(t, "orders-sink"); s.Tasks[0].State != "RUNNING" {
		t.Fatalf("sink after the restart: %+v", s)
	}
	t.Logf("killed at %d rows", before)
}

// produceJSON writes JsonConverter envelopes (schema and payload) to topic.
func produceJSON(t *testing.T, addr, topic, schema string, payloads ...string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for _, p := range payloads {
		v := p
		if schema != "" {
			v = `{"schema":` + schema + `,"payload":` + p + `}`
		}
		recs = append(recs, &kgo.Record{Topic: topic, Value: []byte(v)})
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// TestJDBCSinkAutoEvolveAddsAColumn: records of a schema with a new optional field add a column
// (auto.evolve), and both generations of records land.
func TestJDBCSinkAutoEvolveAddsAColumn(t *testing.T) {
	srv := pgtest.Start(t, pgtest.Options{})
	w, addr, _ := jdbcWorker(t, srv.Addr())
	v1 := `{"type":"struct","name":"person","fields":[{"field":"id","type":"int64"},{"field":"name","type":"string"}]}`
	v2 := `{"type":"struct","name":"person","fields":[{"field":"id","type":"int64"},{"field":"name","type":"string"},{"field":"email","type":"string","optional":true}]}`
	produceJSON(t, addr, "people", v1, `{"id":1,"name":"ann"}`, `{"id":2,"name":"bob"}`)
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "people-sink", "config": jdbcConfig(srv, jdbcSink,
		"topics", "people", "auto.create", "true", "auto.evolve", "true", "pk.mode", "record_value", "pk.fields", "id", "insert.mode", "upsert")})
	c := srv.Connect(t)
	waitFor(t, time.Minute, "the first two people", func() bool { return count(t, c, "people") == 2 })
	produceJSON(t, addr, "people", v2, `{"id":3,"name":"cy","email":"cy@example.com"}`, `{"id":1,"name":"ann","email":"ann@example.com"}`)
	waitFor(t, time.Minute, "the third person", func() bool { return count(t, c, "people") == 3 })
	var got string
	waitFor(t, 30*time.Second, "ann's email", func() bool {
		c.QueryRow(context.Background(), `SELECT string_agg(id || ':' || name || ':' || coalesce(email, '-'), ',' ORDER BY id) FROM people`).Scan(&got)
		return got == "1:ann:ann@example.com,2:bob:-,3:cy:cy@example.com"
	})
}

// TestJDBCBadInputIsAClearError: an unreachable database, a wrong password, a table without a
// column for a field (auto.evolve=false) and a record without a schema each fail the task with
// a trace that names the cause and the setting; the worker and its other tasks go on.
func TestJDBCBadInputIsAClearError(t *testing.T) {
	srv := pgtest.Start(t, pgtest.Options{})
	srv.Exec(t, `CREATE TABLE narrow (id bigint PRIMARY KEY)`)
	w, addr, _ := jdbcWorker(t, "127.0.0.1:*")
	schema := `{"type":"struct","fields":[{"field":"id","type":"int64"},{"field":"name","type":"string","optional":true}]}`
	produceJSON(t, addr, "narrow", schema, `{"id":1,"name":"x"}`)
	produceJSON(t, addr, "plain", "", `{"id":1,"name":"x"}`)

	closed := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cases := map[string]struct {
		cfg   map[string]string
		trace string
	}{
		"unreachable": {jdbcConfig(srv, jdbcSink, "topics", "narrow", "connection.url", "jdbc:postgresql://"+closed+"/test",
			"connection.attempts", "1"), "cannot connect to PostgreSQL at " + closed},
		"password": {jdbcConfig(srv, jdbcSink, "topics", "narrow", "connection.password", "wrong"),
			`rejected connection.user "test"`},
		"mismatch": {jdbcConfig(srv, jdbcSink, "topics", "narrow"),
			`table "narrow" has no column for the fields name of the records, and auto.evolve is false`},
		"schemaless": {jdbcConfig(srv, jdbcSink, "topics", "plain", "auto.create", "true",
			"value.converter", "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable", "false"),
			`has a value without a schema, but the JDBC sink needs Struct values with a schema`},
	}
	for name, c := range cases {
		w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": name, "config": c.cfg})
	}
	for name, c := range cases {
		s := w.waitTaskState(t, name, "FAILED", time.Minute)
		if !strings.Contains(s.Tasks[0].Trace, c.trace) {
			t.Errorf("%s: trace lacks %q:\n%s", name, c.trace, s.Tasks[0].Trace)
		}
	}
	if code, _ := w.call(t, "GET", "/health", nil); code != 200 {
		t.Errorf("worker health %d after the failed tasks", code)
	}
}
