//go:build e2e

package main

// The JDBC source's end-to-end test: broker, worker and PostgreSQL as separate processes.

import (
	"context"
	"encoding/json"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/wasmconnect/wasmconnect/plugins/pgtest"
)

// readTopic reads topic (one partition) from its start up to its end when called, and returns the
// values; nil while the topic does not exist. Reading up to the end rather than until a pause ends
// also while a source is still writing.
func readTopic(t *testing.T, addr, topic string) [][]byte {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	end, ok := ends.Lookup(topic, 0)
	if !ok || end.Err != nil {
		return nil
	}
	var out [][]byte
	for int64(len(out)) < end.Offset {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s: %d of %d records after 30s", topic, len(out), end.Offset)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset < end.Offset {
				out = append(out, r.Value)
			}
		})
	}
	return out
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

	w.waitTaskState(t, "pg-source", "RUNNING", time.Minute)

	// The writer inserts rows in both tables and updates some of the first 500 until stopped. Each statement stamps its
	// rows with one timestamp of whole milliseconds, later than the previous statement's: the
	// records' updated_at (a Connect Timestamp, milliseconds) then orders them exactly, and rows
	// sharing a timestamp are ordered by id, the (timestamp = ? AND id > ?) half of the query.
	c := srv.Connect(t)
	stop, done := make(chan struct{}), make(chan error)
	go func() {
		var last time.Time
		stamp := func() time.Time {
			ts := time.Now().UTC().Truncate(time.Millisecond)
			if !ts.After(last) {
				ts = last.Add(time.Millisecond)
			}
			last = ts
			return ts
		}
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			for _, table := range []string{"accounts", "payments"} {
				_, err := c.Exec(context.Background(), `INSERT INTO `+table+` (version, updated_at) VALUES (0, $1), (0, $1), (0, $1)`, stamp())
				if err == nil {
					_, err = c.Exec(context.Background(), `UPDATE `+table+` SET version = version + 1, updated_at = $2 WHERE id % 50 = $1 AND id <= 500`, i%50, stamp())
				}
				if err != nil {
					done <- err
					return
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	waitFor(t, time.Minute, "records of both tables", func() bool {
		return len(readTopic(t, addr, "pg-accounts")) > 200 && len(readTopic(t, addr, "pg-payments")) > 200
	})
	w.stop(syscall.SIGKILL)
	time.Sleep(500 * time.Millisecond) // rows change while no worker runs
	w = startWorker(t, "worker-2", addr, props)
	w.waitTaskState(t, "pg-source", "RUNNING", time.Minute)
	time.Sleep(time.Second)
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
			recs = accountRows(t, readTopic(t, addr, "pg-"+table))
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
		// The records are in (timestamp, id) order, each row version once, but for one step back:
		// the redelivery after the restart of what was read after the last committed offset.
		var steps []int
		for i := 1; i < len(recs); i++ {
			a, b := recs[i-1], recs[i]
			if b.UpdatedAt < a.UpdatedAt || b.UpdatedAt == a.UpdatedAt && b.ID <= a.ID {
				steps = append(steps, i)
			}
		}
		if len(steps) > 1 {
			t.Errorf("pg-%s: %d steps back in (timestamp, id) order among %d records (at %v); only the redelivery after the restart may step back", table, len(steps), len(recs), steps[:min(len(steps), 10)])
		}
		redelivered := 0
		if len(steps) == 1 {
			before := map[accountRow]bool{}
			for _, r := range recs[:steps[0]] {
				before[r] = true
			}
			for _, r := range recs[steps[0]:] {
				if before[r] {
					redelivered++
				}
			}
		}
		t.Logf("pg-%s: %d rows, %d records, %d redelivered after the restart", table, len(final), len(recs), redelivered)
	}

	// GET /offsets: the Confluent partitions and offsets of both tables.
	type connectorOffsets struct {
		Offsets []struct {
			Partition map[string]any `json:"partition"`
			Offset    map[string]any `json:"offset"`
		} `json:"offsets"`
	}
	var offsets connectorOffsets
	empty := 0
	waitFor(t, 30*time.Second, "GET /offsets to show both tables", func() bool {
		offsets = connectorOffsets{}
		if err := json.Unmarshal(w.mustCall(t, 200, "GET", "/connectors/pg-source/offsets", nil), &offsets); err != nil {
			t.Fatal(err)
		}
		if len(offsets.Offsets) < 2 {
			empty++
			return false
		}
		return true
	})
	if empty > 0 {
		// When the kill came before the first worker's first offset flush (offset.flush.interval.ms
		// after its tasks started), nothing was stored: the new worker rightly answers with fewer
		// partitions until its own tasks flush. TestOffsetsAfterWorkerRestart checks that stored
		// offsets are answered from the first answer on.
		t.Logf("GET /offsets showed fewer than 2 partitions %d times before both", empty)
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

	// PATCH /offsets: accounts back to the start, so all its rows come again, once each; payments
	// goes on from its offset, so none of its rows comes again.
	before := len(readTopic(t, addr, "pg-accounts"))
	paymentsBefore := len(readTopic(t, addr, "pg-payments"))
	w.mustCall(t, 204, "PUT", "/connectors/pg-source/stop", nil)
	waitFor(t, time.Minute, "pg-source to stop", func() bool {
		s, ok := w.status(t, "pg-source")
		return ok && s.Connector.State == "STOPPED"
	})
	w.mustCall(t, 200, "PATCH", "/connectors/pg-source/offsets", map[string]any{"offsets": []map[string]any{{
		"partition": map[string]any{"protocol": "1", "table": "public.accounts"},
		"offset":    map[string]any{"incrementing": 0, "timestamp": 0, "timestamp_nanos": 0},
	}}})
	w.mustCall(t, 202, "PUT", "/connectors/pg-source/resume", nil)
	waitFor(t, time.Minute, "accounts read again from the start", func() bool {
		return len(readTopic(t, addr, "pg-accounts")) >= before+len(finals["accounts"])
	})
	again := accountRows(t, readTopic(t, addr, "pg-accounts"))[before:]
	seen := map[int32]bool{}
	for _, r := range again {
		if seen[r.ID] || r.Version != finals["accounts"][r.ID] {
			t.Errorf("after the rewind: %+v (again, or not the row's last version %d)", r, finals["accounts"][r.ID])
		}
		seen[r.ID] = true
	}
	if len(seen) != len(finals["accounts"]) {
		t.Errorf("after the rewind %d of %d accounts came again", len(seen), len(finals["accounts"]))
	}
	if n := len(readTopic(t, addr, "pg-payments")); n != paymentsBefore {
		t.Errorf("pg-payments went from %d to %d records, though only accounts was rewound", paymentsBefore, n)
	}
}
