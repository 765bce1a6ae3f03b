package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/wasmconnect/wasmconnect/sdk/go/connect"
)

// Connect schemas as JsonConverter writes them: {"type":"struct","fields":[...],"optional":false,...}.

const decimalName = "org.apache.kafka.connect.data.Decimal"

type schema struct {
	typ      string // JSON type name: int8 ... struct
	optional bool
	name     string
	decimal  bool
	scale    int
	hasDef   bool
	def      any // the default value, conformed to the schema
	fields   []field
	items    *schema // array
	keys     *schema // map
	values   *schema // map
	raw      []byte  // compact JSON of a top-level schema
}

type field struct {
	name string
	s    *schema
}

// connectType returns Kafka's Schema.Type name for a JSON type name.
func connectType(t string) string {
	switch t {
	case "float":
		return "FLOAT32"
	case "double":
		return "FLOAT64"
	}
	return strings.ToUpper(t)
}

func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("unexpected data after the JSON value")
	}
	return v, nil
}

// parseSchema parses a schema; the JSON null is no schema (nil, nil).
func parseSchema(raw []byte) (*schema, error) {
	v, err := decodeJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("invalid schema JSON: %w", err)
	}
	if v == nil {
		return nil, nil
	}
	s, err := buildSchema(v)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, err
	}
	s.raw = buf.Bytes()
	return s, nil
}

// buildSchema follows JsonConverter.asConnectSchema, with its error messages.
func buildSchema(v any) (*schema, error) {
	m, _ := v.(map[string]any)
	t, ok := m["type"].(string)
	if !ok {
		return nil, fmt.Errorf("Schema must contain 'type' field")
	}
	s := &schema{typ: t}
	switch t {
	case "boolean", "int8", "int16", "int32", "int64", "float", "double", "bytes", "string":
	case "array":
		if m["items"] == nil {
			return nil, fmt.Errorf("Array schema did not specify the element type")
		}
		items, err := buildSchema(m["items"])
		if err != nil {
			return nil, err
		}
		s.items = items
	case "map":
		if m["keys"] == nil {
			return nil, fmt.Errorf("Map schema did not specify the key type")
		}
		if m["values"] == nil {
			return nil, fmt.Errorf("Map schema did not specify the value type")
		}
		var err error
		if s.keys, err = buildSchema(m["keys"]); err != nil {
			return nil, err
		}
		if s.values, err = buildSchema(m["values"]); err != nil {
			return nil, err
		}
	case "struct":
		fields, ok := m["fields"].([]any)
		if !ok {
			return nil, fmt.Errorf(`Struct schema's "fields" argument is not an array.`)
		}
		for _, f := range fields {
			fm, _ := f.(map[string]any)
			name, ok := fm["field"].(string)
			if !ok {
				return nil, fmt.Errorf("Struct schema's field name not specified properly")
			}
			if slices.ContainsFunc(s.fields, func(g field) bool { return g.name == name }) {
				return nil, fmt.Errorf("Cannot create field because of field name duplication %s", name)
			}
			fs, err := buildSchema(fm)
			if err != nil {
				return nil, err
			}
			s.fields = append(s.fields, field{name, fs})
		}
	default:
		return nil, fmt.Errorf("Unknown schema type: %s", t)
	}
	s.optional = m["optional"] == true
	s.name, _ = m["name"].(string)
	if p, ok := m["parameters"].(map[string]any); ok {
		for _, pv := range p {
			if _, ok := pv.(string); !ok {
				return nil, fmt.Errorf("Schema parameters must have string values.")
			}
		}
		if s.name == decimalName && t == "bytes" {
			sc, ok := p["scale"].(string)
			n, err := strconv.Atoi(sc)
			if !ok || err != nil {
				return nil, fmt.Errorf("Invalid Decimal schema: scale parameter not found.")
			}
			s.decimal, s.scale = true, n
		}
	}
	if s.name == decimalName && t == "bytes" && !s.decimal {
		return nil, fmt.Errorf("Invalid Decimal schema: scale parameter not found.")
	}
	if d, ok := m["default"]; ok && d != nil {
		c := &conformer{}
		def, _, err := c.conform(s, d, false, "default")
		if err != nil {
			return nil, fmt.Errorf("Invalid default value: %w", err)
		}
		s.def, s.hasDef = def, true
	}
	return s, nil
}

// conformer checks JSON values against schemas and normalizes them the way JsonConverter's
// conversion to and from Connect data does.
type conformer struct {
	replaceNull bool // replace.null.with.default
	numeric     bool // decimal.format=NUMERIC (on write)
	path        []string
}

func (c *conformer) where() string {
	return strings.Join(c.path, "")
}

func nodeType(v any) string {
	switch v.(type) {
	case nil:
		return "NULL"
	case bool:
		return "BOOLEAN"
	case json.Number:
		return "NUMBER"
	case string:
		return "STRING"
	case []any:
		return "ARRAY"
	case map[string]any:
		return "OBJECT"
	}
	return fmt.Sprintf("%T", v)
}

