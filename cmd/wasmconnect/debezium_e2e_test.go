//go:build e2e

package main

// End-to-end tests of the Debezium PostgreSQL connector (plugins/debezium): broker, worker and a
// PostgreSQL with wal_level=logical as separate processes; the events are read with kcat, as a
// Debezium user's consumer would read them.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/wasmconnect/wasmconnect/plugins/pgtest"
	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

const debeziumClass = "io.debezium.connector.postgresql.PostgresConnector"

var logicalWAL = pgtest.Options{Settings: map[string]string{"wal_level": "logical", "max_wal_senders": "10", "max_replication_slots": "10"}}

// debeziumPlugins is a plugin.path with the debezium module, the jdbc module and the worker's own.
func debeziumPlugins(t testing.TB) string {
	t.Helper()
	dir, err := pluginbuild.Dir("plugins/debezium", "plugins/jdbc")
	if err != nil {
		t.Fatal(err)
	}
	return pluginDir + "," + dir
}

func debeziumConfig(srv *pgtest.Server, kv ...string) map[string]string {
	cfg := map[string]string{"connector.class": debeziumClass, "database.hostname": srv.Host,
		"database.port": fmt.Sprint(srv.Port), "database.user": srv.User, "database.password": srv.Password,
		"database.dbname": srv.Database, "database.sslmode": "disable", "topic.prefix": "dbserver1", "tasks.max": "1"}
	for i := 0; i+1 < len(kv); i += 2 {
		cfg[kv[i]] = kv[i+1]
	}
	return cfg
}

// cdcEvent is one record of a Debezium topic as kcat -J shows it, its value decoded.
type cdcEvent struct {
	key       string
	tombstone bool
	op        string
	before    map[string]any
	after     map[string]any
	source    map[string]any
	schema    string // the value schema's name
}

// kcatEvents reads a topic from the start with kcat until it has n records or the timeout passes;
// the test fails at once when connector's task fails.
func kcatEvents(t *testing.T, w *worker, connector, kcat, addr, topic string, n int, timeout time.Duration) []cdcEvent {
	t.Helper()
	var evs []cdcEvent
	deadline := time.Now().Add(timeout)
	for {
		out, err := exec.Command(kcat, "-C", "-b", addr, "-t", topic, "-o", "beginning", "-e", "-q", "-J").Output()
		evs = evs[:0]
		if err == nil {
			sc := bufio.NewScanner(bytes.NewReader(out))
			sc.Buffer(make([]byte, 1<<20), 1<<24)
			for sc.Scan() {
				var m struct {
					Key     *string `json:"key"`
					Payload *string `json:"payload"`
				}
				if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
					t.Fatalf("kcat line %q: %v", sc.Text(), err)
				}
				ev := cdcEvent{tombstone: m.Payload == nil}
				if m.Key != nil {
					var k struct{ Payload json.RawMessage }
					json.Unmarshal([]byte(*m.Key), &k)
					ev.key = string(k.Payload)
				}
				if m.Payload != nil {
					var v struct {
						Schema  struct{ Name string }
						Payload struct {
							Op            string
							Before, After map[string]any
							Source        map[string]any
						}
					}
					if err := json.Unmarshal([]byte(*m.Payload), &v); err != nil {
						t.Fatalf("value %q: %v", *m.Payload, err)
					}
					ev.op, ev.before, ev.after, ev.source, ev.schema = v.Payload.Op, v.Payload.Before, v.Payload.After, v.Payload.Source, v.Schema.Name
				}
				evs = append(evs, ev)
			}
		}
		if len(evs) >= n || time.Now().After(deadline) {
			return evs
		}
		failIfTaskFailed(t, w, connector)
		time.Sleep(500 * time.Millisecond)
	}
}

func failIfTaskFailed(t *testing.T, w *worker, connector string) {
	t.Helper()
	if st, ok := w.status(t, connector); ok && len(st.Tasks) > 0 && st.Tasks[0].State == "FAILED" {
		t.Fatalf("task of %s failed: %s", connector, st.Tasks[0].Trace)
	}
}

