package main

import (
	"math"
	"strconv"
	"strings"

	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
	"github.com/wasmconnect/wasmconnect/sdk/go/connect"
)

func registerHeaderTransforms() {
	sdk.RegisterTransformation(info("InsertHeader", "",
		sdk.ConfigDef{Name: "header", Required: true, Importance: sdk.High, Validator: nonNull, Documentation: "The name of the header."},
		sdk.ConfigDef{Name: "value.literal", Required: true, Importance: sdk.High, Validator: nonNull,
			Documentation: "The literal value that is to be set as the header value on all records."}),
		func() sdk.Transformation { return &insertHeader{} })
	sdk.RegisterTransformation(info("DropHeaders", "",
		sdk.ConfigDef{Name: "headers", Type: sdk.TypeList, Required: true, Importance: sdk.High, Validator: listNonEmpty("headers"),
			Documentation: "The name of the headers to be removed."}),
		func() sdk.Transformation { return &dropHeaders{} })
	kv("HeaderFrom", func(key bool) sdk.Transformation { return &headerFrom{key: operand(key)} },
		sdk.ConfigDef{Name: "fields", Type: sdk.TypeList, Required: true, Importance: sdk.High, Validator: listNonEmpty("fields"),
			Documentation: "Field names in the record whose values are to be copied or moved to headers."},
		sdk.ConfigDef{Name: "headers", Type: sdk.TypeList, Required: true, Importance: sdk.High, Validator: listNonEmpty("headers"),
			Documentation: "Header names, in the same order as the field names listed in the fields configuration property."},
		sdk.ConfigDef{Name: "operation", Required: true, Importance: sdk.High, Validator: sdk.OneOf("move", "copy"),
			Documentation: "Either <code>move</code> if the fields are to be moved to the headers (removed from the key/value), or <code>copy</code> if the fields are to be copied to the headers (retained in the key/value)."},
		replaceNullDef)
}

func nonNull(string) error { return nil }

// ---- InsertHeader ---------------------------------------------------------------------------

type insertHeader struct {
	header sdk.Header
}

func (t *insertHeader) Configure(cfg sdk.Config) error {
	s, v := parseLiteral(cfg["value.literal"])
	d, err := connect.Encode(s, v)
	if err != nil {
		return err
	}
	t.header = sdk.Header{Key: cfg["header"], Value: d}
	return nil
}

// parseLiteral infers a schema and value from a string as Kafka's Values.parseString does for
// scalars: null, booleans, the smallest integer type that holds an integer, float32 or float64 for
// fractions, else a string.
func parseLiteral(s string) (*connect.Schema, any) {
	t := strings.TrimSpace(s)
	switch {
	case s == "":
		return connect.StringSchema, s
	case t == "null":
		return nil, nil
	case strings.EqualFold(t, "true"), strings.EqualFold(t, "false"):
		return connect.BooleanSchema, strings.EqualFold(t, "true")
	}
	if n, err := strconv.ParseInt(t, 10, 64); err == nil {
		switch {
		case n >= math.MinInt8 && n <= math.MaxInt8:
			return connect.Int8Schema, int8(n)
		case n >= math.MinInt16 && n <= math.MaxInt16:
			return connect.Int16Schema, int16(n)
		case n >= math.MinInt32 && n <= math.MaxInt32:
			return connect.Int32Schema, int32(n)
		}
		return connect.Int64Schema, n
	}
	if f, err := strconv.ParseFloat(t, 64); err == nil && t[0] != '+' && !strings.ContainsAny(t, "xXnN") {
		if f32 := float32(f); !math.IsInf(float64(f32), 0) {
			return connect.Float32Schema, f32
		}
		return connect.Float64Schema, f
	}
	return connect.StringSchema, s
}

func (t *insertHeader) Apply(r *sdk.Record) (*sdk.Record, error) {
	hs := make([]sdk.Header, len(r.Headers), len(r.Headers)+1)
	copy(hs, r.Headers)
	r.Headers = append(hs, t.header)
	return r, nil
}

