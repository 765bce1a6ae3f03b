package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wasmconnect/wasmconnect/sdk/go/connect"
)

// The columns of pk.mode=kafka, as the Confluent connector names them.
var kafkaPKNames = []string{"__connect_topic", "__connect_partition", "__connect_offset"}

// Where a column's value comes from in a record.
type source int

const (
	fromTopic source = iota
	fromPartition
	fromOffset
	fromKey      // the whole (primitive) key
	fromKeyField // field index of the key struct
	fromValueField
)

// column is one column a plan writes.
type column struct {
	name   string
	schema *connect.Schema
	from   source
	index  int // the field's index in the key or value struct
}

// plan is how records with one key schema and one value schema are written to one table: the
// Confluent connector's FieldsMetadata. Keys are the primary key columns, values the others.
type plan struct {
	table  tableID
	keys   []column
	values []column
	// ordered is every column in the Confluent connector's CREATE TABLE order: the kafka columns,
	// then the value's fields in their order, then any other (key) columns by name.
	ordered []column
}

// newPlan derives the plan of a record's key and value schemas (value nil: a tombstone) under the
// sink's pk.mode, pk.fields and fields.whitelist; the errors are worded as the Confluent
// connector's.
func (s *sinkSettings) newPlan(table tableID, keySchema, valueSchema *connect.Schema) (*plan, error) {
	if valueSchema != nil && valueSchema.Type != connect.TypeStruct {
		return nil, fmt.Errorf("table %s: the value schema must be a Struct, not %s", table, describe(valueSchema))
	}
	p := &plan{table: table}
	keyNames := map[string]bool{}
	addKey := func(c column) { p.keys = append(p.keys, c); keyNames[c.name] = true }
	switch s.pkMode {
	case "kafka":
		names := kafkaPKNames
		if len(s.pkFields) == 3 {
			names = s.pkFields
		} else if len(s.pkFields) != 0 {
			return nil, fmt.Errorf("table %s: pk.mode=kafka takes no pk.fields (then %s) or exactly 3, not %v", table, strings.Join(kafkaPKNames, ","), s.pkFields)
		}
		addKey(column{name: names[0], schema: connect.StringSchema, from: fromTopic})
		addKey(column{name: names[1], schema: connect.Int32Schema, from: fromPartition})
		addKey(column{name: names[2], schema: connect.Int64Schema, from: fromOffset})
	case "record_key":
		if keySchema == nil {
			return nil, fmt.Errorf("table %s: pk.mode=record_key, but the record key has no schema", table)
		}
		switch {
		case keySchema.Type.IsPrimitive():
			if len(s.pkFields) != 1 {
				return nil, fmt.Errorf("table %s: the record key is a primitive (%s), so pk.fields must name exactly one column, not %v", table, describe(keySchema), s.pkFields)
			}
			addKey(column{name: s.pkFields[0], schema: keySchema, from: fromKey})
		case keySchema.Type == connect.TypeStruct:
			names := s.pkFields
			if len(names) == 0 {
				for _, f := range keySchema.Fields {
					names = append(names, f.Name)
				}
			}
			for _, n := range names {
				i := keySchema.FieldIndex(n)
				if i < 0 {
					return nil, fmt.Errorf("table %s: pk.fields %v names %q, which the record key's schema lacks", table, s.pkFields, n)
				}
				addKey(column{name: n, schema: keySchema.Fields[i].Schema, from: fromKeyField, index: i})
			}
		default:
			return nil, fmt.Errorf("table %s: the key schema must be a primitive or a Struct for pk.mode=record_key, not %s", table, describe(keySchema))
		}
	case "record_value":
		if valueSchema == nil {
			return nil, fmt.Errorf("table %s: pk.mode=record_value, but the record value has no schema", table)
		}
		names := s.pkFields
		if len(names) == 0 {
			for _, f := range valueSchema.Fields {
				names = append(names, f.Name)
			}
		}
		for _, n := range names {
			i := valueSchema.FieldIndex(n)
			if i < 0 {
				return nil, fmt.Errorf("table %s: pk.fields %v names %q, which the record value's schema lacks", table, s.pkFields, n)
			}
			addKey(column{name: n, schema: valueSchema.Fields[i].Schema, from: fromValueField, index: i})
		}
	}
	if valueSchema != nil {
		for i, f := range valueSchema.Fields {
			if keyNames[f.Name] || (len(s.whitelist) > 0 && !s.whitelist[f.Name]) {
				continue
			}
			p.values = append(p.values, column{name: f.Name, schema: f.Schema, from: fromValueField, index: i})
		}
	}
	if len(p.keys)+len(p.values) == 0 {
		return nil, fmt.Errorf("table %s: no fields to write in the key and value schemas", table)
	}
	all := append(slices.Clone(p.keys), p.values...)
	done := map[string]bool{}
	take := func(name string) {
		for _, c := range all {
			if c.name == name && !done[name] {
				p.ordered, done[name] = append(p.ordered, c), true
			}
		}
	}
	for _, n := range kafkaPKNames {
		take(n)
	}
	if valueSchema != nil {
		for _, f := range valueSchema.Fields {
			take(f.Name)
		}
	}
	var rest []string
	for _, c := range all {
		if !done[c.name] {
			rest = append(rest, c.name)
		}
	}
	slices.Sort(rest)
	for _, n := range rest {
		take(n)
	}
	return p, nil
}

// columns are the plan's columns as written: keys, then values.
func (p *plan) columns() []column { return append(slices.Clone(p.keys), p.values...) }