// storedLSNCommit is lsn_commit of the connector's stored offset (GET /connectors/x/offsets).
func storedLSNCommit(t *testing.T, w *worker, connector string) int64 {
	t.Helper()
	var res struct {
		Offsets []struct {
			Partition map[string]any
			Offset    map[string]json.Number
		}
	}
	if err := json.Unmarshal(w.mustCall(t, 200, "GET", "/connectors/"+connector+"/offsets", nil), &res); err != nil {
		t.Fatal(err)
	}
	for _, o := range res.Offsets {
		if o.Partition["server"] == "dbserver1" {
			n, _ := o.Offset["lsn_commit"].Int64()
			return n
		}
	}
	return 0
}

// slotConfirmed is the slot's confirmed_flush_lsn as a number.
func slotConfirmed(t *testing.T, c *pgx.Conn, slot string) int64 {
	t.Helper()
	var n int64
	if err := c.QueryRow(context.Background(), "SELECT (confirmed_flush_lsn - '0/0')::int8 FROM pg_replication_slots WHERE slot_name = $1", slot).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func kcatPath(t *testing.T) string {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		pluginbuild.Missing(t, "kcat", "apt-get install kcat")
	}
	return kcat
}

// customers creates public.customers with rows 1..n.
func customers(t *testing.T, srv *pgtest.Server, n int) {
	srv.Exec(t, fmt.Sprintf(`CREATE TABLE customers (id int PRIMARY KEY, name text NOT NULL, balance numeric(12,2), seen timestamp);
		INSERT INTO customers SELECT i, 'c' || i, i * 1.5, timestamp '2024-01-01' + i * interval '1 second' FROM generate_series(1, %d) i`, n))
}

// churn runs the changes of the test while the connector runs, in transactions of 100
// rows: inserts of from+1..from+inserts, updates of 1..updates, deletes of the next deletes rows.
func churn(ctx context.Context, c *pgx.Conn, from, inserts, updates, deletes int) error {
	for i := 0; i*100 < max(inserts, updates, deletes); i++ {
		var sql []string
		if i*100 < inserts {
			lo := from + i*100 + 1
			sql = append(sql, fmt.Sprintf(`INSERT INTO customers SELECT i, 'n' || i, i, now()::timestamp FROM generate_series(%d, %d) i`, lo, lo+99))
		}
		if i*100 < updates {
			sql = append(sql, fmt.Sprintf(`UPDATE customers SET name = 'u' || id, balance = balance + 1 WHERE id BETWEEN %d AND %d`, i*100+1, i*100+100))
		}
		if i*100 < deletes {
			lo := updates + i*100 + 1
			sql = append(sql, fmt.Sprintf(`DELETE FROM customers WHERE id BETWEEN %d AND %d`, lo, lo+99))
		}
		if _, err := c.Exec(ctx, "BEGIN; "+strings.Join(sql, "; ")+"; COMMIT", pgx.QueryExecModeSimpleProtocol); err != nil {
			return err
		}
	}
	return nil
}

// tableState is the rows of customers as id -> "name|balance".
func tableState(t *testing.T, c *pgx.Conn) map[string]string {
	t.Helper()
	rows, err := c.Query(context.Background(), `SELECT id, name, balance::text FROM customers`)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for rows.Next() {
		var id int
		var name, balance string
		if err := rows.Scan(&id, &name, &balance); err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprint(id)] = name + "|" + balance
	}
	return out
}

// replay folds the events into the table they describe, in topic order (one partition), and
// counts them by op ("tombstone" for the tombstones).
func replay(t *testing.T, evs []cdcEvent) (rows map[string]string, ops map[string]int) {
	t.Helper()
	rows, ops = map[string]string{}, map[string]int{}
	for _, ev := range evs {
		var k struct{ ID json.Number }
		json.Unmarshal([]byte(ev.key), &k)
		id := k.ID.String()
		if ev.tombstone {
			ops["tombstone"]++
			continue
		}
		ops[ev.op]++
		switch ev.op {
		case "r", "c", "u":
			rows[id] = fmt.Sprintf("%v|%s", ev.after["name"], decodeDecimal(t, ev.after["balance"], 2))
		case "d":
			delete(rows, id)
		}
	}
	return rows, ops
}

