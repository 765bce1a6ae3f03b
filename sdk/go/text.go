package sdk

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// AppendText appends the text form of v to dst, as Kafka's toString() renders a value for
// FileStreamSink and StringConverter: a string's text, raw bytes as they are, a JSON string payload
// unquoted, any other JSON payload as JSON text, and null as "null".
func AppendText(dst []byte, v Data) ([]byte, error) {
	switch v.Tag {
	case TagNull:
		return append(dst, "null"...), nil
	case TagString, TagBytes:
		return append(dst, v.Bytes...), nil
	case TagJSON:
		p := bytes.TrimSpace(v.Bytes)
		if len(p) == 0 {
			return append(dst, "null"...), nil
		}
		if p[0] != '"' {
			return append(dst, p...), nil
		}
		if len(p) >= 2 && p[len(p)-1] == '"' && bytes.IndexByte(p, '\\') < 0 {
			return append(dst, p[1:len(p)-1]...), nil
		}
		var s string
		if err := json.Unmarshal(p, &s); err != nil {
			return dst, fmt.Errorf("invalid JSON string payload: %w", err)
		}
		return append(dst, s...), nil
	}
	return dst, fmt.Errorf("unknown data tag %d", v.Tag)
}
