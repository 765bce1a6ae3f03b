package connect

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"time"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// Struct is a value of a struct schema: one value per field, in the schema's order.
type Struct struct {
	schema *Schema
	values []any
}

// NewStruct returns a struct of schema s with all fields null.
func NewStruct(s *Schema) *Struct {
	return &Struct{schema: s, values: make([]any, len(s.Fields))}
}

// Schema returns the struct's schema.
func (s *Struct) Schema() *Schema { return s.schema }

// Get returns the value of the named field; an unknown field is an error worded as Kafka's.
func (s *Struct) Get(field string) (any, error) {
	i := s.schema.FieldIndex(field)
	if i < 0 {
		return nil, fmt.Errorf("%s is not a valid field name", field)
	}
	return s.values[i], nil
}

// GetAt returns the value of field i.
func (s *Struct) GetAt(i int) any { return s.values[i] }

// Put sets the named field; an unknown field is an error.
func (s *Struct) Put(field string, v any) error {
	i := s.schema.FieldIndex(field)
	if i < 0 {
		return fmt.Errorf("%s is not a valid field name", field)
	}
	s.values[i] = v
	return nil
}

// PutAt sets field i.
func (s *Struct) PutAt(i int, v any) { s.values[i] = v }

// MapEntry is one entry of a map whose keys are not strings.
type MapEntry struct {
	Key, Value any
}

// IsNull reports whether d is a null: the null tag, or a JSON payload null (with or without a
// schema), as Kafka's record.value() == null.
func IsNull(d wire.Data) bool {
	if d.Tag == wire.TagNull {
		return true
	}
	if d.Tag != wire.TagJSON {
		return false
	}
	b := d.Bytes
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return len(b) == 0 || string(b) == "null"
}

// Decode returns the schema (nil: schemaless) and Go value of a key, value or header value. A
// TagString is a string with the string schema, a TagBytes bytes with the optional bytes schema,
// a TagNull nil with no schema.
func Decode(d wire.Data) (*Schema, any, error) { return decode(d, false) }

// DecodeKeepNulls is Decode that leaves nulls null where the schema has a default, as Kafka's
// transformations read values with replace.null.with.default=false (Struct.getWithoutDefault).
func DecodeKeepNulls(d wire.Data) (*Schema, any, error) { return decode(d, true) }

func decode(d wire.Data, keepNull bool) (*Schema, any, error) {
	switch d.Tag {
	case wire.TagNull:
		return nil, nil, nil
	case wire.TagString:
		return StringSchema, string(d.Bytes), nil
	case wire.TagBytes:
		return OptionalBytesSchema, d.Bytes, nil
	case wire.TagJSON:
		s, err := ParseSchema(d.Schema)
		if err != nil {
			return nil, nil, err
		}
		v, _, err := ReadPayload(s, d.Bytes, PayloadOptions{KeepNulls: keepNull})
		if err != nil {
			return nil, nil, err
		}
		return s, v, nil
	}
	return nil, nil, fmt.Errorf("unknown data tag %d", d.Tag)
}

// Encode returns the Data of a value with schema s (nil: schemaless). A non-null string with the
// plain string schema becomes a TagString, bytes with the optional bytes schema a TagBytes, nil
// without a schema the null, and everything else a TagJSON (a nil with a schema: the payload null).
func Encode(s *Schema, v any) (wire.Data, error) {
	if s == nil {
		if v == nil {
			return wire.Null(), nil
		}
		b, err := appendValue(nil, nil, v, "")
		if err != nil {
			return wire.Data{}, err
		}
		return wire.JSON(nil, b), nil
	}
	if v == nil {
		// A null with a schema keeps its schema, as JsonConverter writes {"schema":...,"payload":null};
		// a required schema with a null value is the converter's to reject, as in Kafka.
		raw, err := s.JSON()
		if err != nil {
			return wire.Data{}, err
		}
		return wire.JSON(raw, []byte("null")), nil
	}
	if sv, ok := v.(string); ok && isPlain(s, TypeString, false) {
		return wire.String(sv), nil
	}
	if bv, ok := v.([]byte); ok && isPlain(s, TypeBytes, true) {
		return wire.Bytes(bv), nil
	}
	raw, err := s.JSON()
	if err != nil {
		return wire.Data{}, err
	}
	b, err := appendValue(make([]byte, 0, 256), s, v, "")
	if err != nil {
		return wire.Data{}, err
	}
	return wire.JSON(raw, b), nil
}

