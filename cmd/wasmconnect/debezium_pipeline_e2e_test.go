//go:build e2e

package main

// The database-to-database pipeline of issue 16: Debezium's PostgreSQL connector into a topic,
// the JDBC sink through Debezium's ExtractNewRecordState (in the Rust transforms module) into a
// replica table:
//
//	go test -tags e2e -run TestDebeziumToJDBCPipeline ./cmd/wasmconnect/

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/plugins/pgtest"
)

// TestDebeziumToJDBCPipeline: 10,000 rows, then 5,000 inserts, 2,000 updates and 1,000 deletes
// while it runs; the replica table, written by the JDBC sink from the unwrapped events (deletes
// as tombstones, delete.handling.mode=none and drop.tombstones=false), equals the source table
// row for row.
func TestDebeziumToJDBCPipeline(t *testing.T) {
	srv := pgtest.Start(t, logicalWAL)
	customers(t, srv, 10_000)
	_, addr := startBroker(t)
	w := startWorker(t, "worker", addr, map[string]string{"plugin.path": debeziumPlugins(t), "plugin.net.allow": srv.Addr()})
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "inventory", "config": debeziumConfig(srv, "table.include.list", "public.customers")})
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "replica", "config": jdbcConfig(srv, jdbcSink,
		"topics", "dbserver1.public.customers", "table.name.format", "customers_replica",
		"insert.mode", "upsert", "pk.mode", "record_key", "pk.fields", "id", "delete.enabled", "true", "auto.create", "true",
		"transforms", "unwrap", "transforms.unwrap.type", "io.debezium.transforms.ExtractNewRecordState",
		"transforms.unwrap.drop.tombstones", "false", "transforms.unwrap.delete.handling.mode", "none")})
	c := srv.Connect(t)
	waitForSlot(t, c, w, "inventory")
	if err := churn(context.Background(), c, 10_000, 5_000, 2_000, 1_000); err != nil {
		t.Fatal(err)
	}
	diff := func() string {
		var n int
		err := c.QueryRow(context.Background(), `SELECT count(*) FROM (
			(SELECT id, name, balance FROM customers EXCEPT SELECT id, name, balance FROM customers_replica)
			UNION ALL (SELECT id, name, balance FROM customers_replica EXCEPT SELECT id, name, balance FROM customers)) d`).Scan(&n)
		if err != nil {
			return err.Error()
		}
		if n != 0 {
			return fmt.Sprintf("%d rows differ", n)
		}
		return ""
	}
	waitFor(t, 2*time.Minute, "the replica to equal the source table", func() bool {
		failIfTaskFailed(t, w, "inventory")
		failIfTaskFailed(t, w, "replica")
		return diff() == ""
	})
	if n := count(t, c, "customers_replica"); n != 14_000 {
		t.Fatalf("replica has %d rows, want 14,000", n)
	}
}
