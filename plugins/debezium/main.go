// Command debezium is the wasmconnect plugin module of Debezium's PostgreSQL connector
// (io.debezium.connector.postgresql.PostgresConnector): change data capture from PostgreSQL's
// logical replication stream (the built-in pgoutput plugin, decoded with jackc/pglogrepl) into
// topics <topic.prefix>.<schema>.<table>, in Debezium's event envelope and with Debezium's
// settings, source partition ({"server": topic.prefix}) and offsets (lsn, lsn_commit, txId,
// ts_usec, snapshot...), so that users' configs and their consumers work unchanged.
//
// The task takes an initial snapshot in a repeatable-read transaction exported from the slot's
// creation, then streams from the slot's consistent point, so that the seam has no gap and no
// duplicate. The slot's confirmed position advances only when the host says the offsets are stored
// (sdk.OffsetCommitter), so a crash loses nothing. Connections go through the worker's granted
// network (plugins/internal/pgnet).
package main

import sdk "github.com/wasmconnect/wasmconnect/sdk/go"

// debeziumVersion is the Debezium release whose formats this module writes (source.version).
const debeziumVersion = "3.2.0.Final"

func init() {
	sdk.RegisterSource(sdk.Info{
		Name:    "PostgresConnector",
		Class:   "io.debezium.connector.postgresql.PostgresConnector",
		Aliases: []string{"PostgresConnector", "DebeziumPostgres"},
		Version: debeziumVersion + "-wasmconnect",
		Config:  configDefs,
	}, connector{})
}

func main() {} // a reactor module: never called