// AppendJSON appends the JSON of v with schema s (nil: schemaless), as JsonConverter writes it: a
// payload without the schema. Encode is AppendJSON with the schema's JSON.
func AppendJSON(dst []byte, s *Schema, v any) ([]byte, error) { return appendValue(dst, s, v, "") }

// AppendPayload is AppendJSON with JsonConverter's settings: a Decimal is written as a number
// with o.DecimalNumeric. The other options are ReadPayload's.
func AppendPayload(dst []byte, s *Schema, v any, o PayloadOptions) ([]byte, error) {
	return encoder{decimalNumeric: o.DecimalNumeric}.value(dst, s, v, "")
}

// AppendFieldJSON is AppendJSON for the value of a struct field; errors name the field.
func AppendFieldJSON(dst []byte, field string, s *Schema, v any) ([]byte, error) {
	return appendValue(dst, s, v, field)
}

func isPlain(s *Schema, t Type, optional bool) bool {
	return s.Type == t && s.Optional == optional && s.Name == "" && s.Version == nil && s.Doc == "" &&
		s.Parameters == nil && s.Default == nil
}

// goType names the Go type of v for an error message, as Kafka names the Java class.
func goType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case json.Number:
		return "number"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return fmt.Sprintf("%T", v)
}

func intBits(t Type) int {
	switch t {
	case TypeInt8:
		return 8
	case TypeInt16:
		return 16
	case TypeInt32:
		return 32
	}
	return 64
}

// appendValue appends the JSON of v with schema s (nil: schemaless), as JsonConverter writes it.
func appendValue(dst []byte, s *Schema, v any, where string) ([]byte, error) {
	return encoder{}.value(dst, s, v, where)
}

// encoder writes values as JsonConverter does with its settings.
type encoder struct {
	decimalNumeric bool // decimal.format=NUMERIC
}

func (enc encoder) value(dst []byte, s *Schema, v any, where string) ([]byte, error) {
	if v == nil {
		if s != nil && !s.Optional {
			if s.Default != nil {
				return enc.value(dst, s, s.Default, where)
			}
			if where != "" {
				return nil, fmt.Errorf("Invalid value: null used for required field: %q, schema type: %s", where, s.Type.JavaName())
			}
			return nil, fmt.Errorf("Conversion error: null value for field that is required and has no default value")
		}
		return append(dst, "null"...), nil
	}
	if s == nil {
		return appendSchemaless(dst, v)
	}
	bad := func() ([]byte, error) {
		if where != "" {
			return nil, fmt.Errorf("Invalid Java object for schema with type %s: %s for field: %q", s.Type.JavaName(), goType(v), where)
		}
		return nil, fmt.Errorf("Invalid Java object for schema with type %s: %s", s.Type.JavaName(), goType(v))
	}
	switch s.Type {
	case TypeBoolean:
		b, ok := v.(bool)
		if !ok {
			return bad()
		}
		return strconv.AppendBool(dst, b), nil
	case TypeInt8, TypeInt16, TypeInt32, TypeInt64:
		if t, ok := v.(time.Time); ok {
			switch s.Name {
			case DateName:
				return strconv.AppendInt(dst, floorDiv(t.UnixMilli(), 86400000), 10), nil
			case TimeName:
				ms := t.UnixMilli() % 86400000
				if ms < 0 {
					ms += 86400000
				}
				return strconv.AppendInt(dst, ms, 10), nil
			case TimestampName:
				return strconv.AppendInt(dst, t.UnixMilli(), 10), nil
			}
			return bad()
		}
		n, ok := asInt64(v)
		if !ok {
			return bad()
		}
		return strconv.AppendInt(dst, n, 10), nil
	case TypeFloat32, TypeFloat64:
		var f float64
		switch x := v.(type) {
		case float32:
			return appendFloat(dst, float64(x), 32), nil
		case float64:
			f = x
		default:
			n, ok := asInt64(v)
			if !ok {
				return bad()
			}
			f = float64(n)
		}
		return appendFloat(dst, f, 64), nil
	case TypeString:
		str, ok := v.(string)
		if !ok {
			return bad()
		}
		return AppendJSONString(dst, str), nil
	case TypeBytes:
		if r, ok := v.(*big.Rat); ok && s.Name == DecimalName {
			if enc.decimalNumeric {
				num, err := decimalText(r, decimalScale(s))
				if err != nil {
					return nil, err
				}
				return append(dst, num...), nil
			}
			b, err := decimalBytes(r, decimalScale(s))
			if err != nil {
				return nil, err
			}
			v = b
		}
		b, ok := v.([]byte)
		if !ok {
			return bad()
		}
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, b)
		return append(dst, '"'), nil
	case TypeArray:
		a, ok := v.([]any)
		if !ok {
			return bad()
		}
		dst = append(dst, '[')
		for i, e := range a {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = enc.value(dst, s.Items, e, where); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case TypeMap:
		var err error
		switch m := v.(type) {
		case map[string]any:
			if s.Keys.Type != TypeString {
				return bad()
			}
			dst = append(dst, '{')
			for i, k := range sortedKeys(m) {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = AppendJSONString(dst, k)
				dst = append(dst, ':')
				if dst, err = enc.value(dst, s.Values, m[k], where); err != nil {
					return nil, err
				}
			}
			return append(dst, '}'), nil
		case []MapEntry:
			obj := s.Keys.Type == TypeString
			if obj {
				dst = append(dst, '{')
			} else {
				dst = append(dst, '[')
			}
			for i, e := range m {
				if i > 0 {
					dst = append(dst, ',')
				}
				if !obj {
					dst = append(dst, '[')
				}
				if dst, err = enc.value(dst, s.Keys, e.Key, where); err != nil {
					return nil, err
				}
				if obj {
					dst = append(dst, ':')
				} else {
					dst = append(dst, ',')
				}
				if dst, err = enc.value(dst, s.Values, e.Value, where); err != nil {
					return nil, err
				}
				if !obj {
					dst = append(dst, ']')
				}
			}
			if obj {
				return append(dst, '}'), nil
			}
			return append(dst, ']'), nil
		}
		return bad()
	case TypeStruct:
		st, ok := v.(*Struct)
		if !ok {
			return bad()
		}
		if st.schema != s && !sameSchema(st.schema, s) {
			return nil, fmt.Errorf("Mismatching schema.")
		}
		dst = append(dst, '{')
		for i, f := range s.Fields {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendJSONString(dst, f.Name)
			dst = append(dst, ':')
			var err error
			if dst, err = enc.value(dst, f.Schema, st.values[i], f.Name); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	}
	return nil, fmt.Errorf("unknown schema type %q", s.Type)
}

// sameSchema compares two schemas by their JSON.
func sameSchema(a, b *Schema) bool {
	ja, erra := a.JSON()
	jb, errb := b.JSON()
	return erra == nil && errb == nil && bytes.Equal(ja, jb)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func asInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case int:
		return int64(x), true
	}
	return 0, false
}

