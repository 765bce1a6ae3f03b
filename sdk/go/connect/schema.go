package connect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Type is a Connect schema type, named as JsonConverter writes it.
type Type string

// Schema types.
const (
	TypeInt8    Type = "int8"
	TypeInt16   Type = "int16"
	TypeInt32   Type = "int32"
	TypeInt64   Type = "int64"
	TypeFloat32 Type = "float"
	TypeFloat64 Type = "double"
	TypeBoolean Type = "boolean"
	TypeString  Type = "string"
	TypeBytes   Type = "bytes"
	TypeArray   Type = "array"
	TypeMap     Type = "map"
	TypeStruct  Type = "struct"
)

// Names of Connect's logical types.
const (
	DecimalName   = "org.apache.kafka.connect.data.Decimal"
	DateName      = "org.apache.kafka.connect.data.Date"
	TimeName      = "org.apache.kafka.connect.data.Time"
	TimestampName = "org.apache.kafka.connect.data.Timestamp"
)

// IsPrimitive reports whether t is neither array, map nor struct.
func (t Type) IsPrimitive() bool { return t != TypeArray && t != TypeMap && t != TypeStruct }

// JavaName returns Kafka's Schema.Type name (INT32, FLOAT64, STRUCT...), as error messages write it.
func (t Type) JavaName() string {
	switch t {
	case TypeFloat32:
		return "FLOAT32"
	case TypeFloat64:
		return "FLOAT64"
	}
	return strings.ToUpper(string(t))
}

// Schema is a Connect schema.
type Schema struct {
	Type     Type
	Optional bool
	// Default is the default value as a Go value of this schema (see the package doc); nil: none.
	Default    any
	Name       string
	Version    *int
	Doc        string
	Parameters map[string]string
	Fields     []Field // struct
	Items      *Schema // array elements
	Keys       *Schema // map keys
	Values     *Schema // map values

	once sync.Once
	raw  []byte
	err  error
	idx  map[string]int
}

// Field is a field of a struct schema.
type Field struct {
	Name   string
	Schema *Schema
}

// Common schemas, as Kafka's Schema.*_SCHEMA constants.
var (
	Int8Schema            = &Schema{Type: TypeInt8}
	Int16Schema           = &Schema{Type: TypeInt16}
	Int32Schema           = &Schema{Type: TypeInt32}
	Int64Schema           = &Schema{Type: TypeInt64}
	Float32Schema         = &Schema{Type: TypeFloat32}
	Float64Schema         = &Schema{Type: TypeFloat64}
	BooleanSchema         = &Schema{Type: TypeBoolean}
	StringSchema          = &Schema{Type: TypeString}
	BytesSchema           = &Schema{Type: TypeBytes}
	OptionalInt8Schema    = &Schema{Type: TypeInt8, Optional: true}
	OptionalInt16Schema   = &Schema{Type: TypeInt16, Optional: true}
	OptionalInt32Schema   = &Schema{Type: TypeInt32, Optional: true}
	OptionalInt64Schema   = &Schema{Type: TypeInt64, Optional: true}
	OptionalFloat32Schema = &Schema{Type: TypeFloat32, Optional: true}
	OptionalFloat64Schema = &Schema{Type: TypeFloat64, Optional: true}
	OptionalBooleanSchema = &Schema{Type: TypeBoolean, Optional: true}
	OptionalStringSchema  = &Schema{Type: TypeString, Optional: true}
	OptionalBytesSchema   = &Schema{Type: TypeBytes, Optional: true}
)

// PrimitiveSchema returns the schema of primitive type t.
func PrimitiveSchema(t Type, optional bool) *Schema { return &Schema{Type: t, Optional: optional} }

// TimestampSchema returns the schema of Connect's Timestamp logical type.
func TimestampSchema(optional bool) *Schema {
	return &Schema{Type: TypeInt64, Name: TimestampName, Version: new(1), Optional: optional}
}

// DateSchema returns the schema of Connect's Date logical type.
func DateSchema(optional bool) *Schema {
	return &Schema{Type: TypeInt32, Name: DateName, Version: new(1), Optional: optional}
}

// TimeSchema returns the schema of Connect's Time logical type.
func TimeSchema(optional bool) *Schema {
	return &Schema{Type: TypeInt32, Name: TimeName, Version: new(1), Optional: optional}
}

