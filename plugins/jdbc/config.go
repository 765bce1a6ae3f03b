package main

import (
	"fmt"
	"strconv"

	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
)

// The settings both connectors share: where the database is and how to reach it.
var connectionConfigDefs = []sdk.ConfigDef{
	{Name: "connection.url", Required: true, Importance: sdk.High, Group: "Database", Order: 1, Width: "LONG",
		DisplayName: "JDBC URL",
		Documentation: "JDBC URL of the database: jdbc:postgresql://host:port/database, optionally with " +
			"?user=...&password=...&sslmode=...&currentSchema=.... Only PostgreSQL is supported. The worker's " +
			"plugin.net.allow must grant host:port."},
	{Name: "connection.user", Default: new(""), Importance: sdk.High, Group: "Database", Order: 2,
		DisplayName: "JDBC User", Documentation: "Database user (overrides user= in the URL)."},
	{Name: "connection.password", Type: sdk.TypePassword, Default: new(""), Importance: sdk.High, Group: "Database", Order: 3,
		DisplayName: "JDBC Password", Documentation: "Database password (overrides password= in the URL); use a config provider to keep it out of the config topic."},
	{Name: "connection.attempts", Type: sdk.TypeInt, Default: new("3"), Importance: sdk.Low, Group: "Database", Order: 4,
		DisplayName: "JDBC connection attempts", Documentation: "How many times to try to connect before failing. A rejected user or password fails at once.",
		Validator: atLeast(1)},
	{Name: "connection.backoff.ms", Type: sdk.TypeLong, Default: new("10000"), Importance: sdk.Low, Group: "Database", Order: 5,
		DisplayName: "JDBC connection backoff (millis)", Documentation: "Wait between connection attempts.", Validator: atLeast(0)},
	{Name: "dialect.name", Default: new(""), Importance: sdk.Low, Group: "Database", Order: 6,
		DisplayName: "Database Dialect", Documentation: "Empty or PostgreSqlDatabaseDialect: the only dialect of this plugin.",
		Validator: sdk.OneOf("", "PostgreSqlDatabaseDialect")},
}

var sinkConfigDefs = concat(connectionConfigDefs, []sdk.ConfigDef{
	{Name: "insert.mode", Default: new("insert"), Importance: sdk.High, Group: "Writes", Order: 1, DisplayName: "Insert Mode",
		Documentation: "insert: INSERT rows; upsert: INSERT ... ON CONFLICT (pk) DO UPDATE, so that redelivered records are harmless; update: UPDATE rows by primary key.",
		Validator:     sdk.OneOfIgnoreCase("insert", "upsert", "update")},
	{Name: "batch.size", Type: sdk.TypeInt, Default: new("3000"), Importance: sdk.Medium, Group: "Writes", Order: 2, DisplayName: "Batch Size",
		Documentation: "Most records written in one transaction (one round trip to the database).", Validator: atLeast(1)},
	{Name: "delete.enabled", Type: sdk.TypeBoolean, Default: new("false"), Importance: sdk.Medium, Group: "Writes", Order: 3, DisplayName: "Enable deletes",
		Documentation: "Delete the row of a record with a null value (a tombstone). Needs pk.mode=record_key."},
	{Name: "table.name.format", Default: new("${topic}"), Importance: sdk.Medium, Group: "Data Mapping", Order: 1, DisplayName: "Table Name Format",
		Documentation: "The destination table; ${topic} is replaced by the record's topic. schema.table names another schema."},
	{Name: "pk.mode", Default: new("none"), Importance: sdk.High, Group: "Data Mapping", Order: 2, DisplayName: "Primary Key Mode",
		Documentation: "none: no key; kafka: __connect_topic, __connect_partition, __connect_offset; record_key: fields of the record key " +
			"(or the key itself, named by pk.fields); record_value: fields of the record value.",
		Validator: sdk.OneOfIgnoreCase("none", "kafka", "record_key", "record_value")},
	{Name: "pk.fields", Type: sdk.TypeList, Default: new(""), Importance: sdk.Medium, Group: "Data Mapping", Order: 3, DisplayName: "Primary Key Fields",
		Documentation: "The primary key columns; empty: all fields of the key (record_key) or value (record_value), or the three kafka columns."},
	{Name: "fields.whitelist", Type: sdk.TypeList, Default: new(""), Importance: sdk.Medium, Group: "Data Mapping", Order: 4, DisplayName: "Fields Whitelist",
		Documentation: "The value fields to write; empty: all."},
	{Name: "db.timezone", Default: new("UTC"), Importance: sdk.Medium, Group: "Data Mapping", Order: 5, DisplayName: "DB Time Zone",
		Documentation: "Time zone of Date, Time and Timestamp values written to columns without a time zone. Only UTC is supported.",
		Validator:     sdk.OneOf("UTC")},
	{Name: "auto.create", Type: sdk.TypeBoolean, Default: new("false"), Importance: sdk.Medium, Group: "DDL Support", Order: 1, DisplayName: "Auto-Create",
		Documentation: "Create a missing table (CREATE TABLE) from the record's schema and pk.mode."},
	{Name: "auto.evolve", Type: sdk.TypeBoolean, Default: new("false"), Importance: sdk.Medium, Group: "DDL Support", Order: 2, DisplayName: "Auto-Evolve",
		Documentation: "Add a column (ALTER TABLE ADD) for a field the table lacks; the field must be optional or have a default."},
	{Name: "max.retries", Type: sdk.TypeInt, Default: new("10"), Importance: sdk.Medium, Group: "Retries", Order: 1, DisplayName: "Maximum Retries",
		Documentation: "How many times a failed write is retried before the task fails.", Validator: atLeast(0)},
	{Name: "retry.backoff.ms", Type: sdk.TypeInt, Default: new("3000"), Importance: sdk.Medium, Group: "Retries", Order: 2, DisplayName: "Retry Backoff (millis)",
		Documentation: "Wait before a failed write is retried.", Validator: atLeast(0)},
})

