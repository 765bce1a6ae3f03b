package store

import "testing"

func TestAppendJSONStringMatchesJackson(t *testing.T) {
	for in, want := range map[string]string{
		"plain":             `"plain"`,
		`q"b\s`:             `"q\"b\\s"`,
		"\b\t\n\f\r":        `"\b\t\n\f\r"`,
		"\x00\x1f\x7f":      "\"\\u0000\\u001F\x7f\"",
		"<a href='x'>&</a>": `"<a href='x'>&</a>"`,
		"é\u2028漢":          "\"é\u2028漢\"",
		"bad\xffutf8":       "\"bad\uFFFDutf8\"",
		"/slash":            `"/slash"`,
	} {
		if got := string(appendJSONString(nil, in)); got != want {
			t.Errorf("appendJSONString(%q) = %s, want %s", in, got, want)
		}
	}
}

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