func appendFloat(dst []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		// Jackson writes NaN and Infinity as strings in JSON.
		return AppendJSONString(dst, strconv.FormatFloat(f, 'g', -1, bits))
	}
	b := strconv.AppendFloat(dst, f, 'g', -1, bits)
	// Java writes doubles with a fraction or exponent (1.0, 1.0E10); keep a fraction for whole numbers
	// so that the value reads back as a floating point number.
	tail := b[len(dst):]
	if bytes.IndexAny(tail, ".eE") < 0 {
		b = append(b, ".0"...)
	}
	return b
}

func appendSchemaless(dst []byte, v any) ([]byte, error) {
	var err error
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case int8, int16, int32, int64, int:
		n, _ := asInt64(v)
		return strconv.AppendInt(dst, n, 10), nil
	case float32:
		return appendFloat(dst, float64(x), 32), nil
	case float64:
		return appendFloat(dst, x, 64), nil
	case string:
		return AppendJSONString(dst, x), nil
	case []byte:
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, x)
		return append(dst, '"'), nil
	case time.Time:
		return strconv.AppendInt(dst, x.UnixMilli(), 10), nil
	case *big.Rat:
		return append(dst, x.FloatString(ratScale(x))...), nil
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendSchemaless(dst, e); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case map[string]any:
		dst = append(dst, '{')
		for i, k := range sortedKeys(x) {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendJSONString(dst, k)
			dst = append(dst, ':')
			if dst, err = appendSchemaless(dst, x[k]); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	case []MapEntry:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '[')
			if dst, err = appendSchemaless(dst, e.Key); err != nil {
				return nil, err
			}
			dst = append(dst, ',')
			if dst, err = appendSchemaless(dst, e.Value); err != nil {
				return nil, err
			}
			dst = append(dst, ']')
		}
		return append(dst, ']'), nil
	case *Struct:
		return appendValue(dst, x.schema, x, "")
	case json.Number:
		return append(dst, x...), nil
	}
	return nil, fmt.Errorf("Java class %s does not have corresponding schema type.", goType(v))
}

// ratScale returns the number of decimal places needed to write r exactly (at most 38).
func ratScale(r *big.Rat) int {
	for sc := 0; sc < 38; sc++ {
		m := new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(sc)), nil)))
		if m.IsInt() {
			return sc
		}
	}
	return 38
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
