package main

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/wasmconnect/wasmconnect/plugins/internal/pgnet"
	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
)

var configDefs = []sdk.ConfigDef{
	{Name: "database.hostname", Required: true, Importance: sdk.High, Group: "Connection", Order: 1,
		Documentation: "Host of the PostgreSQL server. The worker's plugin.net.allow must grant host:port."},
	{Name: "database.port", Type: sdk.TypeInt, Default: new("5432"), Importance: sdk.High, Group: "Connection", Order: 2,
		Documentation: "Port of the PostgreSQL server."},
	{Name: "database.user", Required: true, Importance: sdk.High, Group: "Connection", Order: 3,
		Documentation: "User with the REPLICATION attribute (or a superuser) and SELECT on the captured tables."},
	{Name: "database.password", Type: sdk.TypePassword, Default: new(""), Importance: sdk.High, Group: "Connection", Order: 4,
		Documentation: "Password of database.user."},
	{Name: "database.dbname", Required: true, Importance: sdk.High, Group: "Connection", Order: 5,
		Documentation: "The database to capture."},
	{Name: "database.sslmode", Default: new("prefer"), Importance: sdk.Medium, Group: "Connection", Order: 6,
		Documentation: "libpq's sslmode: disable, prefer, require, verify-ca, verify-full.",
		Validator:     sdk.OneOf("disable", "allow", "prefer", "require", "verify-ca", "verify-full")},
	{Name: "topic.prefix", Required: true, Importance: sdk.High, Group: "Connector", Order: 1,
		Documentation: "Logical name of the server: the prefix of every topic (<prefix>.<schema>.<table>) and the source partition {\"server\": prefix}."},
	{Name: "plugin.name", Default: new("pgoutput"), Importance: sdk.Medium, Group: "Replication", Order: 1,
		Documentation: "The logical decoding plugin: pgoutput, PostgreSQL's built-in one, only.", Validator: sdk.OneOf("pgoutput")},
	{Name: "slot.name", Default: new("debezium"), Importance: sdk.Medium, Group: "Replication", Order: 2,
		Documentation: "The logical replication slot the connector streams from; created when missing."},
	{Name: "publication.name", Default: new("dbz_publication"), Importance: sdk.Medium, Group: "Replication", Order: 3,
		Documentation: "The publication pgoutput streams."},
	{Name: "publication.autocreate.mode", Default: new("all_tables"), Importance: sdk.Medium, Group: "Replication", Order: 4,
		Documentation: "all_tables: create the publication FOR ALL TABLES when missing; filtered: create or set it to the captured tables; disabled: it must exist.",
		Validator:     sdk.OneOf("all_tables", "filtered", "disabled")},
	{Name: "table.include.list", Type: sdk.TypeList, Default: new(""), Importance: sdk.High, Group: "Filters", Order: 1,
		Documentation: "Regular expressions of the tables to capture, matched against the whole schema.table; empty: every table outside the system schemas."},
	{Name: "table.exclude.list", Type: sdk.TypeList, Default: new(""), Importance: sdk.High, Group: "Filters", Order: 2,
		Documentation: "Regular expressions of the tables not to capture (schema.table); not together with table.include.list."},
	{Name: "snapshot.mode", Default: new("initial"), Importance: sdk.Medium, Group: "Connector", Order: 2,
		Documentation: "initial: snapshot the tables when no offset is stored, then stream; always: snapshot at every start; no_data (never): stream only.",
		Validator:     sdk.OneOf("initial", "always", "no_data", "never")},
	{Name: "heartbeat.interval.ms", Type: sdk.TypeInt, Default: new("0"), Importance: sdk.Medium, Group: "Connector", Order: 3,
		Documentation: "Every this many milliseconds while streaming, also when the database is idle, a heartbeat record (topic <heartbeat.topics.prefix>.<topic.prefix>) carries the stream's position, so that the slot advances while the captured tables are idle; 0: none."},
	{Name: "heartbeat.topics.prefix", Default: new("__debezium-heartbeat"), Importance: sdk.Low, Group: "Connector", Order: 4,
		Documentation: "Prefix of the heartbeat topic."},
	{Name: "tombstones.on.delete", Type: sdk.TypeBoolean, Default: new("true"), Importance: sdk.Medium, Group: "Events", Order: 1,
		Documentation: "Follow each delete event with a tombstone (the key, a null value), so that compaction removes the row's records."},
	{Name: "decimal.handling.mode", Default: new("precise"), Importance: sdk.Medium, Group: "Events", Order: 2,
		Documentation: "NUMERIC columns as precise (Connect Decimal; VariableScaleDecimal without a declared scale), double or string.",
		Validator:     sdk.OneOf("precise", "double", "string")},
	{Name: "time.precision.mode", Default: new("adaptive"), Importance: sdk.Medium, Group: "Events", Order: 3,
		Documentation: "adaptive: io.debezium.time types at the column's precision; adaptive_time_microseconds: TIME as MicroTime; connect: Kafka Connect's Date, Time and Timestamp (milliseconds).",
		Validator:     sdk.OneOf("adaptive", "adaptive_time_microseconds", "connect")},
	{Name: "max.batch.size", Type: sdk.TypeInt, Default: new("2048"), Importance: sdk.Low, Group: "Connector", Order: 5,
		Documentation: "Most change events returned by one poll."},
	{Name: "poll.interval.ms", Type: sdk.TypeInt, Default: new("500"), Importance: sdk.Low, Group: "Connector", Order: 6,
		Documentation: "How long one poll waits for changes when there are none."},
}