// Clone returns a shallow copy of s that may be changed: Fields and Parameters are copied, nested
// schemas shared.
func (s *Schema) Clone() *Schema {
	c := &Schema{Type: s.Type, Optional: s.Optional, Default: s.Default, Name: s.Name, Version: s.Version,
		Doc: s.Doc, Fields: slices.Clone(s.Fields), Items: s.Items, Keys: s.Keys, Values: s.Values}
	if s.Parameters != nil {
		c.Parameters = make(map[string]string, len(s.Parameters))
		for k, v := range s.Parameters {
			c.Parameters[k] = v
		}
	}
	return c
}

// FieldIndex returns the index of the named field of a struct schema, or -1.
func (s *Schema) FieldIndex(name string) int {
	if s.idx == nil && len(s.Fields) > 8 {
		idx := make(map[string]int, len(s.Fields))
		for i, f := range s.Fields {
			idx[f.Name] = i
		}
		s.idx = idx
	}
	if s.idx != nil {
		if i, ok := s.idx[name]; ok {
			return i
		}
		return -1
	}
	for i := range s.Fields {
		if s.Fields[i].Name == name {
			return i
		}
	}
	return -1
}

// fieldIndexBytes is FieldIndex for a name given as bytes, without allocating.
func (s *Schema) fieldIndexBytes(name []byte) int {
	if s.idx == nil && len(s.Fields) > 8 {
		return s.FieldIndex(string(name))
	}
	if s.idx != nil {
		if i, ok := s.idx[string(name)]; ok {
			return i
		}
		return -1
	}
	for i := range s.Fields {
		if s.Fields[i].Name == string(name) {
			return i
		}
	}
	return -1
}

// Field returns the named field of a struct schema, or nil.
func (s *Schema) Field(name string) *Field {
	if i := s.FieldIndex(name); i >= 0 {
		return &s.Fields[i]
	}
	return nil
}

// String returns the schema's JSON.
func (s *Schema) String() string {
	b, err := s.JSON()
	if err != nil {
		return fmt.Sprintf("Schema{%s}", s.Type.JavaName())
	}
	return string(b)
}

// JSON returns the schema as JsonConverter writes it, compact:
// {"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}],"optional":false,"name":"x"}.
// The result is computed once and must not be changed.
func (s *Schema) JSON() ([]byte, error) {
	s.once.Do(func() {
		if s.raw == nil {
			s.raw, s.err = s.appendJSON(nil)
		}
	})
	return s.raw, s.err
}

func (s *Schema) appendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"type":`...)
	dst = AppendJSONString(dst, string(s.Type))
	var err error
	switch s.Type {
	case TypeArray:
		if s.Items == nil {
			return nil, fmt.Errorf("array schema without items")
		}
		dst = append(dst, `,"items":`...)
		if dst, err = s.Items.appendJSON(dst); err != nil {
			return nil, err
		}
	case TypeMap:
		if s.Keys == nil || s.Values == nil {
			return nil, fmt.Errorf("map schema without keys or values")
		}
		dst = append(dst, `,"keys":`...)
		if dst, err = s.Keys.appendJSON(dst); err != nil {
			return nil, err
		}
		dst = append(dst, `,"values":`...)
		if dst, err = s.Values.appendJSON(dst); err != nil {
			return nil, err
		}
	case TypeStruct:
		dst = append(dst, `,"fields":[`...)
		for i, f := range s.Fields {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = f.Schema.appendJSON(dst); err != nil {
				return nil, err
			}
			dst = append(dst[:len(dst)-1], `,"field":`...)
			dst = AppendJSONString(dst, f.Name)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"optional":`...)
	dst = strconv.AppendBool(dst, s.Optional)
	if s.Name != "" {
		dst = append(dst, `,"name":`...)
		dst = AppendJSONString(dst, s.Name)
	}
	if s.Version != nil {
		dst = append(dst, `,"version":`...)
		dst = strconv.AppendInt(dst, int64(*s.Version), 10)
	}
	if s.Doc != "" {
		dst = append(dst, `,"doc":`...)
		dst = AppendJSONString(dst, s.Doc)
	}
	if s.Parameters != nil {
		dst = append(dst, `,"parameters":{`...)
		keys := make([]string, 0, len(s.Parameters))
		for k := range s.Parameters {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendJSONString(dst, k)
			dst = append(dst, ':')
			dst = AppendJSONString(dst, s.Parameters[k])
		}
		dst = append(dst, '}')
	}
	if s.Default != nil {
		dst = append(dst, `,"default":`...)
		if dst, err = appendValue(dst, s, s.Default, "default"); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

// schemaCache maps schema JSON to parsed schemas, so that a batch of records with one schema parses
// it once and transformations can cache derived schemas by pointer.
var schemaCache struct {
	sync.Mutex
	m map[string]*Schema
}

const schemaCacheSize = 256

// ParseSchema parses a schema as JsonConverter writes it; the JSON null (or empty input) is no
// schema (nil). Equal JSON returns the same *Schema.
func ParseSchema(raw []byte) (*Schema, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	schemaCache.Lock()
	s, ok := schemaCache.m[string(raw)]
	schemaCache.Unlock()
	if ok {
		return s, nil
	}
	v, err := DecodeJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("invalid schema JSON: %w", err)
	}
	if v == nil {
		return nil, nil
	}
	if s, err = buildSchema(v); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) == nil {
		s.raw = buf.Bytes()
	}
	schemaCache.Lock()
	if schemaCache.m == nil || len(schemaCache.m) >= schemaCacheSize {
		schemaCache.m = map[string]*Schema{}
	}
	schemaCache.m[string(raw)] = s
	schemaCache.Unlock()
	return s, nil
}

