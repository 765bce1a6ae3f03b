//go:build !wasip1

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/plugins/pgtest"
	"github.com/wasmconnect/wasmconnect/sdk/go/connect"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
	"github.com/wasmconnect/wasmconnect/wasmhost"
)

func sourceConfig(srv *pgtest.Server, extra ...string) map[string]string {
	cfg := map[string]string{"connection.url": srv.JDBCURL(), "connection.user": srv.User, "connection.password": srv.Password,
		"topic.prefix": "pg-", "poll.interval.ms": "20"}
	for i := 0; i+1 < len(extra); i += 2 {
		cfg[extra[i]] = extra[i+1]
	}
	return cfg
}

// taskConfigs asks the source connector for its task configs.
func taskConfigs(t *testing.T, h *wasmhost.Host, cfg map[string]string, max int) []map[string]string {
	t.Helper()
	p, err := h.Resolve("JdbcSourceConnector", wire.KindSource)
	if err != nil {
		t.Fatal(err)
	}
	s := h.NewSession(wasmhost.Env{Connector: "jdbc-test"})
	defer s.Close(context.Background())
	c, err := s.Open(context.Background(), p, wire.RoleConnector, cfg)
	if err != nil {
		t.Fatal(err)
	}
	tcs, err := c.TaskConfigs(context.Background(), max)
	if err != nil {
		t.Fatal(err)
	}
	return tcs
}

// pollN polls until n records came (or fails after a while), and returns them.
func pollN(t *testing.T, task *wasmhost.Object, n int) []wire.Record {
	t.Helper()
	var got []wire.Record
	deadline := time.Now().Add(20 * time.Second)
	for len(got) < n {
		if time.Now().After(deadline) {
			t.Fatalf("polled %d records, want %d: %v", len(got), n, ids(t, got))
		}
		recs, err := task.Poll(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, recs...)
		if len(recs) == 0 {
			time.Sleep(10 * time.Millisecond)
		}
	}
	// Nothing more comes within two poll intervals.
	time.Sleep(60 * time.Millisecond)
	for range 3 {
		recs, err := task.Poll(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, recs...)
	}
	if len(got) != n {
		t.Fatalf("polled %d records, want %d: %v", len(got), n, ids(t, got))
	}
	return got
}

// ids lists "id:name" of records of the events table.
func ids(t *testing.T, recs []wire.Record) []string {
	t.Helper()
	var out []string
	for _, r := range recs {
		_, v, err := connect.Decode(r.Value)
		if err != nil {
			t.Fatal(err)
		}
		st := v.(*connect.Struct)
		id, _ := st.Get("id")
		name, _ := st.Get("name")
		out = append(out, fmt.Sprintf("%v:%v", id, name))
	}
	return out
}

