package store

import (
	"testing"

	"github.com/wasmconnect/wasmconnect/sdk/go/connect"
)

func TestCanonicalJSON(t *testing.T) {
	for in, want := range map[string]string{
		`{ "b": 1, "a": {"y": true, "x": null}, "c": [3, "é"] }`: `{"a":{"x":null,"y":true},"b":1,"c":[3,"é"]}`,
		`{"n": 1.50, "e": 1E+3, "big": 12345678901234567890}`:    `{"big":12345678901234567890,"e":1E+3,"n":1.50}`,
		`{"s": "\u003c\u0041\n"}`:                                `{"s":"<A\n"}`,
	} {
		v, err := connect.DecodeJSON([]byte(in))
		must(t, err)
		got, err := appendCanonicalJSON(nil, v)
		must(t, err)
		if string(got) != want {
			t.Errorf("canonical(%s) = %s, want %s", in, got, want)
		}
	}
	// Trailing data is refused whatever it is: a record of an internal topic is one JSON value.
	for _, in := range []string{`{} {}`, `{} ]`, `{} }`, `{"a":1} x`} {
		if _, err := decodeObject([]byte(in)); err == nil {
			t.Errorf("trailing data accepted in %s", in)
		}
	}
}
