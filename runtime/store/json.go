package store

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/wasmconnect/wasmconnect/sdk/go/connect"
)

// The internal topics hold JSON written by Kafka Connect's JsonConverter
// (schemas disabled), which serializes with Jackson. We write the same bytes
// Jackson would for the same logical value, so Java workers and tools that
// compare or look up raw bytes (the offsets topic is keyed by them) agree
// with us. encoding/json differs from Jackson in its escaping (it escapes
// <, >, &, U+2028 and U+2029, and uses lowercase hex), so strings are
// written with connect.AppendJSONString, which escapes as Jackson does.
// Object keys we create are sorted, which makes the output deterministic;
// Java's own order depends on its HashMap iteration.

// appendStringMap appends m as a JSON object with sorted keys. A nil map is
// written as {}: Connect config maps are never null.
func appendStringMap(dst []byte, m map[string]string) []byte {
	dst, _ = appendObject(dst, m, func(dst []byte, v string) ([]byte, error) {
		return connect.AppendJSONString(dst, v), nil
	})
	return dst
}

// appendObject appends m as a JSON object with sorted keys, each value
// written by appendValue.
func appendObject[V any](dst []byte, m map[string]V, appendValue func([]byte, V) ([]byte, error)) ([]byte, error) {
	dst = append(dst, '{')
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = connect.AppendJSONString(dst, k)
		dst = append(dst, ':')
		var err error
		if dst, err = appendValue(dst, m[k]); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

// appendCanonicalJSON appends v, a value produced by connect.DecodeJSON, as compact
// Jackson-style JSON with object keys sorted.
func appendCanonicalJSON(dst []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		return strconv.AppendBool(dst, v), nil
	case json.Number:
		return append(dst, v...), nil
	case string:
		return connect.AppendJSONString(dst, v), nil
	case []any:
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendCanonicalJSON(dst, e); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case map[string]any:
		return appendObject(dst, v, appendCanonicalJSON)
	default:
		return nil, fmt.Errorf("unsupported JSON value of type %T", v)
	}
}

// decodeObject parses data as a JSON object. A JSON null yields a nil map
// and no error, so callers can tell a null apart from a malformed value.
func decodeObject(data []byte) (map[string]any, error) {
	v, err := connect.DecodeJSON(data)
	if err != nil {
		return nil, err
	}
	switch v := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return v, nil
	default:
		return nil, fmt.Errorf("want a JSON object, got %s", jsonKind(v))
	}
}

// stringMap converts a decoded JSON object to the map[string]string Connect
// configs are. Java reads these maps without checking the value types; we
// keep strings, drop nulls (a null config value means "unset"), and keep
// other scalars as their JSON text.
func stringMap(v any) (map[string]string, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("want a JSON object, got %s", jsonKind(v))
	}
	out := make(map[string]string, len(obj))
	for k, e := range obj {
		switch e := e.(type) {
		case nil:
		case string:
			out[k] = e
		case json.Number:
			out[k] = e.String()
		case bool:
			out[k] = strconv.FormatBool(e)
		default:
			return nil, fmt.Errorf("value of %q is %s, want a string", k, jsonKind(e))
		}
	}
	return out, nil
}

// jsonKind names the JSON type of a decoded value for error messages.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// intField reads an integral JSON number field of obj.
func intField(obj map[string]any, name string) (int64, error) {
	n, ok := obj[name].(json.Number)
	if !ok {
		return 0, fmt.Errorf("field %q is %s, want an integer", name, jsonKind(obj[name]))
	}
	i, err := n.Int64()
	if err != nil {
		return 0, fmt.Errorf("field %q is %s, want an integer", name, n)
	}
	return i, nil
}
