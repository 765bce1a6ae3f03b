package main

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// column is a captured table's column and how its values become Debezium's.
type column struct {
	name     string
	oid      uint32
	typmod   int32
	optional bool
	key      bool // part of the primary key
	kind     kind
	scale    int    // numeric with a declared scale: its scale
	schema   string // the field's schema JSON without "field"
}

// kind is how a column's text value is written.
type kind int

const (
	kString kind = iota
	kBool
	kInt         // an integer, as it is
	kFloat       // a float, as it is; NaN and infinities as null
	kDecimal     // Connect Decimal: base64 of the unscaled two's complement
	kVarDecimal  // io.debezium.data.VariableScaleDecimal {scale, value}
	kDecimalStr  // a numeric as a string
	kBytes       // bytea \x hex to base64
	kDate        // days since the epoch
	kTimestampMs // timestamp as milliseconds since the epoch
	kTimestampUs // timestamp as microseconds
	kZoned       // timestamptz as ISO-8601 in UTC
	kTimeMs      // time of day as milliseconds
	kTimeUs      // time of day as microseconds
	kJSONText    // json/jsonb/uuid/...: a string
)

// PostgreSQL type OIDs of the built-in types this module maps.
const (
	oidBool        = 16
	oidBytea       = 17
	oidName        = 19
	oidInt8        = 20
	oidInt2        = 21
	oidInt4        = 23
	oidText        = 25
	oidOID         = 26
	oidJSON        = 114
	oidFloat4      = 700
	oidFloat8      = 701
	oidBPChar      = 1042
	oidVarchar     = 1043
	oidDate        = 1082
	oidTime        = 1083
	oidTimestamp   = 1114
	oidTimestampTZ = 1184
	oidNumeric     = 1700
	oidUUID        = 2950
	oidJSONB       = 3802
)

// newColumn maps a column as Debezium's PostgreSQL connector does, for the configured
// decimal.handling.mode and time.precision.mode.
func newColumn(name string, oid uint32, typmod int32, optional, key bool, s *settings) column {
	c := column{name: name, oid: oid, typmod: typmod, optional: optional, key: key}
	typ, logical, params, version := "string", "", "", 0
	switch oid {
	case oidBool:
		typ, c.kind = "boolean", kBool
	case oidInt2:
		typ, c.kind = "int16", kInt
	case oidInt4:
		typ, c.kind = "int32", kInt
	case oidInt8, oidOID:
		typ, c.kind = "int64", kInt
	case oidFloat4:
		typ, c.kind = "float", kFloat
	case oidFloat8:
		typ, c.kind = "double", kFloat
	case oidNumeric:
		precision, scale := -1, -1
		if typmod >= 4 {
			precision, scale = int((typmod-4)>>16)&0xffff, int((typmod-4)&0xffff)
		}
		switch {
		case s.decimalMode == "double":
			typ, c.kind = "double", kFloat
		case s.decimalMode == "string":
			c.kind = kDecimalStr
		case scale < 0:
			typ, c.kind, logical, version = "struct", kVarDecimal, "io.debezium.data.VariableScaleDecimal", 1
		default:
			typ, c.kind, logical, c.scale = "bytes", kDecimal, "org.apache.kafka.connect.data.Decimal", scale
			version = 1
			params = fmt.Sprintf(`{"scale":"%d","connect.decimal.precision":"%d"}`, scale, precision)
		}
	case oidBytea:
		typ, c.kind = "bytes", kBytes
	case oidDate:
		typ, c.kind, logical, version = "int32", kDate, "io.debezium.time.Date", 1
		if s.timeMode == "connect" {
			logical = "org.apache.kafka.connect.data.Date"
		}
	case oidTimestamp:
		p := precisionOf(typmod)
		switch {
		case s.timeMode == "connect":
			typ, c.kind, logical, version = "int64", kTimestampMs, "org.apache.kafka.connect.data.Timestamp", 1
		case p <= 3:
			typ, c.kind, logical, version = "int64", kTimestampMs, "io.debezium.time.Timestamp", 1
		default:
			typ, c.kind, logical, version = "int64", kTimestampUs, "io.debezium.time.MicroTimestamp", 1
		}
	case oidTimestampTZ:
		c.kind, logical, version = kZoned, "io.debezium.time.ZonedTimestamp", 1
	case oidTime:
		p := precisionOf(typmod)
		switch {
		case s.timeMode == "connect":
			typ, c.kind, logical, version = "int32", kTimeMs, "org.apache.kafka.connect.data.Time", 1
		case s.timeMode == "adaptive" && p <= 3:
			typ, c.kind, logical, version = "int32", kTimeMs, "io.debezium.time.Time", 1
		default:
			typ, c.kind, logical, version = "int64", kTimeUs, "io.debezium.time.MicroTime", 1
		}
	case oidUUID:
		c.kind, logical, version = kJSONText, "io.debezium.data.Uuid", 1
	case oidJSON, oidJSONB:
		c.kind, logical, version = kJSONText, "io.debezium.data.Json", 1
	default:
		c.kind = kString
	}
	var b strings.Builder
	b.WriteString(`{"type":"` + typ + `"`)
	if typ == "struct" {
		b.WriteString(`,"fields":[{"type":"int32","optional":false,"field":"scale"},{"type":"bytes","optional":false,"field":"value"}]`)
	}
	b.WriteString(`,"optional":` + strconv.FormatBool(optional))
	if logical != "" {
		b.WriteString(`,"name":"` + logical + `"`)
	}
	if version != 0 {
		b.WriteString(`,"version":` + strconv.Itoa(version))
	}
	if params != "" {
		b.WriteString(`,"parameters":` + params)
	}
	b.WriteByte('}')
	c.schema = b.String()
	return c
}

