package main

import (
	"context"
	"fmt"
	"strings"

	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
)

// tableInfo is a table's columns as the database has them.
type tableInfo struct {
	cols  map[string]dbColumn
	lower map[string]string // lower-cased name -> name, for names that are unique that way
}

type dbColumn struct {
	name    string
	oid     uint32
	notNull bool
}

// column finds a field's column: by its exact name, else case-insensitively, as the Confluent
// connector matches fields to columns. The caller has checked that it exists.
func (ti *tableInfo) column(field string) dbColumn {
	if c, ok := ti.cols[field]; ok {
		return c
	}
	return ti.cols[ti.lower[strings.ToLower(field)]]
}

func (ti *tableInfo) has(field string) bool {
	if _, ok := ti.cols[field]; ok {
		return true
	}
	_, ok := ti.lower[strings.ToLower(field)]
	return ok
}

// describeTable reads a table's columns; nil when there is no such table.
func (t *sinkTask) describeTable(table tableID) (*tableInfo, error) {
	rows, err := t.conn.Query(context.Background(),
		`SELECT a.attname, a.atttypid, a.attnotnull FROM pg_attribute a
		 WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
		table.quoted())
	if err != nil {
		return nil, fmt.Errorf("reading the columns of table %s: %w", table.quoted(), err)
	}
	defer rows.Close()
	ti := &tableInfo{cols: map[string]dbColumn{}, lower: map[string]string{}}
	dup := map[string]bool{}
	for rows.Next() {
		var c dbColumn
		if err := rows.Scan(&c.name, &c.oid, &c.notNull); err != nil {
			return nil, err
		}
		ti.cols[c.name] = c
		l := strings.ToLower(c.name)
		if _, ok := ti.lower[l]; ok {
			dup[l] = true
		}
		ti.lower[l] = c.name
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the columns of table %s: %w", table.quoted(), err)
	}
	for l := range dup {
		delete(ti.lower, l)
	}
	if len(ti.cols) == 0 {
		return nil, nil
	}
	return ti, nil
}

// ensureTable makes sure a plan's table exists with a column for each of its fields: it creates the
// table (auto.create) or adds the missing columns (auto.evolve), or fails naming what is missing
// and the setting that would fix it.
func (t *sinkTask) ensureTable(p *plan) error {
	ti := t.tables[p.table]
	if ti == nil || !hasAll(ti, p) {
		var err error
		if ti, err = t.describeTable(p.table); err != nil {
			return err
		}
	}
	if ti == nil {
		if !t.s.autoCreate {
			return final(fmt.Errorf("table %s does not exist, and auto.create is false: create it, or set auto.create=true", p.table.quoted()))
		}
		sql, err := createTableSQL(p)
		if err != nil {
			return final(fmt.Errorf("auto.create of table %s: %w", p.table.quoted(), err))
		}
		t.ctx.Logf(sdk.LevelInfo, "auto.create: %s", sql)
		if err := t.exec(sql); err != nil {
			return err
		}
		if ti, err = t.describeTable(p.table); err != nil {
			return err
		}
		if ti == nil {
			return fmt.Errorf("table %s is still missing after CREATE TABLE", p.table.quoted())
		}
	}
	var missing []column
	for _, c := range p.ordered {
		if !ti.has(c.name) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		names := make([]string, len(missing))
		for i, c := range missing {
			names[i] = c.name
		}
		if !t.s.autoEvolve {
			return final(fmt.Errorf("table %s has no column for the fields %s of the records, and auto.evolve is false: add the columns, or set auto.evolve=true",
				p.table.quoted(), strings.Join(names, ", ")))
		}
		var adds []string
		for _, c := range missing {
			if !c.schema.Optional && c.schema.Default == nil {
				return final(fmt.Errorf("table %s: cannot add a column for field %q (auto.evolve): the field is neither optional nor has a default value", p.table.quoted(), c.name))
			}
			def, err := columnSQL(c, false)
			if err != nil {
				return final(err)
			}
			adds = append(adds, "ADD COLUMN IF NOT EXISTS "+def)
		}
		t.ctx.Logf(sdk.LevelInfo, "auto.evolve: adding the columns %s to table %s", strings.Join(names, ", "), p.table.quoted())
		if err := t.exec("ALTER TABLE " + p.table.quoted() + " " + strings.Join(adds, ", ")); err != nil {
			return err
		}
		var err error
		if ti, err = t.describeTable(p.table); err != nil {
			return err
		}
	}
	t.tables[p.table] = ti
	return nil
}

func hasAll(ti *tableInfo, p *plan) bool {
	for _, c := range p.ordered {
		if !ti.has(c.name) {
			return false
		}
	}
	return true
}

func (t *sinkTask) exec(sql string) error {
	if _, err := t.conn.Exec(context.Background(), sql); err != nil {
		return classify(fmt.Errorf("%s: %w", sql, err))
	}
	return nil
}

// createTableSQL is the plan's CREATE TABLE: its columns in the Confluent connector's order, NOT NULL
// for required fields, and the keys as the primary key.
func createTableSQL(p *plan) (string, error) {
	var defs []string
	for _, c := range p.ordered {
		d, err := columnSQL(c, true)
		if err != nil {
			return "", err
		}
		defs = append(defs, d)
	}
	if len(p.keys) > 0 {
		keys := make([]string, len(p.keys))
		for i, k := range p.keys {
			keys[i] = quoteIdent(k.name)
		}
		defs = append(defs, "PRIMARY KEY("+strings.Join(keys, ",")+")")
	}
	return "CREATE TABLE IF NOT EXISTS " + p.table.quoted() + " (" + strings.Join(defs, ", ") + ")", nil
}

// columnSQL is a column definition: name, type, NOT NULL when the field is required (and create
// is true: a column added to a table with rows must allow NULL), and the field's default.
func columnSQL(c column, create bool) (string, error) {
	typ, err := sqlType(c.schema)
	if err != nil {
		return "", fmt.Errorf("field %q: %w", c.name, err)
	}
	d := quoteIdent(c.name) + " " + typ
	if c.schema.Default != nil {
		lit, err := sqlLiteral(c.schema, c.schema.Default)
		if err != nil {
			return "", fmt.Errorf("field %q: default: %w", c.name, err)
		}
		d += " DEFAULT " + lit
	}
	if create && !c.schema.Optional {
		d += " NOT NULL"
	}
	return d, nil
}
