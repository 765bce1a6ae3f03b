package connect

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// parser reads a JSON payload straight into the Go values of a schema (nil: schemaless), without
// building an intermediate tree: a transformation decodes every record, and a wasm guest pays for
// every allocation and reflective step.
type parser struct {
	b        []byte
	i        int
	keepNull bool // a null stays null where the schema has a default
}

// parsePayload parses a whole JSON payload with schema s.
func parsePayload(s *Schema, b []byte, keepNull bool) (any, error) {
	p := parser{b: b, keepNull: keepNull}
	v, err := p.value(s, "")
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.i != len(p.b) {
		return nil, fmt.Errorf("invalid JSON payload: unexpected data after the JSON value at byte %d", p.i)
	}
	return v, nil
}

func (p *parser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) syntax(what string) error {
	if p.i >= len(p.b) {
		return fmt.Errorf("invalid JSON payload: unexpected end of input, want %s", what)
	}
	return fmt.Errorf("invalid JSON payload: unexpected %q at byte %d, want %s", p.b[p.i], p.i, what)
}

func (p *parser) lit(word string) bool {
	if len(p.b)-p.i >= len(word) && string(p.b[p.i:p.i+len(word)]) == word {
		p.i += len(word)
		return true
	}
	return false
}

// value parses one value; where names the struct field for error messages.
func (p *parser) value(s *Schema, where string) (any, error) {
	p.ws()
	if p.i >= len(p.b) {
		return nil, p.syntax("a value")
	}
	c := p.b[p.i]
	if c == 'n' {
		if !p.lit("null") {
			return nil, p.syntax("null")
		}
		if s == nil {
			return nil, nil
		}
		return p.nullFor(s)
	}
	if s == nil {
		return p.schemaless(c)
	}
	mismatch := func(got string) error {
		if where != "" {
			return fmt.Errorf("Invalid value for schema type %s at %s: %s", s.Type.JavaName(), where, got)
		}
		return fmt.Errorf("Invalid value for schema type %s: %s", s.Type.JavaName(), got)
	}
	switch s.Type {
	case TypeBoolean:
		switch {
		case p.lit("true"):
			return true, nil
		case p.lit("false"):
			return false, nil
		}
	case TypeInt8, TypeInt16, TypeInt32, TypeInt64:
		tok, isInt, err := p.number()
		if err != nil {
			return nil, mismatch(kindOf(c))
		}
		bits := intBits(s.Type)
		n, err := strconv.ParseInt(tok, 10, bits)
		if err != nil || !isInt {
			f, ferr := strconv.ParseFloat(tok, 64)
			lim := math.Ldexp(1, bits-1)
			if ferr != nil || f != math.Trunc(f) || f < -lim || f >= lim {
				return nil, mismatch("number " + tok)
			}
			n = int64(f)
		}
		switch s.Type {
		case TypeInt8:
			return int8(n), nil
		case TypeInt16:
			return int16(n), nil
		case TypeInt32:
			switch s.Name {
			case DateName:
				return time.UnixMilli(n * 86400000).UTC(), nil
			case TimeName:
				return time.UnixMilli(n).UTC(), nil
			}
			return int32(n), nil
		}
		if s.Name == TimestampName {
			return time.UnixMilli(n).UTC(), nil
		}
		return n, nil
	case TypeFloat32, TypeFloat64:
		tok, _, err := p.number()
		if err != nil {
			return nil, mismatch(kindOf(c))
		}
		f, err := strconv.ParseFloat(tok, 64)
		if err != nil {
			return nil, mismatch("number " + tok)
		}
		if s.Type == TypeFloat32 {
			return float32(f), nil
		}
		return f, nil
	case TypeString:
		if c == '"' {
			return p.str()
		}
	case TypeBytes:
		if s.Name == DecimalName {
			if c == '"' {
				str, err := p.str()
				if err != nil {
					return nil, err
				}
				return decimalValue(s, str)
			}
			tok, _, err := p.number()
			if err != nil {
				return nil, mismatch(kindOf(c))
			}
			return decimalValue(s, json.Number(tok))
		}
		if c == '"' {
			str, err := p.str()
			if err != nil {
				return nil, err
			}
			b, err := base64.StdEncoding.DecodeString(str)
			if err != nil {
				return nil, fmt.Errorf("Invalid bytes field: %v", err)
			}
			return b, nil
		}
	case TypeArray:
		if c == '[' {
			out := []any{}
			err := p.elements(func() error {
				v, err := p.value(s.Items, where)
				out = append(out, v)
				return err
			})
			return out, err
		}
	case TypeMap:
		if s.Keys.Type == TypeString && c == '{' {
			out := map[string]any{}
			err := p.members(func(k []byte) error {
				v, err := p.value(s.Values, where)
				out[string(k)] = v
				return err
			})
			return out, err
		}
		if s.Keys.Type != TypeString && c == '[' {
			var out []MapEntry
			err := p.elements(func() error {
				p.ws()
				if p.i >= len(p.b) || p.b[p.i] != '[' {
					return fmt.Errorf("Found invalid map entry instead of array tuple: %s", kindOf(p.peek()))
				}
				var e MapEntry
				n := 0
				err := p.elements(func() error {
					var err error
					switch n {
					case 0:
						e.Key, err = p.value(s.Keys, where)
					case 1:
						e.Value, err = p.value(s.Values, where)
					default:
						return fmt.Errorf("Found invalid map entry instead of array tuple: more than 2 elements")
					}
					n++
					return err
				})
				if err == nil && n != 2 {
					err = fmt.Errorf("Found invalid map entry instead of array tuple: %d elements", n)
				}
				out = append(out, e)
				return err
			})
			if out == nil {
				out = []MapEntry{}
			}
			return out, err
		}
	case TypeStruct:
		if c == '{' {
			st := NewStruct(s)
			seen := uint64(0)
			err := p.members(func(k []byte) error {
				i := s.fieldIndexBytes(k)
				if i < 0 {
					_, err := p.value(nil, "") // JsonConverter ignores unknown fields
					return err
				}
				v, err := p.value(s.Fields[i].Schema, s.Fields[i].Name)
				st.values[i] = v
				if i < 64 {
					seen |= 1 << i
				}
				return err
			})
			if err != nil {
				return nil, err
			}
			for i, f := range s.Fields {
				if i < 64 && seen&(1<<i) != 0 || i >= 64 && st.values[i] != nil {
					continue
				}
				v, err := p.nullFor(f.Schema)
				if err != nil {
					return nil, err
				}
				st.values[i] = v
			}
			return st, nil
		}
	}
	return nil, mismatch(kindOf(c))
}