// ---- DropHeaders ----------------------------------------------------------------------------

type dropHeaders struct {
	names map[string]bool
}

func (t *dropHeaders) Configure(cfg sdk.Config) error {
	t.names = map[string]bool{}
	for _, h := range cfg.List("headers", nil) {
		t.names[h] = true
	}
	return nil
}

func (t *dropHeaders) Apply(r *sdk.Record) (*sdk.Record, error) {
	drop := 0
	for _, h := range r.Headers {
		if t.names[h.Key] {
			drop++
		}
	}
	if drop == 0 {
		return r, nil
	}
	hs := make([]sdk.Header, 0, len(r.Headers)-drop)
	for _, h := range r.Headers {
		if !t.names[h.Key] {
			hs = append(hs, h)
		}
	}
	r.Headers = hs
	return r, nil
}

// ---- HeaderFrom -----------------------------------------------------------------------------

type headerFrom struct {
	nulls        nullPolicy
	key          operand
	fields, hdrs []string
	move         bool
	cache        schemaCache
}

const headerFromPurpose = "header " + "from"

func (t *headerFrom) Configure(cfg sdk.Config) error {
	if err := t.nulls.configure(cfg); err != nil {
		return err
	}
	t.fields, t.hdrs = cfg.List("fields", nil), cfg.List("headers", nil)
	if len(t.fields) != len(t.hdrs) {
		return sdk.InvalidConfig("headers", cfg["headers"], "'fields' config must have the same number of elements as 'headers' config.")
	}
	t.move = cfg["operation"] == "move"
	return nil
}

func (t *headerFrom) Apply(r *sdk.Record) (*sdk.Record, error) {
	if t.key.isNull(r) {
		return r, nil
	}
	s, v, err := t.nulls.decode(t.key.get(r))
	if err != nil {
		return nil, err
	}
	hs := make([]sdk.Header, len(r.Headers), len(r.Headers)+len(t.fields))
	copy(hs, r.Headers)
	if s == nil {
		m, err := requireMap(v, headerFromPurpose)
		if err != nil {
			return nil, err
		}
		for i, f := range t.fields {
			var d sdk.Data
			if str, ok := m[f].(string); ok {
				d = sdk.String(str)
			} else if d, err = connect.Encode(nil, m[f]); err != nil {
				return nil, sdk.DataError("%v", err)
			}
			hs = append(hs, sdk.Header{Key: t.hdrs[i], Value: d})
		}
		r.Headers = hs
		if !t.move {
			return r, nil
		}
		out := copyMap(m)
		for _, f := range t.fields {
			delete(out, f)
		}
		return r, t.key.encode(r, nil, out)
	}
	st, err := requireStruct(v, headerFromPurpose)
	if err != nil {
		return nil, err
	}
	for i, f := range t.fields {
		j := s.FieldIndex(f)
		if j < 0 {
			return nil, sdk.DataError("%s is not a valid field name", f)
		}
		d, err := connect.Encode(s.Fields[j].Schema, st.GetAt(j))
		if err != nil {
			return nil, sdk.DataError("%v", err)
		}
		hs = append(hs, sdk.Header{Key: t.hdrs[i], Value: d})
	}
	r.Headers = hs
	if !t.move {
		return r, nil
	}
	us, _ := t.cache.get(s, func(s *connect.Schema) (*connect.Schema, error) {
		u := structBasics(s)
		u.Optional = s.Optional
		for _, f := range s.Fields {
			if !contains(t.fields, f.Name) {
				u.Fields = append(u.Fields, f)
			}
		}
		return u, nil
	})
	out := connect.NewStruct(us)
	j := 0
	for i, f := range s.Fields {
		if !contains(t.fields, f.Name) {
			out.PutAt(j, st.GetAt(i))
			j++
		}
	}
	return r, t.key.encode(r, us, out)
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
