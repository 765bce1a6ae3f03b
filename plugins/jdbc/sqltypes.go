package main

import (
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/wasmconnect/wasmconnect/sdk/go/connect"
)

// sqlType is the PostgreSQL column type of a Connect schema, as the Confluent connector's
// PostgreSqlDatabaseDialect maps it for CREATE TABLE and ALTER TABLE.
func sqlType(s *connect.Schema) (string, error) {
	switch s.Name {
	case connect.DecimalName:
		return "DECIMAL", nil
	case connect.DateName:
		return "DATE", nil
	case connect.TimeName:
		return "TIME", nil
	case connect.TimestampName:
		return "TIMESTAMP", nil
	}
	switch s.Type {
	case connect.TypeInt8, connect.TypeInt16:
		return "SMALLINT", nil
	case connect.TypeInt32:
		return "INT", nil
	case connect.TypeInt64:
		return "BIGINT", nil
	case connect.TypeFloat32:
		return "REAL", nil
	case connect.TypeFloat64:
		return "DOUBLE PRECISION", nil
	case connect.TypeBoolean:
		return "BOOLEAN", nil
	case connect.TypeString:
		return "TEXT", nil
	case connect.TypeBytes:
		return "BYTEA", nil
	case connect.TypeArray:
		if s.Items != nil && s.Items.Type.IsPrimitive() {
			t, err := sqlType(s.Items)
			return t + "[]", err
		}
	}
	return "", fmt.Errorf("a %s has no PostgreSQL column type (the JDBC sink writes primitive fields, their arrays and the Decimal, Date, Time and Timestamp logical types; flatten nested structs with the Flatten transformation)", describe(s))
}

func describe(s *connect.Schema) string {
	if s.Name != "" {
		return s.Name
	}
	return s.Type.JavaName()
}

// sqlLiteral is a default value in a column definition (DEFAULT ...).
func sqlLiteral(s *connect.Schema, v any) (string, error) {
	b, err := appendText(nil, s, v)
	if err != nil {
		return "", err
	}
	return "'" + strings.ReplaceAll(string(b), "'", "''") + "'", nil
}

// appendText appends v, a value of schema s as package connect decodes it, in PostgreSQL's text
// format: a parameter the server parses as the column's type. The caller handles nil (NULL).
func appendText(dst []byte, s *connect.Schema, v any) ([]byte, error) {
	switch s.Name {
	case connect.DecimalName:
		r, ok := v.(*big.Rat)
		if !ok {
			return nil, fmt.Errorf("Decimal value is a %T", v)
		}
		scale, _ := strconv.Atoi(s.Parameters["scale"])
		return append(dst, r.FloatString(max(scale, 0))...), nil
	case connect.DateName, connect.TimeName, connect.TimestampName:
		t, ok := v.(time.Time)
		if !ok {
			return nil, fmt.Errorf("%s value is a %T", s.Name, v)
		}
		t = t.UTC()
		switch s.Name {
		case connect.DateName:
			return t.AppendFormat(dst, "2006-01-02"), nil
		case connect.TimeName:
			return t.AppendFormat(dst, "15:04:05.999999"), nil
		}
		return t.AppendFormat(dst, "2006-01-02 15:04:05.999999"), nil
	}
	switch x := v.(type) {
	case int8:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int16:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case float32:
		return appendFloat(dst, float64(x), 32), nil
	case float64:
		return appendFloat(dst, x, 64), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case string:
		if strings.IndexByte(x, 0) >= 0 {
			return nil, fmt.Errorf("string holds a NUL character, which PostgreSQL text cannot store")
		}
		return append(dst, x...), nil
	case []byte:
		dst = append(dst, `\x`...)
		return hex.AppendEncode(dst, x), nil
	case []any:
		if s.Items == nil {
			return nil, fmt.Errorf("array without an item schema")
		}
		dst = append(dst, '{')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			if e == nil {
				dst = append(dst, "NULL"...)
				continue
			}
			elem, err := appendText(nil, s.Items, e)
			if err != nil {
				return nil, err
			}
			dst = append(dst, '"')
			for _, c := range elem {
				if c == '"' || c == '\\' {
					dst = append(dst, '\\')
				}
				dst = append(dst, c)
			}
			dst = append(dst, '"')
		}
		return append(dst, '}'), nil
	}
	return nil, fmt.Errorf("a %s value has no PostgreSQL column type", describe(s))
}

func appendFloat(dst []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, bits)
}
