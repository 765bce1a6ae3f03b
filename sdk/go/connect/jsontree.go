package connect

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// DecodeJSON parses exactly one JSON value into a tree of map[string]any, []any, string, bool,
// nil and json.Number (numbers keep their literal text, so that writing them again does not change
// their form: 30 stays 30, 1.0 stays 1.0). Anything after the value but JSON white space is an
// error: "{} }" and "{} ]" are not JSON values, whatever a lenient reader makes of them.
//
// Schemas, the JsonConverter's envelopes and the records of Connect's internal topics are all read
// with it, so that they agree on what is JSON.
func DecodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	for i := int(d.InputOffset()); i < len(b); i++ {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
		default:
			return nil, fmt.Errorf("unexpected data after the JSON value at byte %d", i)
		}
	}
	return v, nil
}
