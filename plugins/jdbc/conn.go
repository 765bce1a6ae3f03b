package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/wasmconnect/wasmconnect/plugins/internal/pgnet"
	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
)

const jdbcPrefix = "jdbc:postgresql://"

// pgConfig turns connection.url (a PostgreSQL JDBC URL) and connection.user/password into pgx's
// connection config: connections are dialed through the worker (sdk.Dial), which also resolves
// names, and sessions use UTC, the time zone of Connect's Date, Time and Timestamp values.
func pgConfig(cfg sdk.Config) (*pgx.ConnConfig, error) {
	raw := cfg["connection.url"]
	if !strings.HasPrefix(raw, jdbcPrefix) {
		return nil, sdk.InvalidConfig("connection.url", raw, "must be a PostgreSQL JDBC URL, jdbc:postgresql://host:port/database")
	}
	u, err := url.Parse("postgres://" + strings.TrimPrefix(raw, jdbcPrefix))
	if err != nil {
		return nil, sdk.InvalidConfig("connection.url", redactURL(raw), err.Error())
	}
	if u.Host == "" {
		return nil, sdk.InvalidConfig("connection.url", redactURL(raw), "names no host: jdbc:postgresql://host:port/database")
	}
	q := u.Query()
	user, password := q.Get("user"), q.Get("password")
	if v := cfg["connection.user"]; v != "" {
		user = v
	}
	if v := cfg["connection.password"]; v != "" {
		password = v
	}
	// pgjdbc's parameters that libpq names differently; the rest (sslmode, application_name...)
	// are the same in both.
	lib := url.Values{}
	for k, vs := range q {
		switch k {
		case "user", "password":
		case "currentSchema":
			lib.Set("search_path", vs[0])
		case "ApplicationName":
			lib.Set("application_name", vs[0])
		case "connectTimeout":
			lib.Set("connect_timeout", vs[0])
		case "ssl":
			if vs[0] == "true" && q.Get("sslmode") == "" {
				lib.Set("sslmode", "require")
			}
		default:
			lib[k] = vs
		}
	}
	if lib.Get("sslmode") == "" {
		lib.Set("sslmode", "prefer")
	}
	dsn := url.URL{Scheme: "postgres", Host: u.Host, Path: u.Path, RawQuery: lib.Encode()}
	if user != "" {
		dsn.User = url.UserPassword(user, password)
	}
	pc, err := pgx.ParseConfig(dsn.String())
	if err != nil {
		return nil, sdk.InvalidConfig("connection.url", redactURL(raw), err.Error())
	}
	pgnet.Route(&pc.Config)
	return pc, nil
}

// redactURL drops a password= from a JDBC URL shown in an error.
func redactURL(raw string) string {
	base, query, ok := strings.Cut(raw, "?")
	if !ok {
		return raw
	}
	var kept []string
	for _, kv := range strings.Split(query, "&") {
		if k, _, _ := strings.Cut(kv, "="); k == "password" {
			kv = "password=[hidden]"
		}
		kept = append(kept, kv)
	}
	return base + "?" + strings.Join(kept, "&")
}

// dialDB opens a connection, trying connection.attempts times connection.backoff.ms apart. A
// rejected login or a missing database is not retried: waiting does not fix them.
func dialDB(cfg sdk.Config) (*pgx.Conn, error) {
	pc, err := pgConfig(cfg)
	if err != nil {
		return nil, err
	}
	attempts, err := cfg.Int("connection.attempts", 3)
	if err != nil {
		return nil, err
	}
	backoff, err := cfg.Int64("connection.backoff.ms", 10000)
	if err != nil {
		return nil, err
	}
	where := fmt.Sprintf("%s:%d/%s", pc.Host, pc.Port, pc.Database)
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), pc.ConnectTimeout)
		conn, err := pgx.ConnectConfig(ctx, pc)
		cancel()
		if err == nil {
			return conn, nil
		}
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			switch {
			case pe.Code == "28P01" || pe.Code == "28000":
				return nil, fmt.Errorf("PostgreSQL at %s rejected connection.user %q (connection.user and connection.password): %s (SQLSTATE %s)",
					where, pc.User, pe.Message, pe.Code)
			case pe.Code == "3D000":
				return nil, fmt.Errorf("connection.url %s: %s (SQLSTATE %s)", redactURL(cfg["connection.url"]), pe.Message, pe.Code)
			}
		}
		if attempt >= attempts {
			return nil, fmt.Errorf("cannot connect to PostgreSQL at %s (connection.url %s) after %d attempt(s) (connection.attempts): %w",
				where, redactURL(cfg["connection.url"]), attempt, err)
		}
		sdk.Logf(sdk.LevelWarn, "connecting to PostgreSQL at %s failed (attempt %d of %d), retrying in %d ms: %v", where, attempt, attempts, backoff, err)
		time.Sleep(time.Duration(backoff) * time.Millisecond)
	}
}

// quoteIdent quotes a PostgreSQL identifier (quote.sql.identifiers=always).
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// tableID is a table as schema.name; an empty schema is the first of the search_path.
type tableID struct{ schema, name string }

func parseTableID(s string) tableID {
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		return tableID{schema: s[:i], name: s[i+1:]}
	}
	return tableID{name: s}
}

// quoted is the table's name in SQL.
func (t tableID) quoted() string {
	if t.schema == "" {
		return quoteIdent(t.name)
	}
	return quoteIdent(t.schema) + "." + quoteIdent(t.name)
}

// String is the name unquoted, as the Confluent connector writes it in source partitions.
func (t tableID) String() string {
	if t.schema == "" {
		return t.name
	}
	return t.schema + "." + t.name
}