// decodeDecimal turns a Connect Decimal (base64 of the unscaled two's complement) into text.
func decodeDecimal(t *testing.T, v any, scale int) string {
	s, _ := v.(string)
	var raw []byte
	if err := json.Unmarshal([]byte(`"`+s+`"`), &raw); err != nil {
		t.Fatalf("decimal %q: %v", s, err)
	}
	var n int64
	for i, b := range raw {
		if i == 0 && b&0x80 != 0 {
			n = -1
		}
		n = n<<8 | int64(b)
	}
	neg := n < 0
	if neg {
		n = -n
	}
	p := 1
	for range scale {
		p *= 10
	}
	txt := fmt.Sprintf("%d.%0*d", n/int64(p), scale, n%int64(p))
	if neg {
		txt = "-" + txt
	}
	return txt
}

// TestDebeziumSnapshotThenStreaming is the test: a table with 10,000 rows; the snapshot
// emits 10,000 r events; 5,000 inserts, 2,000 updates and 1,000 deletes made while the connector
// runs arrive as c, u, d and tombstones; kcat reads them, and folded by key they equal the table.
// waitForSlot waits until the connector's task has created the replication slot "debezium", and
// fails the test if the task fails first.
func waitForSlot(t *testing.T, c *pgx.Conn, w *worker, connector string) {
	t.Helper()
	waitFor(t, time.Minute, "the replication slot", func() bool {
		var n int
		c.QueryRow(context.Background(), "SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'debezium'").Scan(&n)
		failIfTaskFailed(t, w, connector)
		return n == 1
	})
}

func TestDebeziumSnapshotThenStreaming(t *testing.T) {
	kcat := kcatPath(t)
	srv := pgtest.Start(t, logicalWAL)
	customers(t, srv, 10_000)
	_, addr := startBroker(t)
	w := startWorker(t, "worker", addr, map[string]string{"plugin.path": debeziumPlugins(t), "plugin.net.allow": srv.Addr()})
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "inventory", "config": debeziumConfig(srv, "table.include.list", "public.customers")})

	c := srv.Connect(t)
	// The changes start once the slot exists, so that all of them come after the snapshot.
	waitForSlot(t, c, w, "inventory")
	if err := churn(context.Background(), c, 10_000, 5_000, 2_000, 1_000); err != nil {
		t.Fatal(err)
	}
	const total = 10_000 + 5_000 + 2_000 + 1_000 + 1_000
	evs := kcatEvents(t, w, "inventory", kcat, addr, "dbserver1.public.customers", total, 2*time.Minute)
	rows, ops := replay(t, evs)
	if want := map[string]int{"r": 10_000, "c": 5_000, "u": 2_000, "d": 1_000, "tombstone": 1_000}; fmt.Sprint(ops) != fmt.Sprint(want) {
		st, _ := w.status(t, "inventory")
		t.Fatalf("events by op %v, want %v (task %+v)", ops, want, st.Tasks)
	}
	want := tableState(t, c)
	if len(rows) != len(want) {
		t.Fatalf("the events describe %d rows, the table has %d", len(rows), len(want))
	}
	for id, v := range want {
		if rows[id] != v {
			t.Fatalf("row %s: events say %q, table has %q", id, rows[id], v)
		}
	}
	// The slot is confirmed up to the stored offset, and not beyond it.
	waitFor(t, 30*time.Second, "the slot confirmed at the stored offset", func() bool {
		stored := storedLSNCommit(t, w, "inventory")
		confirmed := slotConfirmed(t, c, "debezium")
		if confirmed > stored {
			t.Fatalf("slot confirmed at %d, beyond the stored offset's lsn_commit %d", confirmed, stored)
		}
		return stored > 0 && confirmed == stored
	})
	// Debezium's envelope: the schema's name, the source block, the snapshot markers.
	first := evs[0]
	if first.schema != "dbserver1.public.customers.Envelope" || first.op != "r" || first.source["snapshot"] != "first" ||
		first.source["connector"] != "postgresql" || first.source["db"] != "test" || first.source["table"] != "customers" {
		t.Fatalf("first event: %+v", first)
	}
	if evs[9_999].source["snapshot"] != "last" || evs[10_000].source["snapshot"] != "false" {
		t.Fatalf("snapshot markers at the seam: %v, %v", evs[9_999].source["snapshot"], evs[10_000].source["snapshot"])
	}
	for i, ev := range evs {
		if ev.op == "d" && (i+1 == len(evs) || !evs[i+1].tombstone || evs[i+1].key != ev.key) {
			t.Fatalf("delete %s at %d is not followed by its tombstone", ev.key, i)
		}
	}
}