func (c *conformer) mismatch(s *schema, v any) error {
	found := nodeType(v)
	switch x := v.(type) {
	case json.Number:
		found += " " + string(x)
	case string:
		if len(x) > 40 {
			x = x[:40] + "..."
		}
		found += " " + strconv.Quote(x)
	case bool:
		found += " " + strconv.FormatBool(x)
	}
	return fmt.Errorf("Invalid value for schema type %s at %s: found %s", connectType(s.typ), c.where(), found)
}

var intBits = map[string]int{"int8": 8, "int16": 16, "int32": 32, "int64": 64}

// conform checks v against s (read: JSON to Connect; write: Connect to JSON) and returns the
// normalized value and whether it differs from v. root names the value in error messages.
func (c *conformer) conform(s *schema, v any, write bool, root string) (any, bool, error) {
	c.path = append(c.path[:0], root)
	return c.value(s, v, write)
}

func (c *conformer) value(s *schema, v any, write bool) (any, bool, error) {
	if v == nil {
		switch {
		case s.hasDef && c.replaceNull:
			return s.def, true, nil
		case s.optional:
			return nil, false, nil
		case write:
			return nil, false, fmt.Errorf("Conversion error: null value for field that is required and has no default value (at %s)", c.where())
		}
		return nil, false, fmt.Errorf("Invalid null value for required %s field (at %s)", connectType(s.typ), c.where())
	}
	switch s.typ {
	case "boolean":
		if _, ok := v.(bool); !ok {
			return nil, false, c.mismatch(s, v)
		}
	case "int8", "int16", "int32", "int64":
		n, ok := v.(json.Number)
		if !ok {
			return nil, false, c.mismatch(s, v)
		}
		bits := intBits[s.typ]
		if _, err := strconv.ParseInt(string(n), 10, bits); err == nil {
			return v, false, nil
		}
		f, err := strconv.ParseFloat(string(n), 64)
		lim := math.Ldexp(1, bits-1)
		if err != nil || f != math.Trunc(f) || f < -lim || f >= lim {
			return nil, false, fmt.Errorf("Invalid value for schema type %s at %s: %s is not an integer in range", connectType(s.typ), c.where(), n)
		}
		return json.Number(strconv.FormatInt(int64(f), 10)), true, nil
	case "float", "double":
		if _, ok := v.(json.Number); !ok {
			return nil, false, c.mismatch(s, v)
		}
	case "string":
		if _, ok := v.(string); !ok {
			return nil, false, c.mismatch(s, v)
		}
	case "bytes":
		return c.bytesValue(s, v, write)
	case "array":
		a, ok := v.([]any)
		if !ok {
			return nil, false, c.mismatch(s, v)
		}
		changed := false
		for i, e := range a {
			c.path = append(c.path, "["+strconv.Itoa(i)+"]")
			ne, ch, err := c.value(s.items, e, write)
			c.path = c.path[:len(c.path)-1]
			if err != nil {
				return nil, false, err
			}
			a[i], changed = ne, changed || ch
		}
		return a, changed, nil
	case "map":
		return c.mapValue(s, v, write)
	case "struct":
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false, fmt.Errorf("Structs should be encoded as JSON objects, but found %s (at %s)", nodeType(v), c.where())
		}
		changed, present := false, 0
		for _, f := range s.fields {
			fv, ok := m[f.name]
			if ok {
				present++
			}
			c.path = append(c.path, "."+f.name)
			nv, ch, err := c.value(f.s, fv, write)
			c.path = c.path[:len(c.path)-1]
			if err != nil {
				return nil, false, err
			}
			if ch {
				m[f.name], changed = nv, true
			}
		}
		if present != len(m) { // fields the schema does not know are dropped, as Connect's Struct does
			for k := range m {
				if !slices.ContainsFunc(s.fields, func(f field) bool { return f.name == k }) {
					delete(m, k)
				}
			}
			changed = true
		}
		return m, changed, nil
	}
	return v, false, nil
}

func (c *conformer) bytesValue(s *schema, v any, write bool) (any, bool, error) {
	switch x := v.(type) {
	case string:
		b, err := base64.StdEncoding.DecodeString(x)
		if err != nil {
			return nil, false, fmt.Errorf("Invalid bytes field at %s: %v", c.where(), err)
		}
		if s.decimal && write && c.numeric {
			return decimalNumber(b, s.scale), true, nil
		}
		return v, false, nil
	case json.Number:
		if !s.decimal {
			return nil, false, c.mismatch(s, v)
		}
		if write && c.numeric {
			return v, false, nil
		}
		b, err := decimalBytes(x, s.scale)
		if err != nil {
			return nil, false, fmt.Errorf("Invalid Decimal value at %s: %v", c.where(), err)
		}
		return base64.StdEncoding.EncodeToString(b), true, nil
	}
	return nil, false, c.mismatch(s, v)
}

