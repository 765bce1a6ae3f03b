package connect

import "testing"

func TestAppendJSONStringMatchesJackson(t *testing.T) {
	for in, want := range map[string]string{
		"plain":             `"plain"`,
		`q"b\s`:             `"q\"b\\s"`,
		"\b\t\n\f\r":        `"\b\t\n\f\r"`,
		"\x00\x1f\x7f":      "\"\\u0000\\u001F\x7f\"",
		"\x0b\x1a":          `"\u000B\u001A"`,
		"<a href='x'>&</a>": `"<a href='x'>&</a>"`,
		"é\u2028漢😀":         "\"é\u2028漢😀\"",
		"\uFFFD":            "\"\uFFFD\"",
		"bad\xffutf8":       "\"bad\uFFFDutf8\"",
		"/slash":            `"/slash"`,
		"":                  `""`,
	} {
		if got := string(AppendJSONString(nil, in)); got != want {
			t.Errorf("AppendJSONString(%q) = %s, want %s", in, got, want)
		}
		if got := string(AppendJSONString([]byte("x"), []byte(in))); got != "x"+want {
			t.Errorf("AppendJSONString(%q as []byte) = %s, want x%s", in, got, want)
		}
	}
}