// TestDebeziumRefusesWhatCannotWork: the task fails with a trace naming the cause and the fix for a
// server without wal_level=logical, a user without REPLICATION, a table without a primary key under
// REPLICA IDENTITY DEFAULT, and a slot another connector streams from. The connector that streams
// has heartbeats: while only a table it does not capture changes, its slot still advances.
func TestDebeziumRefusesWhatCannotWork(t *testing.T) {
	srv := pgtest.Start(t, logicalWAL)
	replica := pgtest.Start(t, pgtest.Options{Settings: map[string]string{"wal_level": "replica"}})
	customers(t, srv, 10)
	srv.Exec(t, `CREATE TABLE nopk (a int); CREATE ROLE plain LOGIN PASSWORD 'plain'; GRANT SELECT ON ALL TABLES IN SCHEMA public TO plain;
		GRANT CREATE ON DATABASE test TO plain`)
	_, addr := startBroker(t)
	w := startWorker(t, "worker", addr, map[string]string{"plugin.path": debeziumPlugins(t), "plugin.net.allow": srv.Addr() + "," + replica.Addr()})

	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "streams", "config": debeziumConfig(srv, "table.include.list", "public.customers",
		"heartbeat.interval.ms", "200")})
	w.waitTaskState(t, "streams", "RUNNING", time.Minute)
	c := srv.Connect(t)
	waitFor(t, time.Minute, "the first connector streaming from its slot", func() bool {
		var active bool
		c.QueryRow(context.Background(), "SELECT active FROM pg_replication_slots WHERE slot_name = 'debezium'").Scan(&active)
		return active
	})
	for _, tc := range []struct {
		name string
		cfg  map[string]string
		want string
	}{
		{"walreplica", debeziumConfig(replica, "slot.name", "s1"), "has wal_level=replica; change data capture needs wal_level=logical"},
		{"norepl", debeziumConfig(srv, "slot.name", "s2", "database.user", "plain", "database.password", "plain", "table.include.list", "public.customers",
			"publication.autocreate.mode", "disabled"), `database.user "plain" has no replication permission`},
		{"nopk", debeziumConfig(srv, "slot.name", "s3", "table.include.list", "public.nopk"), "public.nopk have no primary key and REPLICA IDENTITY DEFAULT"},
		{"sameslot", debeziumConfig(srv, "topic.prefix", "other", "table.include.list", "public.customers"), `slot.name "debezium"`},
	} {
		w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": tc.name, "config": tc.cfg})
		st := w.waitTaskState(t, tc.name, "FAILED", time.Minute)
		if !strings.Contains(st.Tasks[0].Trace, tc.want) {
			t.Errorf("%s: trace %q does not say %q", tc.name, st.Tasks[0].Trace, tc.want)
		}
		if tc.name == "sameslot" && !strings.Contains(st.Tasks[0].Trace, "is in use by another process") {
			t.Errorf("%s: trace %q does not say the slot is in use", tc.name, st.Tasks[0].Trace)
		}
	}
	if st := w.mustStatus(t, "streams"); st.Tasks[0].State != "RUNNING" {
		t.Fatalf("the first connector's task is %s: %s", st.Tasks[0].State, st.Tasks[0].Trace)
	}

	// Heartbeats: changes of a table that is not captured move the slot.
	var before int64
	if err := c.QueryRow(context.Background(), "SELECT (pg_current_wal_lsn() - '0/0')::int8").Scan(&before); err != nil {
		t.Fatal(err)
	}
	srv.Exec(t, "INSERT INTO nopk SELECT generate_series(1, 100)")
	waitFor(t, 30*time.Second, "the slot to move past the idle table's changes", func() bool {
		failIfTaskFailed(t, w, "streams")
		return slotConfirmed(t, c, "debezium") > before
	})
	beats := consumeN(t, addr, "__debezium-heartbeat.dbserver1", 1, 30*time.Second)
	if len(beats) == 0 || !strings.Contains(string(beats[0].Key), `"serverName":"dbserver1"`) || !strings.Contains(string(beats[0].Value), `"ts_ms":`) {
		t.Fatalf("heartbeat records: %v", beats)
	}
}

