package connect

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// PayloadOptions are the JsonConverter settings that change how a payload is read or written.
type PayloadOptions struct {
	// Root names the payload in error messages, which say where in it they are: with Root
	// "payload", "Invalid value for schema type STRING at payload.tags[1]: found NUMBER 2".
	Root string
	// KeepNulls leaves a null null where the schema has a default, as Kafka's
	// replace.null.with.default=false (Struct.getWithoutDefault).
	KeepNulls bool
	// Writing says the payload is a Connect value on its way to bytes (JsonConverter.fromConnectData),
	// not bytes being read: a required null is refused with that direction's message.
	Writing bool
	// DecimalNumeric writes decimals as JSON numbers (decimal.format=NUMERIC), not base64.
	DecimalNumeric bool
}

// ReadPayload parses a JSON payload with schema s (nil: schemaless) into its Go value (see the
// package doc), as JsonConverter reads one: nulls take the schema's default, unknown struct fields
// are dropped, integral numbers written as 3.0 are integers, decimals may be numbers.
//
// rewritten reports whether writing the value again (AppendPayload) says more than the payload
// does, beyond white space, absent optional fields and the form of numbers: a default filled in, a
// field dropped, a decimal or integer in another form. When it is false the payload may be kept as
// it is.
func ReadPayload(s *Schema, payload []byte, o PayloadOptions) (v any, rewritten bool, err error) {
	p := parser{b: payload, opts: o}
	v, err = p.value(s)
	if err != nil {
		return nil, false, err
	}
	p.ws()
	if p.i != len(p.b) {
		return nil, false, fmt.Errorf("invalid JSON payload: unexpected data after the JSON value at byte %d", p.i)
	}
	return v, p.rewritten, nil
}

// parser reads a JSON payload straight into the Go values of a schema (nil: schemaless), without
// building an intermediate tree: a transformation decodes every record, and a wasm guest pays for
// every allocation and reflective step.
type parser struct {
	b         []byte
	i         int
	opts      PayloadOptions
	path      []pathElem // where the parser is, for error messages
	rewritten bool       // see ReadPayload
}

// pathElem is a step into a value: a struct field or map key, or an array index.
type pathElem struct {
	name  string
	index int // when name is ""
}

func (p *parser) push(e pathElem) { p.path = append(p.path, e) }
func (p *parser) pop()            { p.path = p.path[:len(p.path)-1] }

// where renders the path, as "payload.tags[1]"; "" at the root of an unnamed payload.
func (p *parser) where() string {
	b := []byte(p.opts.Root)
	for _, e := range p.path {
		if e.name == "" {
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(e.index), 10)
			b = append(b, ']')
			continue
		}
		if len(b) > 0 {
			b = append(b, '.')
		}
		b = append(b, e.name...)
	}
	return string(b)
}

// located is msg followed by where the parser is, as "... (at payload.id)".
func (p *parser) located(msg string) error {
	if w := p.where(); w != "" {
		return fmt.Errorf("%s (at %s)", msg, w)
	}
	return errors.New(msg)
}

// mismatch is the error for a value that schema s does not allow; detail says what was found.
func (p *parser) mismatch(s *Schema, detail string) error {
	if w := p.where(); w != "" {
		return fmt.Errorf("Invalid value for schema type %s at %s: %s", s.Type.JavaName(), w, detail)
	}
	return fmt.Errorf("Invalid value for schema type %s: %s", s.Type.JavaName(), detail)
}