func (p *parser) nullFor(s *Schema) (any, error) {
	if p.keepNull && s.Default != nil {
		return nil, nil
	}
	return nullFor(s)
}

func nullFor(s *Schema) (any, error) {
	if s.Default != nil {
		return s.Default, nil
	}
	if s.Optional {
		return nil, nil
	}
	return nil, fmt.Errorf("Invalid null value for required %s field", s.Type.JavaName())
}

func (p *parser) peek() byte {
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

func kindOf(c byte) string {
	switch {
	case c == '{':
		return "OBJECT"
	case c == '[':
		return "ARRAY"
	case c == '"':
		return "STRING"
	case c == 't' || c == 'f':
		return "BOOLEAN"
	case c == 'n':
		return "NULL"
	case c == '-' || c >= '0' && c <= '9':
		return "NUMBER"
	}
	return "invalid JSON"
}

// schemaless parses a value without a schema: objects become map[string]any, integers int64,
// other numbers float64.
func (p *parser) schemaless(c byte) (any, error) {
	switch {
	case c == '{':
		out := map[string]any{}
		err := p.members(func(k []byte) error {
			v, err := p.value(nil, "")
			out[string(k)] = v
			return err
		})
		return out, err
	case c == '[':
		out := []any{}
		err := p.elements(func() error {
			v, err := p.value(nil, "")
			out = append(out, v)
			return err
		})
		return out, err
	case c == '"':
		return p.str()
	case p.lit("true"):
		return true, nil
	case p.lit("false"):
		return false, nil
	}
	tok, isInt, err := p.number()
	if err != nil {
		return nil, err
	}
	if isInt {
		if n, err := strconv.ParseInt(tok, 10, 64); err == nil {
			return n, nil
		}
	}
	f, err := strconv.ParseFloat(tok, 64)
	if err != nil {
		return nil, fmt.Errorf("invalid JSON payload: number %s: %v", tok, err)
	}
	return f, nil
}

// number scans a JSON number and reports whether it has neither fraction nor exponent.
func (p *parser) number() (string, bool, error) {
	start := p.i
	if p.i < len(p.b) && p.b[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if digits() == 0 {
		p.i = start
		return "", false, p.syntax("a number")
	}
	isInt := true
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		isInt = false
		if digits() == 0 {
			return "", false, p.syntax("a digit")
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		isInt = false
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return "", false, p.syntax("a digit")
		}
	}
	return string(p.b[start:p.i]), isInt, nil
}

// rawStr parses a JSON string and returns its bytes: a slice of the input when it has no escapes.
func (p *parser) rawStr() ([]byte, error) {
	start := p.i + 1
	for j := start; j < len(p.b); j++ {
		c := p.b[j]
		if c == '"' {
			p.i = j + 1
			return p.b[start:j], nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
	}
	s, err := p.str()
	return []byte(s), err
}

// str parses a JSON string.
func (p *parser) str() (string, error) {
	p.i++ // opening quote
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c == '"' {
			s := string(p.b[start:p.i])
			p.i++
			return s, nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		p.i++
	}
	buf := append([]byte(nil), p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return string(buf), nil
		case c < 0x20:
			return "", p.syntax("no control character in a string")
		case c != '\\':
			buf = append(buf, c)
			p.i++
			continue
		}
		p.i++
		if p.i >= len(p.b) {
			break
		}
		e := p.b[p.i]
		p.i++
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", p.syntax("4 hex digits")
			}
			if utf16.IsSurrogate(r) {
				if p.i+1 < len(p.b) && p.b[p.i] == '\\' && p.b[p.i+1] == 'u' {
					p.i += 2
					r2, ok := p.hex4()
					if !ok {
						return "", p.syntax("4 hex digits")
					}
					r = utf16.DecodeRune(r, r2)
				} else {
					r = utf8.RuneError
				}
			}
			buf = utf8.AppendRune(buf, r)
		default:
			p.i--
			return "", p.syntax("an escape character")
		}
	}
	return "", p.syntax(`a closing '"'`)
}

