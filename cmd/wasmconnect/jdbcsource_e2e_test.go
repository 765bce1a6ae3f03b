//go:build e2e && jdbcsource

package main

// The JDBC source's end-to-end test. It does not pass yet: in timestamp+incrementing mode under a
// steady stream of inserts and updates the task reads rows again (hundreds of thousands of records
// for 6,000 rows) and steps back in (timestamp, id) order, which the tests through the WASM
// boundary (plugins/jdbc) do not show. Run it with -tags 'e2e jdbcsource' while fixing that.

import (
	"context"
	"encoding/json"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/wasmconnect/wasmconnect/plugins/pgtest"
)

// readTopic reads topic from its start until no record came for idle, and returns the values.
func readTopic(t *testing.T, addr, topic string, idle time.Duration) [][]byte {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out [][]byte
	for {
		ctx, cancel := context.WithTimeout(context.Background(), idle)
		fs := cl.PollFetches(ctx)
		cancel()
		n := 0
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r.Value); n++ })
		if n == 0 {
			return out
		}
	}
}

// accountRow is a row of the source test's tables as the source writes it.
type accountRow struct {
	ID        int32 `json:"id"`
	Version   int32 `json:"version"`
	UpdatedAt int64 `json:"updated_at"`
}

func accountRows(t *testing.T, values [][]byte) []accountRow {
	t.Helper()
	rows := make([]accountRow, len(values))
	for i, v := range values {
		var env struct{ Payload accountRow }
		if err := json.Unmarshal(v, &env); err != nil {
			t.Fatalf("record %s: %v", v, err)
		}
		rows[i] = env.Payload
	}
	return rows
}

