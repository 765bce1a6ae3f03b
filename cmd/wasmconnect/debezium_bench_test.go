//go:build e2e

package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/wasmconnect/wasmconnect/plugins/pgtest"
)

// BenchmarkDebeziumBulkUpdate measures change events/s of a bulk update of 100,000 rows (one
// transaction), from its commit to the last event in Kafka, next to PostgreSQL's own
// pg_recvlogical reading the same transaction from a slot of its own (pgoutput, to a file):
//
//	go test -tags e2e -run '^$' -bench DebeziumBulkUpdate -benchtime 3x ./cmd/wasmconnect/
func BenchmarkDebeziumBulkUpdate(b *testing.B) {
	const n = 100_000
	srv := pgtest.Start(b, logicalWAL)
	srv.Exec(b, fmt.Sprintf(`CREATE TABLE customers (id int PRIMARY KEY, name text NOT NULL, balance numeric(12,2), seen timestamp);
		INSERT INTO customers SELECT i, 'c' || i, i * 1.5, timestamp '2024-01-01' + i * interval '1 second' FROM generate_series(1, %d) i;
		CREATE PUBLICATION dbz_publication FOR ALL TABLES`, n))
	_, addr := startBroker(b)
	// A cache of its own, so that the modules are compiled now, before waitCompiled returns,
	// rather than from the shared cache on first use.
	w := startBenchWorker(b, "worker", addr, map[string]string{"plugin.path": debeziumPlugins(b), "plugin.net.allow": srv.Addr(),
		"plugin.cache.dir": b.TempDir()})
	waitCompiled(b, w)
	w.mustCall(b, 201, "POST", "/connectors", map[string]any{"name": "inventory", "config": debeziumConfig(srv, "snapshot.mode", "no_data")})
	c := srv.Connect(b)
	waitFor(b, time.Minute, "the slot streaming", func() bool {
		var active bool
		c.QueryRow(context.Background(), "SELECT active FROM pg_replication_slots WHERE slot_name = 'debezium'").Scan(&active)
		return active
	})
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics("dbserver1.public.customers"), kgo.AllowAutoTopicCreation())
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	var connector, peer []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Exec(ctx, "SELECT pg_create_logical_replication_slot('peer', 'pgoutput')"); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Exec(ctx, "UPDATE customers SET balance = balance + 1"); err != nil {
			b.Fatal(err)
		}
		committed := time.Now()
		var end string
		c.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&end)
		got := 0
		for got < n {
			fctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			fs := cl.PollFetches(fctx)
			timedOut := fctx.Err() != nil
			cancel()
			if timedOut {
				b.Fatalf("%d of %d events after 2 minutes", got, n)
			}
			got += fs.NumRecords()
		}
		took := time.Since(committed)
		connector = append(connector, n/took.Seconds())

		start := time.Now()
		out, err := exec.Command(filepath.Join(srv.Bin, "pg_recvlogical"), "-d", srv.DSN(), "--slot", "peer", "--start", "--endpos", end,
			"-o", "proto_version=1", "-o", "publication_names=dbz_publication", "-f", filepath.Join(b.TempDir(), "peer.out")).CombinedOutput()
		if err != nil {
			b.Fatalf("pg_recvlogical: %v\n%s", err, out)
		}
		peer = append(peer, n/time.Since(start).Seconds())
		if _, err := c.Exec(ctx, "SELECT pg_drop_replication_slot('peer')"); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(median(connector), "events/s")
	b.ReportMetric(median(peer), "pg_recvlogical-events/s")
	b.ReportMetric(median(connector)/median(peer), "connector/pg_recvlogical")
}