var sourceConfigDefs = concat(connectionConfigDefs, []sdk.ConfigDef{
	{Name: "mode", Required: true, Importance: sdk.High, Group: "Mode", Order: 1, DisplayName: "Table Loading Mode",
		Documentation: "bulk: the whole table every poll; incrementing: new rows by a strictly increasing column; timestamp: new and " +
			"changed rows by a timestamp column; timestamp+incrementing: both, which finds new and changed rows without missing or repeating one.",
		Validator: sdk.OneOf("bulk", "incrementing", "timestamp", "timestamp+incrementing")},
	{Name: "incrementing.column.name", Default: new(""), Importance: sdk.Medium, Group: "Mode", Order: 2, DisplayName: "Incrementing Column Name",
		Documentation: "The strictly increasing integer column (incrementing modes)."},
	{Name: "timestamp.column.name", Type: sdk.TypeList, Default: new(""), Importance: sdk.Medium, Group: "Mode", Order: 3, DisplayName: "Timestamp Column Name",
		Documentation: "The timestamp columns (timestamp modes); several are COALESCEd in order."},
	{Name: "timestamp.delay.interval.ms", Type: sdk.TypeLong, Default: new("0"), Importance: sdk.High, Group: "Mode", Order: 4, DisplayName: "Delay Interval (ms)",
		Documentation: "How long after a row's timestamp it is read, so that transactions that started earlier have committed.", Validator: atLeast(0)},
	{Name: "timestamp.initial", Type: sdk.TypeLong, Importance: sdk.Low, Group: "Mode", Order: 5, DisplayName: "Initial Timestamp",
		Documentation: "Epoch milliseconds to start from when there is no stored offset; -1: now; unset: the beginning."},
	{Name: "table.whitelist", Type: sdk.TypeList, Default: new(""), Importance: sdk.Medium, Group: "Database", Order: 10, DisplayName: "Table Whitelist",
		Documentation: "Tables to read (name or schema.name); empty: all tables but the blacklisted ones."},
	{Name: "table.blacklist", Type: sdk.TypeList, Default: new(""), Importance: sdk.Medium, Group: "Database", Order: 11, DisplayName: "Table Blacklist",
		Documentation: "Tables not to read."},
	{Name: "schema.pattern", Importance: sdk.Medium, Group: "Database", Order: 12, DisplayName: "Schema pattern",
		Documentation: "LIKE pattern of the schemas whose tables are read; unset: every schema but PostgreSQL's own."},
	{Name: "query", Default: new(""), Importance: sdk.Medium, Group: "Mode", Order: 6, DisplayName: "Query",
		Documentation: "Read this query instead of tables (one task); the mode's WHERE clause is appended to it."},
	{Name: "topic.prefix", Required: true, Importance: sdk.High, Group: "Connector", Order: 1, DisplayName: "Topic Prefix",
		Documentation: "Prefix of the topic names: prefix + table name, or the topic itself with query."},
	{Name: "poll.interval.ms", Type: sdk.TypeInt, Default: new("5000"), Importance: sdk.High, Group: "Connector", Order: 2, DisplayName: "Poll Interval (ms)",
		Documentation: "How often each table is queried for new data.", Validator: atLeast(1)},
	{Name: "batch.max.rows", Type: sdk.TypeInt, Default: new("1000"), Importance: sdk.Low, Group: "Connector", Order: 3, DisplayName: "Max Rows Per Batch",
		Documentation: "Most rows returned by one poll.", Validator: atLeast(1)},
	{Name: "validate.non.null", Type: sdk.TypeBoolean, Default: new("true"), Importance: sdk.Low, Group: "Connector", Order: 4, DisplayName: "Validate Non Null",
		Documentation: "Fail when the incrementing or timestamp column may be NULL."},
})

func concat(lists ...[]sdk.ConfigDef) []sdk.ConfigDef {
	var out []sdk.ConfigDef
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// atLeast is a Validator of integer settings, worded as Kafka's ConfigDef.Range.atLeast.
func atLeast(n int64) func(string) error {
	return func(v string) error {
		if x, err := strconv.ParseInt(v, 10, 64); err == nil && x < n {
			return fmt.Errorf("Value must be at least %d", n)
		}
		return nil
	}
}