// TestDebeziumHeartbeatsWhileIdle: with heartbeat.interval.ms set, the connector writes a heartbeat
// to __debezium-heartbeat.<topic.prefix> every interval once it streams, as Debezium does, also
// while the database writes nothing at all: a consumer of the heartbeat topic (kcat, a monitor)
// finds the topic and sees the connector alive.
func TestDebeziumHeartbeatsWhileIdle(t *testing.T) {
	srv := pgtest.Start(t, logicalWAL)
	customers(t, srv, 3)
	_, addr := startBroker(t)
	w := startWorker(t, "worker", addr, map[string]string{"plugin.path": debeziumPlugins(t), "plugin.net.allow": srv.Addr()})
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "idle", "config": debeziumConfig(srv, "table.include.list", "public.customers",
		"heartbeat.interval.ms", "200")})
	w.waitTaskState(t, "idle", "RUNNING", time.Minute)
	if evs := consumeN(t, addr, "dbserver1.public.customers", 3, 30*time.Second); len(evs) < 3 {
		t.Fatalf("%d snapshot events, want 3", len(evs))
	}
	beats := consumeN(t, addr, "__debezium-heartbeat.dbserver1", 3, 30*time.Second)
	failIfTaskFailed(t, w, "idle")
	if len(beats) < 3 {
		t.Fatalf("%d heartbeat records on __debezium-heartbeat.dbserver1 in 30 s of an idle database, want one every 200 ms", len(beats))
	}
	for _, b := range beats {
		if !strings.Contains(string(b.Key), `"serverName":"dbserver1"`) || !strings.Contains(string(b.Value), `"ts_ms":`) {
			t.Fatalf("heartbeat record %s -> %s, want Debezium's ServerNameKey and Heartbeat", b.Key, b.Value)
		}
	}
}

// TestDebeziumHostOutsideNetGrant: database.hostname is a name that resolves (on the worker, where
// the network grant is checked: the plugin passes names through to the host's dial) to an address
// plugin.net.allow does not cover. The task fails with a trace naming the name, the address it
// resolved to and the grant, and nothing is connected.
func TestDebeziumHostOutsideNetGrant(t *testing.T) {
	srv := pgtest.Start(t, logicalWAL)
	customers(t, srv, 1)
	_, addr := startBroker(t)
	grant := fmt.Sprintf("192.0.2.10:%d", srv.Port) // where the operator believes the database is
	w := startWorker(t, "worker", addr, map[string]string{"plugin.path": debeziumPlugins(t), "plugin.net.allow": grant})
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "elsewhere", "config": debeziumConfig(srv,
		"database.hostname", "localhost", "table.include.list", "public.customers")})
	st := w.waitTaskState(t, "elsewhere", "FAILED", time.Minute)
	for _, want := range []string{
		fmt.Sprintf("plugin.net.allow does not grant localhost:%d", srv.Port),
		"which resolves to 127.0.0.1",
		"(granted: " + grant + ")",
	} {
		if !strings.Contains(st.Tasks[0].Trace, want) {
			t.Errorf("trace does not say %q:\n%s", want, st.Tasks[0].Trace)
		}
	}
	c := srv.Connect(t)
	var slots int
	if err := c.QueryRow(context.Background(), "SELECT count(*) FROM pg_replication_slots").Scan(&slots); err != nil {
		t.Fatal(err)
	}
	if slots != 0 {
		t.Fatalf("%d replication slots: the refused connector reached the database", slots)
	}
}