// found describes the value at the parser's position for an error message, as "found STRING "x"",
// without moving the parser.
func (p *parser) found() string {
	q := parser{b: p.b, i: p.i}
	c := q.peek()
	kind := "found " + kindOf(c)
	switch {
	case c == '"':
		if s, err := q.str(); err == nil {
			if len(s) > 40 {
				s = s[:40] + "..."
			}
			return kind + " " + strconv.Quote(s)
		}
	case c == 't' || c == 'f':
		if q.lit("true") || q.lit("false") {
			return kind + " " + string(p.b[p.i:q.i])
		}
	case c == '-' || c >= '0' && c <= '9':
		if tok, _, err := q.number(); err == nil {
			return kind + " " + tok
		}
	}
	return kind
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

// value parses one value of schema s (nil: schemaless), following JsonConverter.convertToConnect.
func (p *parser) value(s *Schema) (any, error) {
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
	if kindOf(c) == "" {
		return nil, p.syntax("a value")
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
		if c != '-' && (c < '0' || c > '9') {
			break
		}
		tok, isInt, err := p.number()
		if err != nil {
			return nil, err
		}
		bits := intBits(s.Type)
		n, err := strconv.ParseInt(tok, 10, bits)
		if err != nil || !isInt {
			f, ferr := strconv.ParseFloat(tok, 64)
			lim := math.Ldexp(1, bits-1)
			if ferr != nil || f != math.Trunc(f) || f < -lim || f >= lim {
				return nil, p.mismatch(s, tok+" is not an integer in range")
			}
			n = int64(f)
			p.rewritten = true
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
		if c != '-' && (c < '0' || c > '9') {
			break
		}
		tok, _, err := p.number()
		if err != nil {
			return nil, err
		}
		f, err := strconv.ParseFloat(tok, 64)
		if err != nil {
			return nil, p.mismatch(s, "found NUMBER "+tok)
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
		return p.bytesValue(s, c)
	case TypeArray:
		if c == '[' {
			out := []any{}
			err := p.elements(func() error {
				p.push(pathElem{index: len(out)})
				v, err := p.value(s.Items)
				p.pop()
				out = append(out, v)
				return err
			})
			return out, err
		}
	case TypeMap:
		return p.mapValue(s, c)
	case TypeStruct:
		if c != '{' {
			return nil, p.located("Structs should be encoded as JSON objects, but found " + kindOf(c))
		}
		return p.structValue(s)
	}
	return nil, p.mismatch(s, p.found())
}

func (p *parser) bytesValue(s *Schema, c byte) (any, error) {
	decimal := s.Name == DecimalName
	switch {
	case c == '"':
		str, err := p.str()
		if err != nil {
			return nil, err
		}
		b, err := base64.StdEncoding.DecodeString(str)
		if err != nil {
			if w := p.where(); w != "" {
				return nil, fmt.Errorf("Invalid bytes field at %s: %v", w, err)
			}
			return nil, fmt.Errorf("Invalid bytes field: %v", err)
		}
		if !decimal {
			return b, nil
		}
		if p.opts.DecimalNumeric {
			p.rewritten = true // base64 to a number
		}
		return decimalFromBytes(b, decimalScale(s)), nil
	case decimal && (c == '-' || c >= '0' && c <= '9'):
		tok, _, err := p.number()
		if err != nil {
			return nil, err
		}
		if !p.opts.DecimalNumeric {
			p.rewritten = true // a number to base64
		}
		r, err := decimalFromText(tok, decimalScale(s))
		if err != nil {
			return nil, p.located("Invalid Decimal value: " + err.Error())
		}
		return r, nil
	}
	return nil, p.mismatch(s, p.found())
}

func (p *parser) mapValue(s *Schema, c byte) (any, error) {
	if s.Keys.Type == TypeString {
		if c != '{' {
			return nil, p.located("Maps with string fields should be encoded as JSON objects, but found " + kindOf(c))
		}
		out := map[string]any{}
		n := 0
		err := p.members(func(k []byte) error {
			key := string(k)
			p.push(pathElem{name: key})
			v, err := p.value(s.Values)
			p.pop()
			out[key] = v
			n++
			return err
		})
		if n != len(out) {
			p.rewritten = true // a repeated key: the last one counts
		}
		return out, err
	}
	if c != '[' {
		return nil, p.located("Maps with non-string fields should be encoded as JSON array of tuples, but found " + kindOf(c))
	}
	out := []MapEntry{}
	err := p.elements(func() error {
		p.push(pathElem{index: len(out)})
		defer p.pop()
		p.ws()
		if c := p.peek(); c != '[' {
			if kindOf(c) == "" {
				return p.syntax("a value")
			}
			return p.located("Found invalid map entry instead of array tuple: " + kindOf(c))
		}
		var e MapEntry
		n := 0
		err := p.elements(func() error {
			var err error
			switch n {
			case 0:
				e.Key, err = p.value(s.Keys)
			case 1:
				e.Value, err = p.value(s.Values)
			default:
				err = p.skip()
			}
			n++
			return err
		})
		if err == nil && n != 2 {
			err = p.located(fmt.Sprintf("Found invalid map entry, expected length 2 but found :%d", n))
		}
		out = append(out, e)
		return err
	})
	return out, err
}

func (p *parser) structValue(s *Schema) (any, error) {
	st := NewStruct(s)
	seen := uint64(0)
	err := p.members(func(k []byte) error {
		i := s.fieldIndexBytes(k)
		if i < 0 {
			p.rewritten = true // JsonConverter ignores fields the schema does not have
			_, err := p.value(nil)
			return err
		}
		if i < 64 && seen&(1<<i) != 0 {
			p.rewritten = true // a repeated field: the last one counts
		}
		p.push(pathElem{name: s.Fields[i].Name})
		v, err := p.value(s.Fields[i].Schema)
		p.pop()
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
		p.push(pathElem{name: f.Name})
		v, err := p.nullFor(f.Schema)
		p.pop()
		if err != nil {
			return nil, err
		}
		st.values[i] = v
	}
	return st, nil
}

// nullFor is the value of a null (or absent field) of schema s: its default, unless KeepNulls; a
// null if s is optional; else an error.
func (p *parser) nullFor(s *Schema) (any, error) {
	if s.Default != nil {
		if p.opts.KeepNulls {
			return nil, nil
		}
		p.rewritten = true
		return s.Default, nil
	}
	if s.Optional {
		return nil, nil
	}
	if p.opts.Writing {
		return nil, p.located("Conversion error: null value for field that is required and has no default value")
	}
	return nil, p.located("Invalid null value for required " + s.Type.JavaName() + " field")
}

func (p *parser) peek() byte {
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

// kindOf names the JSON type of the value that starts with c as Jackson's JsonNodeType does; ""
// if no JSON value starts with c.
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
	return ""
}

// schemaless parses a value without a schema: objects become map[string]any, integers int64,
// other numbers float64.
func (p *parser) schemaless(c byte) (any, error) {
	switch {
	case c == '{':
		out := map[string]any{}
		err := p.members(func(k []byte) error {
			v, err := p.value(nil)
			out[string(k)] = v
			return err
		})
		return out, err
	case c == '[':
		out := []any{}
		err := p.elements(func() error {
			v, err := p.value(nil)
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