// TestSourceTimestampIncrementing: in timestamp+incrementing mode, rows inserted and updated while
// the task runs arrive in the order of their timestamp and id; the partition and offset are the
// Confluent connector's; a task started from the stored offset reads only what came after it.
func TestSourceTimestampIncrementing(t *testing.T) {
	srv := pgtest.Start(t, pgtest.Options{})
	srv.Exec(t, `CREATE TABLE events (id serial PRIMARY KEY, name text, amount numeric(10,2), day date,
		updated_at timestamp(6) NOT NULL DEFAULT clock_timestamp());
		CREATE TABLE other (id int PRIMARY KEY); CREATE TABLE skipped (id int PRIMARY KEY);
		INSERT INTO events (name, amount, day) SELECT 'e' || i, i * 1.25, DATE '2024-02-28' + i FROM generate_series(1, 5) i`)
	h := jdbcHost(t, srv.Addr())
	cfg := sourceConfig(srv, "mode", "timestamp+incrementing", "incrementing.column.name", "id",
		"timestamp.column.name", "updated_at", "table.blacklist", "skipped")

	tcs := taskConfigs(t, h, cfg, 4)
	var tables []string
	for _, tc := range tcs {
		tables = append(tables, tc["tables"])
	}
	if strings.Join(tables, ";") != "public.events;public.other" {
		t.Fatalf("task tables %q, want public.events and public.other in two tasks", tables)
	}

	task := mustOpen(t, h, "io.confluent.connect.jdbc.JdbcSourceConnector", nil, tcs[0])
	first := pollN(t, task, 5)
	if got := strings.Join(ids(t, first), ","); got != "1:e1,2:e2,3:e3,4:e4,5:e5" {
		t.Fatalf("first poll %s", got)
	}
	r := first[4]
	if r.Topic != "pg-events" || string(r.SourcePartition) != `{"protocol":"1","table":"public.events"}` {
		t.Errorf("topic %s partition %s", r.Topic, r.SourcePartition)
	}
	var off map[string]any
	if err := json.Unmarshal(r.SourceOffset, &off); err != nil {
		t.Fatal(err)
	}
	if off["incrementing"] != 5.0 || off["timestamp"] == nil || off["timestamp_nanos"] == nil {
		t.Errorf("offset %s, want incrementing 5, timestamp, timestamp_nanos", r.SourceOffset)
	}
	if !strings.Contains(string(r.Value.Schema), `"name":"events"`) || !strings.Contains(string(r.Value.Bytes), `"amount":"AnE="`) ||
		!strings.Contains(string(r.Value.Bytes), `"day":19786`) {
		t.Errorf("value %s %s: want a struct named events, amount 6.25 as a Decimal, day 2024-03-04 as a Date", r.Value.Schema, r.Value.Bytes)
	}

	srv.Exec(t, `UPDATE events SET name = 'e2 changed', updated_at = clock_timestamp() WHERE id = 2;
		INSERT INTO events (name) VALUES ('e6'); UPDATE events SET name = 'e4 changed', updated_at = clock_timestamp() WHERE id = 4`)
	second := pollN(t, task, 3)
	if got := strings.Join(ids(t, second), ","); got != "2:e2 changed,6:e6,4:e4 changed" {
		t.Fatalf("after updates: %s", got)
	}

	// A new task from the stored offset of the last record sees only what follows it.
	last := second[2]
	resumed := mustOpen(t, h, "JdbcSourceConnector", offsets{string(last.SourcePartition): string(last.SourceOffset)}, tcs[0])
	srv.Exec(t, `INSERT INTO events (name) VALUES ('e7')`)
	if got := strings.Join(ids(t, pollN(t, resumed, 1)), ","); got != "7:e7" {
		t.Fatalf("resumed task: %s", got)
	}
	// The Confluent connector's protocol 0 partition ({"table": name}) is read too.
	legacy := mustOpen(t, h, "JdbcSourceConnector", offsets{`{"table":"events"}`: string(last.SourceOffset)}, tcs[0])
	if got := strings.Join(ids(t, pollN(t, legacy, 1)), ","); got != "7:e7" {
		t.Fatalf("task from a protocol 0 offset: %s", got)
	}
}

// TestSourceModes: bulk reads the whole table each time, incrementing only new ids, and query
// mode reads the query into topic.prefix with the query partition.
func TestSourceModes(t *testing.T) {
	srv := pgtest.Start(t, pgtest.Options{})
	srv.Exec(t, `CREATE TABLE events (id bigint PRIMARY KEY, name text); INSERT INTO events VALUES (1, 'a'), (2, 'b')`)
	h := jdbcHost(t, srv.Addr())

	bulk := mustOpen(t, h, "JdbcSourceConnector", nil, sourceConfig(srv, "mode", "bulk", "tables", "public.events", "poll.interval.ms", "1000"))
	inc := mustOpen(t, h, "JdbcSourceConnector", nil, sourceConfig(srv, "mode", "incrementing", "incrementing.column.name", "id",
		"tables", "public.events", "batch.max.rows", "1"))
	query := mustOpen(t, h, "JdbcSourceConnector", nil, sourceConfig(srv, "mode", "incrementing", "incrementing.column.name", "id",
		"query", "SELECT id, upper(name) AS name FROM events", "topic.prefix", "upper"))
	pollN(t, bulk, 2)
	pollN(t, inc, 2)
	q := pollN(t, query, 2)
	if got := strings.Join(ids(t, q), ","); got != "1:A,2:B" || q[1].Topic != "upper" || string(q[1].SourcePartition) != `{"query":"query"}` {
		t.Errorf("query: %s topic %s partition %s", got, q[1].Topic, q[1].SourcePartition)
	}
	srv.Exec(t, `INSERT INTO events VALUES (3, 'c')`)
	if got := strings.Join(ids(t, pollN(t, inc, 1)), ","); got != "3:c" {
		t.Errorf("incrementing after an insert: %s", got)
	}
	if got := strings.Join(ids(t, pollN(t, bulk, 3)), ","); got != "1:a,2:b,3:c" {
		t.Errorf("bulk after an insert: %s", got)
	}
}