// settings is a parsed connector config.
type settings struct {
	server, slot, publication, pubMode string
	snapshotMode                       string
	include, exclude                   []*regexp.Regexp
	heartbeatMs                        int
	heartbeatTopic                     string
	tombstones                         bool
	decimalMode, timeMode              string
	maxBatch, pollMs                   int
	db                                 string
}

func parseSettings(cfg sdk.Config) (*settings, error) {
	s := &settings{server: cfg["topic.prefix"], slot: cfg["slot.name"], publication: cfg["publication.name"],
		pubMode: cfg["publication.autocreate.mode"], snapshotMode: cfg["snapshot.mode"], db: cfg["database.dbname"],
		decimalMode: cfg["decimal.handling.mode"], timeMode: cfg["time.precision.mode"]}
	if s.snapshotMode == "never" {
		s.snapshotMode = "no_data"
	}
	if !slotName.MatchString(s.slot) {
		return nil, sdk.InvalidConfig("slot.name", s.slot, "a replication slot's name has only lower case letters, digits and _, at most 63")
	}
	var err error
	if s.include, err = regexps(cfg, "table.include.list"); err != nil {
		return nil, err
	}
	if s.exclude, err = regexps(cfg, "table.exclude.list"); err != nil {
		return nil, err
	}
	if len(s.include) > 0 && len(s.exclude) > 0 {
		return nil, sdk.InvalidConfig("table.exclude.list", cfg["table.exclude.list"], "table.include.list and table.exclude.list exclude each other")
	}
	if s.heartbeatMs, err = cfg.Int("heartbeat.interval.ms", 0); err != nil {
		return nil, err
	}
	s.heartbeatTopic = cfg["heartbeat.topics.prefix"] + "." + s.server
	if s.tombstones, err = cfg.Bool("tombstones.on.delete", true); err != nil {
		return nil, err
	}
	if s.maxBatch, err = cfg.Int("max.batch.size", 2048); err != nil {
		return nil, err
	}
	if s.pollMs, err = cfg.Int("poll.interval.ms", 500); err != nil {
		return nil, err
	}
	return s, nil
}

var slotName = regexp.MustCompile(`^[a-z0-9_]{1,63}$`)

func regexps(cfg sdk.Config, key string) ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	for _, p := range cfg.List(key, nil) {
		re, err := regexp.Compile("^(?:" + p + ")$")
		if err != nil {
			return nil, sdk.InvalidConfig(key, p, err.Error())
		}
		out = append(out, re)
	}
	return out, nil
}

// captures says whether the table schema.name is one the connector captures.
func (s *settings) captures(schema, name string) bool {
	id := schema + "." + name
	match := func(res []*regexp.Regexp) bool {
		for _, re := range res {
			if re.MatchString(id) {
				return true
			}
		}
		return false
	}
	if len(s.include) > 0 {
		return match(s.include)
	}
	return !match(s.exclude)
}

// connConfig is the pgx config of database.*; replication adds replication=database, the
// walsender mode that logical replication commands need.
func connConfig(cfg sdk.Config, replication bool) (*pgx.ConnConfig, error) {
	port, err := cfg.Int("database.port", 5432)
	if err != nil {
		return nil, err
	}
	q := url.Values{"sslmode": {cfg["database.sslmode"]}}
	if replication {
		q.Set("replication", "database")
	}
	u := url.URL{Scheme: "postgres", Host: net.JoinHostPort(cfg["database.hostname"], strconv.Itoa(port)),
		Path: "/" + cfg["database.dbname"], User: url.UserPassword(cfg["database.user"], cfg["database.password"]), RawQuery: q.Encode()}
	pc, err := pgx.ParseConfig(u.String())
	if err != nil {
		return nil, sdk.InvalidConfig("database.hostname", cfg["database.hostname"], strings.ReplaceAll(err.Error(), cfg["database.password"], "[hidden]"))
	}
	pgnet.Route(&pc.Config)
	if replication {
		// pgx's statement cache and type queries speak the extended protocol, which a walsender
		// refuses: the replication connection is used as a pgconn only.
		pc.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	}
	return pc, nil
}

func where(cfg sdk.Config) string {
	return fmt.Sprintf("%s:%s/%s", cfg["database.hostname"], cfg["database.port"], cfg["database.dbname"])
}