func (c *conformer) mapValue(s *schema, v any, write bool) (any, bool, error) {
	changed := false
	if s.keys.typ == "string" {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false, fmt.Errorf("Maps with string fields should be encoded as JSON objects, but found %s (at %s)", nodeType(v), c.where())
		}
		for k, e := range m {
			c.path = append(c.path, "."+k)
			ne, ch, err := c.value(s.values, e, write)
			c.path = c.path[:len(c.path)-1]
			if err != nil {
				return nil, false, err
			}
			if ch {
				m[k], changed = ne, true
			}
		}
		return m, changed, nil
	}
	a, ok := v.([]any)
	if !ok {
		return nil, false, fmt.Errorf("Maps with non-string fields should be encoded as JSON array of tuples, but found %s (at %s)", nodeType(v), c.where())
	}
	for i, e := range a {
		pair, ok := e.([]any)
		if !ok {
			return nil, false, fmt.Errorf("Found invalid map entry instead of array tuple: %s (at %s[%d])", nodeType(e), c.where(), i)
		}
		if len(pair) != 2 {
			return nil, false, fmt.Errorf("Found invalid map entry, expected length 2 but found :%d (at %s[%d])", len(pair), c.where(), i)
		}
		c.path = append(c.path, "["+strconv.Itoa(i)+"]")
		k, ch1, err := c.value(s.keys, pair[0], write)
		if err == nil {
			var ch2 bool
			pair[1], ch2, err = c.value(s.values, pair[1], write)
			ch1 = ch1 || ch2
		}
		c.path = c.path[:len(c.path)-1]
		if err != nil {
			return nil, false, err
		}
		pair[0], changed = k, changed || ch1
	}
	return a, changed, nil
}

// appendValue appends v as JSON, with struct fields in schema order as JsonConverter writes them.
func appendValue(dst []byte, s *schema, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		return strconv.AppendBool(dst, x)
	case json.Number:
		return append(dst, x...)
	case string:
		return connect.AppendJSONString(dst, x)
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var es *schema
			if s != nil {
				es = s.items
				if s.typ == "map" { // a [key, value] tuple
					es = nil
				}
			}
			dst = appendValue(dst, es, e)
		}
		return append(dst, ']')
	case map[string]any:
		dst = append(dst, '{')
		if s != nil && s.typ == "struct" {
			for i, f := range s.fields {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = connect.AppendJSONString(dst, f.name)
				dst = append(dst, ':')
				dst = appendValue(dst, f.s, x[f.name])
			}
			return append(dst, '}')
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var vs *schema
		if s != nil {
			vs = s.values
		}
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = connect.AppendJSONString(dst, k)
			dst = append(dst, ':')
			dst = appendValue(dst, vs, x[k])
		}
		return append(dst, '}')
	}
	panic(fmt.Sprintf("appendValue: unexpected %T", v))
}

// decimalNumber renders the two's-complement big-endian unscaled value b with scale as a plain
// decimal number.
func decimalNumber(b []byte, scale int) json.Number {
	n := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	if scale <= 0 {
		n.Mul(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-scale)), nil))
		return json.Number(n.String())
	}
	neg := n.Sign() < 0
	digits := new(big.Int).Abs(n).String()
	if len(digits) <= scale {
		digits = strings.Repeat("0", scale-len(digits)+1) + digits
	}
	s := digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	if neg {
		s = "-" + s
	}
	return json.Number(s)
}

// decimalBytes returns the unscaled value of the number n at scale as Java's BigInteger.toByteArray
// does; it fails if n has more fractional digits than scale allows.
func decimalBytes(n json.Number, scale int) ([]byte, error) {
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return nil, fmt.Errorf("%s is not a number", n)
	}
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(scale))), nil)
	if scale >= 0 {
		r.Mul(r, new(big.Rat).SetInt(p))
	} else {
		r.Quo(r, new(big.Rat).SetInt(p))
	}
	if !r.IsInt() {
		return nil, fmt.Errorf("%s does not fit scale %d (rounding necessary)", n, scale)
	}
	return twosComplement(r.Num()), nil
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// twosComplement returns the minimal big-endian two's-complement bytes of x (BigInteger.toByteArray).
func twosComplement(x *big.Int) []byte {
	if x.Sign() >= 0 {
		b := x.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// Smallest n with -2^(8n-1) <= x.
	n := (new(big.Int).Not(x).BitLen())/8 + 1 // ^x = -x-1 >= 0
	y := new(big.Int).Add(x, new(big.Int).Lsh(big.NewInt(1), uint(8*n)))
	b := y.Bytes()
	for len(b) < n {
		b = append([]byte{0}, b...)
	}
	return b
}