func (p *parser) hex4() (rune, bool) {
	if len(p.b)-p.i < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(p.b[p.i:p.i+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(n), true
}

// elements parses the elements of an array, calling elem for each.
func (p *parser) elements(elem func() error) error {
	p.i++ // [
	p.ws()
	if p.peek() == ']' {
		p.i++
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		p.ws()
		switch p.peek() {
		case ',':
			p.i++
		case ']':
			p.i++
			return nil
		default:
			return p.syntax(`',' or ']'`)
		}
	}
}

// members parses the members of an object, calling member with each key; member parses the value.
// The key aliases the input or a scratch buffer: it is valid during the call only.
func (p *parser) members(member func(key []byte) error) error {
	p.i++ // {
	p.ws()
	if p.peek() == '}' {
		p.i++
		return nil
	}
	for {
		p.ws()
		if p.peek() != '"' {
			return p.syntax("an object key")
		}
		k, err := p.rawStr()
		if err != nil {
			return err
		}
		p.ws()
		if p.peek() != ':' {
			return p.syntax(`':'`)
		}
		p.i++
		if err := member(k); err != nil {
			return err
		}
		p.ws()
		switch p.peek() {
		case ',':
			p.i++
		case '}':
			p.i++
			return nil
		default:
			return p.syntax(`',' or '}'`)
		}
	}
}

// skip scans over one value without building it.
func (p *parser) skip() error {
	p.ws()
	switch c := p.peek(); {
	case c == '{':
		return p.members(func([]byte) error { return p.skip() })
	case c == '[':
		return p.elements(p.skip)
	case c == '"':
		p.i++
		for p.i < len(p.b) {
			switch b := p.b[p.i]; {
			case b == '"':
				p.i++
				return nil
			case b == '\\':
				p.i += 2
			case b < 0x20:
				return p.syntax("no control character in a string")
			default:
				p.i++
			}
		}
		return p.syntax(`a closing '"'`)
	case p.lit("true"), p.lit("false"), p.lit("null"):
		return nil
	default:
		_, _, err := p.number()
		return err
	}
}

// ScanObject calls member for each member of the JSON object payload, in order, with the key (valid
// during the call only) and the offsets of its value in payload, without decoding the values. It
// lets a transformation rewrite a few fields of a large struct as text.
func ScanObject(payload []byte, member func(key []byte, start, end int) error) error {
	p := parser{b: payload}
	p.ws()
	if p.peek() != '{' {
		return p.syntax("an object")
	}
	err := p.members(func(k []byte) error {
		p.ws()
		start := p.i
		if err := p.skip(); err != nil {
			return err
		}
		return member(k, start, p.i)
	})
	if err != nil {
		return err
	}
	p.ws()
	if p.i != len(p.b) {
		return fmt.Errorf("invalid JSON payload: unexpected data after the JSON value at byte %d", p.i)
	}
	return nil
}
