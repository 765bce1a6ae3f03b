package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// loadTables reads the captured tables' columns and primary keys from the catalog. A table without
// a primary key whose REPLICA IDENTITY is DEFAULT (or NOTHING) is refused: PostgreSQL itself refuses
// its updates and deletes once it is in a publication, and its events could name no row.
func loadTables(ctx context.Context, conn *pgx.Conn, s *settings) ([]*table, error) {
	rows, err := conn.Query(ctx, `SELECT n.nspname, c.relname, c.relreplident,
			a.attname, a.atttypid, a.atttypmod, NOT a.attnotnull,
			COALESCE((SELECT k.n FROM unnest(i.indkey::int2[]) WITH ORDINALITY k(att, n) WHERE k.att = a.attnum), 0)::int
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		LEFT JOIN pg_index i ON i.indrelid = c.oid AND i.indisprimary
		WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
			AND n.nspname NOT LIKE 'pg\_%'
		ORDER BY n.nspname, c.relname, a.attnum`)
	if err != nil {
		return nil, fmt.Errorf("reading the tables from the catalog: %w", err)
	}
	type pending struct {
		schema, name string
		ident        byte
		cols         []column
		keyPos       []int // position in the key (1-based) per column, 0 none
	}
	var all []*pending
	for rows.Next() {
		var schema, name, attname string
		var ident byte
		var oid uint32
		var typmod int32
		var optional bool
		var keyPos int
		if err := rows.Scan(&schema, &name, &ident, &attname, &oid, &typmod, &optional, &keyPos); err != nil {
			rows.Close()
			return nil, fmt.Errorf("reading the tables from the catalog: %w", err)
		}
		if !s.captures(schema, name) {
			continue
		}
		if len(all) == 0 || all[len(all)-1].schema != schema || all[len(all)-1].name != name {
			all = append(all, &pending{schema: schema, name: name, ident: ident})
		}
		p := all[len(all)-1]
		p.cols = append(p.cols, newColumn(attname, oid, typmod, optional, keyPos > 0, s))
		p.keyPos = append(p.keyPos, keyPos)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the tables from the catalog: %w", err)
	}
	var out []*table
	var keyless []string
	for _, p := range all {
		var keyCols []int
		for pos := 1; ; pos++ {
			i := indexOf(p.keyPos, pos)
			if i < 0 {
				break
			}
			keyCols = append(keyCols, i)
		}
		if len(keyCols) == 0 && p.ident != 'f' && p.ident != 'i' {
			keyless = append(keyless, fmt.Sprintf("%s.%s", p.schema, p.name))
		}
		out = append(out, newTable(s, p.schema, p.name, p.cols, keyCols))
	}
	if len(keyless) > 0 {
		return nil, fmt.Errorf("table(s) %s have no primary key and REPLICA IDENTITY DEFAULT: PostgreSQL refuses their UPDATEs and DELETEs "+
			"once they are published, and their change events could not name the row. Add a primary key, or run "+
			"ALTER TABLE ... REPLICA IDENTITY FULL (the whole old row is then logged), or leave them out with table.exclude.list",
			strings.Join(keyless, ", "))
	}
	return out, nil
}

func indexOf(xs []int, v int) int {
	for i, x := range xs {
		if x == v {
			return i
		}
	}
	return -1
}

// quoteIdent quotes a PostgreSQL identifier.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func (t *table) quoted() string { return quoteIdent(t.schema) + "." + quoteIdent(t.name) }

// checkServer fails with what to change when the server cannot stream logical changes to this
// user: wal_level below logical, or a user without REPLICATION.
func checkServer(ctx context.Context, conn *pgx.Conn, user, where string) error {
	var walLevel string
	if err := conn.QueryRow(ctx, "SHOW wal_level").Scan(&walLevel); err != nil {
		return fmt.Errorf("SHOW wal_level: %w", err)
	}
	if walLevel != "logical" {
		return fmt.Errorf("PostgreSQL at %s has wal_level=%s; change data capture needs wal_level=logical "+
			"(set it in postgresql.conf or with ALTER SYSTEM SET wal_level = logical, then restart the server)", where, walLevel)
	}
	var canReplicate bool
	if err := conn.QueryRow(ctx, "SELECT rolreplication OR rolsuper FROM pg_roles WHERE rolname = current_user").Scan(&canReplicate); err != nil {
		return fmt.Errorf("reading the REPLICATION attribute of database.user: %w", err)
	}
	if !canReplicate {
		return fmt.Errorf("database.user %q has no replication permission on %s: logical replication needs a role with the REPLICATION attribute "+
			"(ALTER ROLE %s REPLICATION) or a superuser", user, where, quoteIdent(user))
	}
	return nil
}

// ensurePublication creates or updates publication.name as publication.autocreate.mode says.
func ensurePublication(ctx context.Context, conn *pgx.Conn, s *settings, tables []*table) error {
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = $1)", s.publication).Scan(&exists); err != nil {
		return fmt.Errorf("reading publication %q: %w", s.publication, err)
	}
	var list []string
	for _, t := range tables {
		list = append(list, t.quoted())
	}
	var sql string
	switch {
	case s.pubMode == "disabled" && !exists:
		return fmt.Errorf("publication.name %q does not exist and publication.autocreate.mode=disabled: create it (CREATE PUBLICATION %s FOR TABLE ...)", s.publication, quoteIdent(s.publication))
	case s.pubMode == "all_tables" && !exists:
		sql = "CREATE PUBLICATION " + quoteIdent(s.publication) + " FOR ALL TABLES"
	case s.pubMode == "filtered" && len(list) == 0:
		return fmt.Errorf("publication.autocreate.mode=filtered, but table.include.list/table.exclude.list select no table")
	case s.pubMode == "filtered" && !exists:
		sql = "CREATE PUBLICATION " + quoteIdent(s.publication) + " FOR TABLE " + strings.Join(list, ", ")
	case s.pubMode == "filtered":
		sql = "ALTER PUBLICATION " + quoteIdent(s.publication) + " SET TABLE " + strings.Join(list, ", ")
	default:
		return nil
	}
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("%s (publication.autocreate.mode=%s): %w", sql, s.pubMode, err)
	}
	return nil
}
