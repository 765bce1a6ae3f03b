package main

import (
	"encoding/hex"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/wasmconnect/wasmconnect/sdk/go/connect"
)

// PostgreSQL type OIDs the source maps to Connect types other than STRING.
const (
	oidBool        = 16
	oidBytea       = 17
	oidInt8        = 20
	oidInt2        = 21
	oidInt4        = 23
	oidFloat4      = 700
	oidFloat8      = 701
	oidDate        = 1082
	oidTime        = 1083
	oidTimestamp   = 1114
	oidTimestamptz = 1184
	oidNumeric     = 1700
)

// fieldSchema is the Connect schema of a result column, as the Confluent connector maps JDBC types
// with numeric.mapping=none: integers by size, NUMERIC(p,s) a Decimal of scale s, DATE, TIME and
// TIMESTAMP[TZ] the logical types, BYTEA bytes, everything else (text, varchar, uuid, json...) a
// string. A NUMERIC without a declared scale has no Decimal scale to give; it is a FLOAT64, as
// numeric.mapping=best_fit maps it.
func fieldSchema(oid uint32, typmod int32, optional bool) *connect.Schema {
	var s *connect.Schema
	switch oid {
	case oidBool:
		s = connect.PrimitiveSchema(connect.TypeBoolean, optional)
	case oidInt2:
		s = connect.PrimitiveSchema(connect.TypeInt16, optional)
	case oidInt4:
		s = connect.PrimitiveSchema(connect.TypeInt32, optional)
	case oidInt8:
		s = connect.PrimitiveSchema(connect.TypeInt64, optional)
	case oidFloat4:
		s = connect.PrimitiveSchema(connect.TypeFloat32, optional)
	case oidFloat8:
		s = connect.PrimitiveSchema(connect.TypeFloat64, optional)
	case oidBytea:
		s = connect.PrimitiveSchema(connect.TypeBytes, optional)
	case oidDate:
		s = connect.DateSchema(optional)
	case oidTime:
		s = connect.TimeSchema(optional)
	case oidTimestamp, oidTimestamptz:
		s = connect.TimestampSchema(optional)
	case oidNumeric:
		if typmod < 4 {
			s = connect.PrimitiveSchema(connect.TypeFloat64, optional)
			break
		}
		precision, scale := (typmod-4)>>16&0xffff, (typmod-4)&0xffff
		s = &connect.Schema{Type: connect.TypeBytes, Name: connect.DecimalName, Version: new(1), Optional: optional,
			Parameters: map[string]string{"scale": strconv.Itoa(int(scale)), "connect.decimal.precision": strconv.Itoa(int(precision))}}
	default:
		s = connect.PrimitiveSchema(connect.TypeString, optional)
	}
	return s
}

// parseText reads a column value in PostgreSQL's text format (the session's time zone is UTC) as
// the Go value of its Connect schema.
func parseText(oid uint32, s *connect.Schema, b []byte) (any, error) {
	str := string(b)
	switch oid {
	case oidBool:
		return str == "t", nil
	case oidInt2:
		n, err := strconv.ParseInt(str, 10, 16)
		return int16(n), err
	case oidInt4:
		n, err := strconv.ParseInt(str, 10, 32)
		return int32(n), err
	case oidInt8:
		return strconv.ParseInt(str, 10, 64)
	case oidFloat4:
		f, err := strconv.ParseFloat(pgFloat(str), 32)
		return float32(f), err
	case oidFloat8:
		return strconv.ParseFloat(pgFloat(str), 64)
	case oidBytea:
		if !strings.HasPrefix(str, `\x`) {
			return nil, fmt.Errorf("bytea %q is not in hex format (bytea_output=hex)", str)
		}
		return hex.DecodeString(str[2:])
	case oidDate:
		return time.Parse("2006-01-02", str)
	case oidTime:
		return time.Parse("15:04:05.999999999", str)
	case oidTimestamp, oidTimestamptz:
		return parseTimestamp(str)
	case oidNumeric:
		if s.Type == connect.TypeFloat64 {
			return strconv.ParseFloat(pgFloat(str), 64)
		}
		r, ok := new(big.Rat).SetString(str)
		if !ok {
			return nil, fmt.Errorf("numeric %q is not a finite number", str)
		}
		return r, nil
	}
	return str, nil
}

// pgFloat spells PostgreSQL's infinities as strconv reads them.
func pgFloat(s string) string {
	switch s {
	case "Infinity":
		return "+Inf"
	case "-Infinity":
		return "-Inf"
	}
	return s
}

func parseTimestamp(s string) (time.Time, error) {
	for _, layout := range []string{"2006-01-02 15:04:05.999999999", "2006-01-02 15:04:05.999999999-07", "2006-01-02 15:04:05.999999999-07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("timestamp %q cannot be read (infinite or BC timestamps have no Connect value)", s)
}