// precisionOf is a timestamp or time column's fractional digits (6 when undeclared).
func precisionOf(typmod int32) int {
	if typmod < 0 {
		return 6
	}
	return int(typmod)
}

// appendValue appends the JSON of a column's text value (as PostgreSQL's text output writes it,
// which both a snapshot's SELECT and pgoutput send).
func (c *column) appendValue(b []byte, text []byte) ([]byte, error) {
	switch c.kind {
	case kBool:
		return strconv.AppendBool(b, len(text) > 0 && text[0] == 't'), nil
	case kInt:
		return append(b, text...), nil
	case kFloat:
		switch string(text) {
		case "NaN", "Infinity", "-Infinity":
			return append(b, "null"...), nil
		}
		return append(b, text...), nil
	case kDecimal:
		unscaled, ok := unscaledDecimal(string(text), c.scale)
		if !ok {
			return nil, fmt.Errorf("NUMERIC value %q does not fit Connect's Decimal (set decimal.handling.mode=string or double)", text)
		}
		return appendBase64(b, twosComplement(unscaled)), nil
	case kVarDecimal:
		s := string(text)
		scale := 0
		if i := strings.IndexByte(s, '.'); i >= 0 {
			scale = len(s) - i - 1
		}
		unscaled, ok := unscaledDecimal(s, scale)
		if !ok {
			return nil, fmt.Errorf("NUMERIC value %q does not fit io.debezium.data.VariableScaleDecimal (set decimal.handling.mode=string or double)", text)
		}
		b = append(b, `{"scale":`...)
		b = strconv.AppendInt(b, int64(scale), 10)
		b = append(b, `,"value":`...)
		return append(appendBase64(b, twosComplement(unscaled)), '}'), nil
	case kBytes:
		raw, err := hex.DecodeString(strings.TrimPrefix(string(text), `\x`))
		if err != nil {
			return nil, fmt.Errorf("bytea value: %w", err)
		}
		return appendBase64(b, raw), nil
	case kDate:
		t, err := time.Parse("2006-01-02", string(text))
		if err != nil {
			return nil, fmt.Errorf("date value %q: %w", text, err)
		}
		return strconv.AppendInt(b, t.Unix()/86400, 10), nil
	case kTimestampMs, kTimestampUs:
		t, err := time.Parse("2006-01-02 15:04:05.999999999", string(text))
		if err != nil {
			return nil, fmt.Errorf("timestamp value %q: %w", text, err)
		}
		if c.kind == kTimestampMs {
			return strconv.AppendInt(b, t.UnixMilli(), 10), nil
		}
		return strconv.AppendInt(b, t.UnixMicro(), 10), nil
	case kZoned:
		t, err := time.Parse("2006-01-02 15:04:05.999999999-07", string(text))
		if err != nil {
			if t, err = time.Parse("2006-01-02 15:04:05.999999999-07:00", string(text)); err != nil {
				return nil, fmt.Errorf("timestamptz value %q: %w", text, err)
			}
		}
		return strconv.AppendQuote(b, t.UTC().Format("2006-01-02T15:04:05.999999Z")), nil
	case kTimeMs, kTimeUs:
		t, err := time.Parse("15:04:05.999999999", string(text))
		if err != nil {
			return nil, fmt.Errorf("time value %q: %w", text, err)
		}
		us := int64(t.Hour())*3600e6 + int64(t.Minute())*60e6 + int64(t.Second())*1e6 + int64(t.Nanosecond()/1000)
		if c.kind == kTimeMs {
			return strconv.AppendInt(b, us/1000, 10), nil
		}
		return strconv.AppendInt(b, us, 10), nil
	}
	return appendJSONString(b, text), nil
}

