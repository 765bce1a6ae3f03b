package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
	"github.com/wasmconnect/wasmconnect/sdk/go/connect"
)

var jsonInfo = sdk.Info{
	Name:    "JsonConverter",
	Class:   "org.apache.kafka.connect.json.JsonConverter",
	Version: version,
	Config: []sdk.ConfigDef{
		{Name: "schemas.enable", Type: sdk.TypeBoolean, Default: new("true"), Importance: sdk.High, Group: "Schemas", Order: 0,
			Width: "MEDIUM", DisplayName: "Enable Schemas", Documentation: "Include schemas within each of the serialized values and keys."},
		{Name: "schemas.cache.size", Type: sdk.TypeInt, Default: new("1000"), Importance: sdk.High, Group: "Schemas", Order: 1,
			Width: "MEDIUM", DisplayName: "Schema Cache Size", Documentation: "The maximum number of schemas that can be cached in this converter instance."},
		{Name: "decimal.format", Default: new("BASE64"), Importance: sdk.Low, Group: "Schemas", Order: 2, Width: "MEDIUM",
			DisplayName: "Decimal Format", Validator: sdk.OneOfIgnoreCase("BASE64", "NUMERIC"),
			Documentation: "Controls which format this converter will serialize decimals in. This value is case insensitive and can be either 'BASE64' (default) or 'NUMERIC'"},
		{Name: "replace.null.with.default", Type: sdk.TypeBoolean, Default: new("true"), Importance: sdk.Low, Group: "Schemas", Order: 3,
			Width: "MEDIUM", DisplayName: "Replace null with default",
			Documentation: "Whether to replace fields that have a default value and that are null to the default value. When set to true, the default value is used, otherwise null is used."},
		converterTypeDef,
	},
}

var converterTypeDef = sdk.ConfigDef{Name: "converter.type", Importance: sdk.Low, Validator: sdk.OneOf("key", "value", "header"),
	Documentation: "How this converter will be used."}

// Schemas JsonConverter writes for string and bytes values.
var (
	stringSchema = []byte(`{"type":"string","optional":false}`)
	bytesSchema  = []byte(`{"type":"bytes","optional":true}`)
)

const envelopeError = `JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain additional fields.` +
	` If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter configuration.`

// jsonConverter is Kafka's org.apache.kafka.connect.json.JsonConverter.
//
// The Connect data model and the JSON-with-schema codec are the SDK's (sdk/go/connect); this
// type adds the envelope, the settings and a schema cache.
type jsonConverter struct {
	schemasEnable bool
	cacheSize     int
	cache         map[string]*connect.Schema
	replaceNull   bool // replace.null.with.default
	numeric       bool // decimal.format=NUMERIC
	buf           bytes.Buffer
	out           []byte // the last result: the SDK copies it before the next call
}

func (c *jsonConverter) Configure(cfg sdk.Config, isKey bool) error {
	var err error
	if c.schemasEnable, err = cfg.Bool("schemas.enable", true); err != nil {
		return err
	}
	if c.cacheSize, err = cfg.Int("schemas.cache.size", 1000); err != nil {
		return err
	}
	if c.replaceNull, err = cfg.Bool("replace.null.with.default", true); err != nil {
		return err
	}
	c.numeric = strings.EqualFold(cfg.String("decimal.format", "BASE64"), "NUMERIC")
	c.cache = map[string]*connect.Schema{}
	return nil
}

// schema returns the parsed schema for its JSON, from the cache when possible; nil for JSON null.
func (c *jsonConverter) schema(raw []byte) (*connect.Schema, error) {
	if s, ok := c.cache[string(raw)]; ok {
		return s, nil
	}
	s, err := connect.ParseSchema(raw)
	if err != nil {
		return nil, err
	}
	if c.cacheSize > 0 {
		if len(c.cache) >= c.cacheSize {
			clear(c.cache)
		}
		c.cache[string(raw)] = s
	}
	return s, nil
}

func (c *jsonConverter) FromConnect(topic string, v sdk.Data) ([]byte, error) {
	switch v.Tag {
	case sdk.TagNull:
		return nil, nil
	case sdk.TagString:
		return c.envelope(stringSchema, func(dst []byte) []byte { return connect.AppendJSONString(dst, v.Bytes) }), nil
	case sdk.TagBytes:
		return c.envelope(bytesSchema, func(dst []byte) []byte {
			dst = append(dst, '"')
			dst = base64.StdEncoding.AppendEncode(dst, v.Bytes)
			return append(dst, '"')
		}), nil
	case sdk.TagJSON:
		payload := bytes.TrimSpace(v.Bytes)
		if len(payload) == 0 {
			payload = []byte("null")
		}
		var s *connect.Schema
		if len(v.Schema) > 0 {
			var err error
			if s, err = c.schema(v.Schema); err != nil {
				return nil, fmt.Errorf("Converting Kafka Connect data to byte[] failed: invalid schema: %w", err)
			}
		}
		if s == nil {
			c.buf.Reset()
			if err := json.Compact(&c.buf, payload); err != nil {
				return nil, fmt.Errorf("Converting Kafka Connect data to byte[] failed due to serialization error: invalid JSON payload: %w", err)
			}
			if bytes.Equal(c.buf.Bytes(), []byte("null")) {
				return nil, nil // schema == null && value == null
			}
			return c.envelope([]byte("null"), func(dst []byte) []byte { return append(dst, c.buf.Bytes()...) }), nil
		}
		out, err := c.conformRaw(s, payload, true)
		if err != nil {
			return nil, fmt.Errorf("Converting Kafka Connect data to byte[] failed: %w", err)
		}
		raw, err := s.JSON()
		if err != nil {
			return nil, fmt.Errorf("Converting Kafka Connect data to byte[] failed: invalid schema: %w", err)
		}
		return c.envelope(raw, func(dst []byte) []byte { return append(dst, out...) }), nil
	}
	return nil, fmt.Errorf("JsonConverter: unknown data tag %d", v.Tag)
}

