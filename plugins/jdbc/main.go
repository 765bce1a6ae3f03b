// Command jdbc is the wasmconnect plugin module of the JDBC connectors for PostgreSQL: a sink
// (io.confluent.connect.jdbc.JdbcSinkConnector) that writes Struct records to tables, and a source
// (io.confluent.connect.jdbc.JdbcSourceConnector) that reads tables or a query into topics. Both take
// the Confluent connectors' settings, so a user's existing config works unchanged, and the source
// stores its partitions and offsets in the Confluent format ({"protocol":"1","table":"public.orders"}
// -> {"timestamp":..., "timestamp_nanos":..., "incrementing":...}), so GET and PATCH /offsets work on
// them as they do in Kafka Connect.
//
// It is a Go guest on github.com/jackc/pgx/v5: the connection is a net.Conn from sdk.Dial, which
// the worker opens only to what plugin.net.allow grants. Names are resolved by the host too.
package main

import sdk "github.com/wasmconnect/wasmconnect/sdk/go"

const version = "10.9.0-wasmconnect"

func init() {
	sdk.RegisterSink(sdk.Info{
		Name:    "JdbcSinkConnector",
		Class:   "io.confluent.connect.jdbc.JdbcSinkConnector",
		Aliases: []string{"JdbcSink"},
		Version: version,
		Config:  sinkConfigDefs,
	}, sinkConnector{})
	sdk.RegisterSource(sdk.Info{
		Name:    "JdbcSourceConnector",
		Class:   "io.confluent.connect.jdbc.JdbcSourceConnector",
		Aliases: []string{"JdbcSource"},
		Version: version,
		Config:  sourceConfigDefs,
	}, sourceConnector{})
}

func main() {} // a reactor module: never called