// TestJDBCSourceTimestampIncrementing: a JDBC source in timestamp+incrementing mode over two tables
// (two tasks) while rows are inserted and updated: every row's last version arrives, in
// (timestamp, id) order per table; a kill -9 of the worker mid-stream and a restart lose nothing
// (the only step back in the order is the redelivery after the restart); GET /offsets shows the
// Confluent partitions and offsets, and PATCH /offsets rewinds a table to its start.
func TestJDBCSourceTimestampIncrementing(t *testing.T) {
	srv := pgtest.Start(t, pgtest.Options{})
	for _, table := range []string{"accounts", "payments"} {
		srv.Exec(t, `CREATE TABLE `+table+` (id serial PRIMARY KEY, version int NOT NULL DEFAULT 0,
			updated_at timestamp(6) NOT NULL DEFAULT clock_timestamp())`)
	}
	w, addr, props := jdbcWorker(t, srv.Addr())
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "pg-source", "config": jdbcConfig(srv,
		"io.confluent.connect.jdbc.JdbcSourceConnector", "mode", "timestamp+incrementing", "incrementing.column.name", "id",
		"timestamp.column.name", "updated_at", "topic.prefix", "pg-", "poll.interval.ms", "100", "tasks.max", "2")})

	// The writer inserts and updates rows in both tables until stopped.
	c := srv.Connect(t)
	stop, done := make(chan struct{}), make(chan error)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			for _, table := range []string{"accounts", "payments"} {
				_, err := c.Exec(context.Background(), `INSERT INTO `+table+` (version) VALUES (0), (0), (0)`)
				if err == nil {
					_, err = c.Exec(context.Background(), `UPDATE `+table+` SET version = version + 1, updated_at = clock_timestamp() WHERE id % 7 = $1`, i%7)
				}
				if err != nil {
					done <- err
					return
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	w.waitTaskState(t, "pg-source", "RUNNING", time.Minute)
	waitFor(t, time.Minute, "records of both tables", func() bool {
		return len(readTopic(t, addr, "pg-accounts", 300*time.Millisecond)) > 200 && len(readTopic(t, addr, "pg-payments", 300*time.Millisecond)) > 200
	})
	w.stop(syscall.SIGKILL)
	time.Sleep(500 * time.Millisecond) // rows change while no worker runs
	w = startWorker(t, "worker-2", addr, props)
	time.Sleep(2 * time.Second)
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	finals := map[string]map[int32]int32{}
	for _, table := range []string{"accounts", "payments"} {
		finals[table] = map[int32]int32{}
		rows, err := c.Query(context.Background(), "SELECT id, version FROM "+table)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id, v int32
			rows.Scan(&id, &v)
			finals[table][id] = v
		}
	}
	for table, final := range finals {
		var recs []accountRow
		waitFor(t, time.Minute, "every row's last version in pg-"+table, func() bool {
			recs = accountRows(t, readTopic(t, addr, "pg-"+table, time.Second))
			last := map[int32]int32{}
			for _, r := range recs {
				last[r.ID] = max(last[r.ID], r.Version)
			}
			for id, v := range final {
				if last[id] != v {
					return false
				}
			}
			return true
		})
		steps := 0
		for i := 1; i < len(recs); i++ {
			a, b := recs[i-1], recs[i]
			if b.UpdatedAt < a.UpdatedAt || b.UpdatedAt == a.UpdatedAt && b.ID < a.ID {
				steps++
			}
		}
		// Timestamps in records are milliseconds: rows within one millisecond may be ordered by id
		// while their microseconds order them otherwise, so the check is on milliseconds and ids.
		if steps > 1 {
			t.Errorf("pg-%s: %d steps back in (timestamp, id) order among %d records; only the redelivery after the restart may step back", table, steps, len(recs))
		}
		t.Logf("pg-%s: %d rows, %d records", table, len(final), len(recs))
	}

	var offsets struct {
		Offsets []struct {
			Partition map[string]any `json:"partition"`
			Offset    map[string]any `json:"offset"`
		} `json:"offsets"`
	}
	if err := json.Unmarshal(w.mustCall(t, 200, "GET", "/connectors/pg-source/offsets", nil), &offsets); err != nil {
		t.Fatal(err)
	}
	tables := map[string]bool{}
	for _, o := range offsets.Offsets {
		if o.Partition["protocol"] != "1" || o.Offset["incrementing"] == nil || o.Offset["timestamp"] == nil || o.Offset["timestamp_nanos"] == nil {
			t.Errorf("offset %v -> %v, want the Confluent format", o.Partition, o.Offset)
		}
		tables[fmt.Sprint(o.Partition["table"])] = true
	}
	if !tables["public.accounts"] || !tables["public.payments"] {
		t.Fatalf("offsets %+v", offsets)
	}

	// PATCH /offsets: accounts back to the start, so all its rows come again.
	before := len(readTopic(t, addr, "pg-accounts", time.Second))
	w.mustCall(t, 204, "PUT", "/connectors/pg-source/stop", nil)
	waitFor(t, time.Minute, "pg-source to stop", func() bool { return w.mustStatus(t, "pg-source").Connector.State == "STOPPED" })
	w.mustCall(t, 200, "PATCH", "/connectors/pg-source/offsets", map[string]any{"offsets": []map[string]any{{
		"partition": map[string]any{"protocol": "1", "table": "public.accounts"},
		"offset":    map[string]any{"incrementing": 0, "timestamp": 0, "timestamp_nanos": 0},
	}}})
	w.mustCall(t, 202, "PUT", "/connectors/pg-source/resume", nil)
	waitFor(t, time.Minute, "accounts read again from the start", func() bool {
		return len(readTopic(t, addr, "pg-accounts", time.Second)) >= before+len(finals["accounts"])
	})
	again := accountRows(t, readTopic(t, addr, "pg-accounts", time.Second))[before:]
	seen := map[int32]bool{}
	for _, r := range again {
		seen[r.ID] = true
	}
	if len(seen) != len(finals["accounts"]) {
		t.Errorf("after the rewind %d of %d accounts came again", len(seen), len(finals["accounts"]))
	}
	if n := len(readTopic(t, addr, "pg-payments", time.Second)); n < len(finals["payments"]) {
		t.Errorf("pg-payments has %d records", n)
	}
}
