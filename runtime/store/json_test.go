package store

import "testing"

func TestCanonicalJSON(t *testing.T) {
	for in, want := range map[string]string{
		`{ "b": 1, "a": {"y": true, "x": null}, "c": [3, "é"] }`: `{"a":{"x":null,"y":true},"b":1,"c":[3,"é"]}`,
		`{"n": 1.50, "e": 1E+3, "big": 12345678901234567890}`:    `{"big":12345678901234567890,"e":1E+3,"n":1.50}`,
		`{"s": "\u003c\u0041\n"}`:                                `{"s":"<A\n"}`,
	} {
		v, err := decodeJSON([]byte(in))
		must(t, err)
		got, err := appendCanonicalJSON(nil, v)
		must(t, err)
		if string(got) != want {
			t.Errorf("canonical(%s) = %s, want %s", in, got, want)
		}
	}
	if _, err := decodeJSON([]byte(`{} {}`)); err == nil {
		t.Error("trailing data accepted")
	}
}
