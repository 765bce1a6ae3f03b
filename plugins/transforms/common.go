package main

import (
	"fmt"
	"math/big"
	"time"

	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
	"github.com/wasmconnect/wasmconnect/sdk/go/connect"
)

const (
	version = "1.0.0"
	pkg     = "org.apache.kafka.connect.transforms."
)

// info returns the descriptor entry of a transformation; variant is "", "Key" or "Value".
func info(name, variant string, cfg ...sdk.ConfigDef) sdk.Info {
	short := name
	if variant != "" {
		short += "$" + variant
	}
	return sdk.Info{Name: short, Class: pkg + short, Version: version, Config: cfg}
}

// kv registers the $Key and $Value variants of a transformation.
func kv(name string, newT func(key bool) sdk.Transformation, cfg ...sdk.ConfigDef) {
	sdk.RegisterTransformation(info(name, "Key", cfg...), func() sdk.Transformation { return newT(true) })
	sdk.RegisterTransformation(info(name, "Value", cfg...), func() sdk.Transformation { return newT(false) })
}

var replaceNullDef = sdk.ConfigDef{Name: "replace.null.with.default", Type: sdk.TypeBoolean, Default: new("true"), Importance: sdk.Medium,
	Documentation: "Whether to replace fields that have a default value and that are null to the default value. When set to true, the default value is used, otherwise null is used."}

// operand is the part of a record a $Key or $Value transformation works on.
type operand bool

func (key operand) get(r *sdk.Record) sdk.Data {
	if key {
		return r.Key
	}
	return r.Value
}

func (key operand) set(r *sdk.Record, d sdk.Data) {
	if key {
		r.Key = d
	} else {
		r.Value = d
	}
}

// isNull reports whether the operand is null (Kafka: operatingValue(record) == null).
func (key operand) isNull(r *sdk.Record) bool { return connect.IsNull(key.get(r)) }

// decode returns the schema and value of the operand, with defaults for nulls.
func (key operand) decode(r *sdk.Record) (*connect.Schema, any, error) {
	return connect.Decode(key.get(r))
}

// nullPolicy is replace.null.with.default: whether a null field with a default reads as the default.
type nullPolicy struct{ keep bool }

func (n *nullPolicy) configure(cfg sdk.Config) error {
	replace, err := cfg.Bool("replace.null.with.default", true)
	n.keep = !replace
	return err
}

func (n nullPolicy) decode(d sdk.Data) (*connect.Schema, any, error) {
	if n.keep {
		return connect.DecodeKeepNulls(d)
	}
	return connect.Decode(d)
}

// encode sets the operand from a schema and value.
func (key operand) encode(r *sdk.Record, s *connect.Schema, v any) error {
	d, err := connect.Encode(s, v)
	if err != nil {
		return sdk.DataError("%v", err)
	}
	key.set(r, d)
	return nil
}

// javaClass names the Java class Kafka would see for a Go value, for error messages.
func javaClass(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any, []connect.MapEntry:
		return "class java.util.HashMap"
	case []any:
		return "class java.util.ArrayList"
	case string:
		return "class java.lang.String"
	case bool:
		return "class java.lang.Boolean"
	case int8:
		return "class java.lang.Byte"
	case int16:
		return "class java.lang.Short"
	case int32:
		return "class java.lang.Integer"
	case int64:
		return "class java.lang.Long"
	case float32:
		return "class java.lang.Float"
	case float64:
		return "class java.lang.Double"
	case []byte:
		return "class [B"
	case *connect.Struct:
		return "class org.apache.kafka.connect.data.Struct"
	case time.Time:
		return "class java.util.Date"
	case *big.Rat:
		return "class java.math.BigDecimal"
	}
	return fmt.Sprintf("class %T", v)
}

func requireMap(v any, purpose string) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, sdk.DataError("Only Map objects supported in absence of schema for [%s], found: %s", purpose, classOrNull(v))
	}
	return m, nil
}

func requireMapOrNull(v any, purpose string) (map[string]any, error) {
	if v == nil {
		return nil, nil
	}
	return requireMap(v, purpose)
}

func requireStruct(v any, purpose string) (*connect.Struct, error) {
	s, ok := v.(*connect.Struct)
	if !ok {
		return nil, sdk.DataError("Only Struct objects supported for [%s], found: %s", purpose, classOrNull(v))
	}
	return s, nil
}

func requireStructOrNull(v any, purpose string) (*connect.Struct, error) {
	if v == nil {
		return nil, nil
	}
	return requireStruct(v, purpose)
}

func classOrNull(v any) string {
	c := javaClass(v)
	if len(c) > 6 && c[:6] == "class " {
		return c[6:]
	}
	return c
}

func requireSchema(s *connect.Schema, purpose string) error {
	if s == nil {
		return sdk.DataError("Schema required for [%s]", purpose)
	}
	return nil
}

// isSink reports whether r is a sink record (it has a Kafka offset).
func isSink(r *sdk.Record) bool { return r.Offset >= 0 }

// copyMap returns a copy of m.
func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+2)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// structBasics returns a struct schema with the name, version, doc and parameters of s (Kafka's
// SchemaUtil.copySchemaBasics onto SchemaBuilder.struct(): optionality and default are not copied).
func structBasics(s *connect.Schema) *connect.Schema {
	c := &connect.Schema{Type: connect.TypeStruct, Name: s.Name, Version: s.Version, Doc: s.Doc}
	if s.Parameters != nil {
		c.Parameters = make(map[string]string, len(s.Parameters))
		for k, v := range s.Parameters {
			c.Parameters[k] = v
		}
	}
	return c
}

// schemaCache caches a schema derived from another, by pointer (connect.ParseSchema returns the same
// pointer for the same schema JSON).
type schemaCache map[*connect.Schema]*connect.Schema

func (c *schemaCache) get(s *connect.Schema, build func(*connect.Schema) (*connect.Schema, error)) (*connect.Schema, error) {
	if *c == nil {
		*c = schemaCache{}
	}
	if u, ok := (*c)[s]; ok {
		return u, nil
	}
	u, err := build(s)
	if err != nil {
		return nil, err
	}
	if len(*c) > 64 {
		clear(*c)
	}
	(*c)[s] = u
	return u, nil
}

// listNonEmpty validates a LIST config that must not be empty.
func listNonEmpty(key string) func(string) error {
	return func(v string) error {
		if len(sdk.Config{key: v}.List(key, nil)) == 0 {
			return fmt.Errorf("Empty list")
		}
		return nil
	}
}

func nonEmptyString(v string) error {
	if v == "" {
		return fmt.Errorf("String must be non-empty")
	}
	return nil
}