// appendFallback appends what Debezium writes for a required column it has no value of: 0,
// false, an empty string or bytes, the epoch.
func (c *column) appendFallback(b []byte) []byte {
	switch c.kind {
	case kBool:
		return append(b, "false"...)
	case kInt, kFloat, kDate, kTimestampMs, kTimestampUs, kTimeMs, kTimeUs:
		return append(b, '0')
	case kDecimal, kBytes:
		return append(b, `"AA=="`...)
	case kVarDecimal:
		return append(b, `{"scale":0,"value":"AA=="}`...)
	case kZoned:
		return append(b, `"1970-01-01T00:00:00Z"`...)
	}
	return append(b, `""`...)
}

// unscaledDecimal is a decimal text's value times 10^scale, exactly.
func unscaledDecimal(s string, scale int) (*big.Int, bool) {
	intPart, frac, _ := strings.Cut(s, ".")
	if len(frac) > scale {
		return nil, false
	}
	v, ok := new(big.Int).SetString(intPart+frac+strings.Repeat("0", scale-len(frac)), 10)
	return v, ok
}

// twosComplement is a big-endian two's complement of v in the fewest bytes, as Java's
// BigInteger.toByteArray (Connect's Decimal).
func twosComplement(v *big.Int) []byte {
	if v.Sign() >= 0 {
		b := v.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	n := (v.BitLen() + 8) / 8
	m := new(big.Int).Add(v, new(big.Int).Lsh(big.NewInt(1), uint(n*8)))
	b := m.Bytes()
	for len(b) < n {
		b = append([]byte{0xff}, b...)
	}
	for len(b) > 1 && b[0] == 0xff && b[1]&0x80 != 0 {
		b = b[1:]
	}
	return b
}

func appendBase64(b, raw []byte) []byte {
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, raw)
	return append(b, '"')
}

// appendJSONString appends s as a JSON string.
func appendJSONString(b, s []byte) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"':
			b = append(b, `\"`...)
		case '\\':
			b = append(b, `\\`...)
		case '\n':
			b = append(b, `\n`...)
		case '\r':
			b = append(b, `\r`...)
		case '\t':
			b = append(b, `\t`...)
		default:
			b = append(b, `\u00`...)
			b = append(b, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