// envelope returns {"schema":schema,"payload":payload} with schemas.enable, else the payload.
func (c *jsonConverter) envelope(schema []byte, payload func([]byte) []byte) []byte {
	if !c.schemasEnable {
		c.out = payload(c.out[:0])
		return c.out
	}
	out := append(c.out[:0], `{"schema":`...)
	out = append(out, schema...)
	out = append(out, `,"payload":`...)
	out = payload(out)
	c.out = append(out, '}')
	return c.out
}

// conformRaw checks a JSON payload against s, reading it as JsonConverter reads (or, with write,
// writes) a value of s, and returns it normalized: as given (compact when written) unless the
// settings change what it says, else rewritten.
func (c *jsonConverter) conformRaw(s *connect.Schema, payload []byte, write bool) ([]byte, error) {
	if !fastConforms(s, payload) {
		opts := connect.PayloadOptions{Root: "payload", KeepNulls: !c.replaceNull, Writing: write, DecimalNumeric: write && c.numeric}
		v, rewritten, err := connect.ReadPayload(s, payload, opts)
		if err != nil {
			return nil, err
		}
		if rewritten {
			return connect.AppendPayload(nil, s, v, opts)
		}
	}
	if !write {
		return payload, nil
	}
	c.buf.Reset()
	if err := json.Compact(&c.buf, payload); err != nil {
		return nil, err
	}
	return bytes.Clone(c.buf.Bytes()), nil
}

// fastConforms reports whether a payload of a primitive schema is valid without decoding it; false
// means "decode and check".
func fastConforms(s *connect.Schema, p []byte) bool {
	if len(p) == 0 {
		return false
	}
	switch s.Type {
	case connect.TypeString:
		return p[0] == '"' && json.Valid(p)
	case connect.TypeBoolean:
		return string(p) == "true" || string(p) == "false"
	case connect.TypeInt8:
		return isPlainInt(p, 8)
	case connect.TypeInt16:
		return isPlainInt(p, 16)
	case connect.TypeInt32:
		return isPlainInt(p, 32)
	case connect.TypeInt64:
		return isPlainInt(p, 64)
	case connect.TypeFloat32, connect.TypeFloat64:
		return (p[0] == '-' || p[0] >= '0' && p[0] <= '9') && json.Valid(p)
	}
	return false
}

func isPlainInt(p []byte, bits int) bool {
	i := 0
	if p[0] == '-' {
		i = 1
	}
	if i == len(p) || len(p) > 20 || p[i] == '0' && len(p) > i+1 {
		return false
	}
	var n uint64
	for _, b := range p[i:] {
		if b < '0' || b > '9' {
			return false
		}
		n = n*10 + uint64(b-'0')
	}
	lim := uint64(1) << (bits - 1)
	if len(p)-i == 20 { // may have overflowed uint64
		return false
	}
	return n < lim || i == 1 && n == lim
}

func (c *jsonConverter) ToConnect(topic string, b []byte) (sdk.Data, error) {
	if b == nil {
		return sdk.Null(), nil
	}
	if !c.schemasEnable {
		p := bytes.TrimSpace(b)
		if !json.Valid(p) {
			_, err := connect.DecodeJSON(p)
			return sdk.Data{}, serializationError(err)
		}
		if string(p) == "null" {
			return sdk.Null(), nil
		}
		return sdk.JSON(nil, p), nil
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(b, &env); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) { // valid JSON, but not an object
			return sdk.Data{}, errors.New(envelopeError)
		}
		if len(bytes.TrimSpace(b)) == 0 {
			return sdk.Data{}, errors.New(envelopeError)
		}
		return sdk.Data{}, serializationError(err)
	}
	rawSchema, okS := env["schema"]
	payload, okP := env["payload"]
	if env == nil || len(env) != 2 || !okS || !okP {
		return sdk.Data{}, errors.New(envelopeError)
	}
	s, err := c.schema(rawSchema)
	if err != nil {
		return sdk.Data{}, err
	}
	if s == nil {
		if string(payload) == "null" {
			return sdk.Null(), nil
		}
		return sdk.JSON(nil, payload), nil
	}
	out, err := c.conformRaw(s, payload, false)
	if err != nil {
		return sdk.Data{}, err
	}
	raw, err := s.JSON()
	if err != nil {
		return sdk.Data{}, err
	}
	return sdk.JSON(raw, out), nil
}

func serializationError(err error) error {
	return fmt.Errorf("Converting byte[] to Kafka Connect data failed due to serialization error: %v", err)
}