// buildSchema follows JsonConverter.asConnectSchema, with its error messages.
func buildSchema(v any) (*Schema, error) {
	m, _ := v.(map[string]any)
	t, ok := m["type"].(string)
	if !ok {
		return nil, fmt.Errorf("Schema must contain 'type' field")
	}
	s := &Schema{Type: Type(t)}
	switch s.Type {
	case TypeBoolean, TypeInt8, TypeInt16, TypeInt32, TypeInt64, TypeFloat32, TypeFloat64, TypeBytes, TypeString:
	case TypeArray:
		if m["items"] == nil {
			return nil, fmt.Errorf("Array schema did not specify the element type")
		}
		items, err := buildSchema(m["items"])
		if err != nil {
			return nil, err
		}
		s.Items = items
	case TypeMap:
		if m["keys"] == nil {
			return nil, fmt.Errorf("Map schema did not specify the key type")
		}
		if m["values"] == nil {
			return nil, fmt.Errorf("Map schema did not specify the value type")
		}
		var err error
		if s.Keys, err = buildSchema(m["keys"]); err != nil {
			return nil, err
		}
		if s.Values, err = buildSchema(m["values"]); err != nil {
			return nil, err
		}
	case TypeStruct:
		fields, ok := m["fields"].([]any)
		if !ok {
			return nil, fmt.Errorf(`Struct schema's "fields" argument is not an array.`)
		}
		// Duplicates are found with a set of its own: FieldIndex would build the schema's name index
		// from the fields read so far, and the fields after them would never be found.
		seen := make(map[string]bool, len(fields))
		for _, f := range fields {
			fm, _ := f.(map[string]any)
			name, ok := fm["field"].(string)
			if !ok {
				return nil, fmt.Errorf("Struct schema's field name not specified properly")
			}
			if seen[name] {
				return nil, fmt.Errorf("Cannot create field because of field name duplication %s", name)
			}
			seen[name] = true
			fs, err := buildSchema(fm)
			if err != nil {
				return nil, err
			}
			s.Fields = append(s.Fields, Field{Name: name, Schema: fs})
		}
	default:
		return nil, fmt.Errorf("Unknown schema type: %s", t)
	}
	s.Optional = m["optional"] == true
	s.Name, _ = m["name"].(string)
	s.Doc, _ = m["doc"].(string)
	if n, ok := m["version"].(json.Number); ok {
		if v, err := n.Int64(); err == nil {
			s.Version = new(int(v))
		}
	}
	if p, ok := m["parameters"].(map[string]any); ok {
		s.Parameters = make(map[string]string, len(p))
		for k, pv := range p {
			str, ok := pv.(string)
			if !ok {
				return nil, fmt.Errorf("Schema parameters must have string values.")
			}
			s.Parameters[k] = str
		}
	}
	if s.Name == DecimalName && s.Type == TypeBytes {
		if _, err := strconv.Atoi(s.Parameters["scale"]); err != nil {
			return nil, fmt.Errorf("Invalid Decimal schema: scale parameter not found.")
		}
	}
	if d, ok := m["default"]; ok && d != nil {
		// The default is read as a payload of its schema is, by the one parser.
		raw, err := json.Marshal(d)
		if err != nil {
			return nil, fmt.Errorf("Invalid default value: %w", err)
		}
		def, _, err := ReadPayload(s, raw, PayloadOptions{Root: "default"})
		if err != nil {
			return nil, fmt.Errorf("Invalid default value: %w", err)
		}
		s.Default = def
	}
	return s, nil
}