// TestDebeziumSurvivesKill9OfItsWorker: in a 3-worker cluster, the worker that runs the task is
// killed -9 while changes keep coming; the task resumes on another worker from the stored offset
// and the slot, and no change is lost: the events, folded by key, equal the table. The duplicates
// (events of transactions after the last stored offset, delivered again) are counted and logged.
func TestDebeziumSurvivesKill9OfItsWorker(t *testing.T) {
	kcat := kcatPath(t)
	srv := pgtest.Start(t, logicalWAL)
	customers(t, srv, 1000)
	_, addr := startBroker(t)
	props := map[string]string{"plugin.path": debeziumPlugins(t), "plugin.net.allow": srv.Addr(),
		"session.timeout.ms": "6000", "heartbeat.interval.ms": "2000", "scheduled.rebalance.max.delay.ms": "1000"}
	var ws []*worker
	for i := 1; i <= 3; i++ {
		ws = append(ws, startWorkerNoWait(t, fmt.Sprintf("worker%d", i), addr, props))
	}
	for _, w := range ws {
		w.waitReady(t)
	}
	ws[0].mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "inventory", "config": debeziumConfig(srv, "table.include.list", "public.customers")})
	st := ws[0].waitTaskState(t, "inventory", "RUNNING", time.Minute)
	c := srv.Connect(t)
	waitFor(t, time.Minute, "the slot streaming", func() bool {
		var active bool
		c.QueryRow(context.Background(), "SELECT active FROM pg_replication_slots WHERE slot_name = 'debezium'").Scan(&active)
		return active
	})

	// Changes keep coming: every 20 ms a transaction inserts 20 rows and updates 20 others.
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		cc, err := pgx.Connect(context.Background(), srv.DSN())
		if err != nil {
			done <- err
			return
		}
		defer cc.Close(context.Background())
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			lo := 1000 + i*20 + 1
			_, err := cc.Exec(context.Background(), fmt.Sprintf(`BEGIN; INSERT INTO customers SELECT i, 'n' || i, i, now()::timestamp FROM generate_series(%d, %d) i;
				UPDATE customers SET name = 'u%d-' || id WHERE id BETWEEN %d AND %d; COMMIT`, lo, lo+19, i, (i*20)%1000+1, (i*20)%1000+20), pgx.QueryExecModeSimpleProtocol)
			if err != nil {
				done <- err
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	// Kill once an offset of the stream was stored, so that the kill interrupts a task that streams.
	waitFor(t, time.Minute, "a stored streaming offset", func() bool { return storedLSNCommit(t, ws[0], "inventory") > 0 })
	time.Sleep(500 * time.Millisecond)
	var victim *worker
	for _, w := range ws {
		if workerID(w) == st.Tasks[0].WorkerID {
			victim = w
		}
	}
	if victim == nil {
		t.Fatalf("no worker is %s", st.Tasks[0].WorkerID)
	}
	victim.stop(syscall.SIGKILL)
	var survivor *worker
	for _, w := range ws {
		if w != victim {
			survivor = w
			break
		}
	}
	waitFor(t, time.Minute, "the task running on another worker", func() bool {
		s, ok := survivor.status(t, "inventory")
		return ok && len(s.Tasks) > 0 && s.Tasks[0].State == "RUNNING" && s.Tasks[0].WorkerID != st.Tasks[0].WorkerID
	})
	time.Sleep(time.Second)
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	want := tableState(t, c)
	var evs []cdcEvent
	var rows map[string]string
	waitFor(t, time.Minute, "the events to describe the table", func() bool {
		evs = kcatEvents(t, survivor, "inventory", kcat, addr, "dbserver1.public.customers", 0, 0)
		rows, _ = replay(t, evs)
		if len(rows) != len(want) {
			return false
		}
		for id, v := range want {
			if rows[id] != v {
				return false
			}
		}
		return true
	})
	seen := map[string]bool{}
	dups := 0
	for _, ev := range evs {
		if ev.tombstone || ev.op == "r" {
			continue
		}
		id := fmt.Sprint(ev.key, ev.op, ev.source["lsn"])
		if seen[id] {
			dups++
		}
		seen[id] = true
	}
	t.Logf("killed %s -9 mid-stream; the task resumed on %s; %d change events, %d of them duplicates (delivered again after the last stored offset)",
		victim.name, survivor.name, len(seen)+dups, dups)
}
