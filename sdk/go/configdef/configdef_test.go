package configdef

import (
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name    string
		typ     Type
		raw     string
		display string // "<nil>" for none
		java    string
		err     string
	}{
		{"s", "", " x ", "x", "x", ""},
		{"i", Int, " 042 ", "42", "42", ""},
		{"i", Int, "3000000000", "<nil>", "null", "Invalid value 3000000000 for configuration i: Not a number of type INT"},
		{"sh", Short, "40000", "<nil>", "null", "Invalid value 40000 for configuration sh: Not a number of type SHORT"},
		{"l", Long, "x", "<nil>", "null", "Invalid value x for configuration l: Not a number of type LONG"},
		{"d", Double, "1e3", "1e3", "1e3", ""},
		{"d", Double, "y", "<nil>", "null", "Invalid value y for configuration d: Not a number of type DOUBLE"},
		{"b", Boolean, "TRUE", "true", "true", ""},
		{"b", Boolean, "1", "<nil>", "null", "Invalid value 1 for configuration b: Expected value to be either true or false"},
		{"list", List, " a, b ,c,, ", "a,b,c", "[a, b, c]", ""},
		{"c", Class, "org.X", "org.X", "class org.X", ""},
		{"secret", Password, "hunter2", Hidden, Hidden, ""},
		{"db.password", String, "hunter2", Hidden, Hidden, ""},
		{"db.Password", Int, "hunter2", "<nil>", "null", "Invalid value [hidden] for configuration db.Password: Not a number of type INT"},
	} {
		v, err := Parse(tc.name, tc.typ, tc.raw)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		display := "<nil>"
		if d := v.Display(); d != nil {
			display = *d
		}
		if gotErr != tc.err || display != tc.display || v.Java() != tc.java {
			t.Errorf("Parse(%s, %s, %q) = %q %q %v, want %q %q %q", tc.name, tc.typ, tc.raw, display, v.Java(), err, tc.display, tc.java, tc.err)
		}
	}
	if got := SplitList(""); got == nil || len(got) != 0 {
		t.Errorf("SplitList(\"\") = %#v", got)
	}
}

func TestMessages(t *testing.T) {
	if got := Missing("x").Error(); got != `Missing required configuration "x" which has no default value.` {
		t.Errorf("Missing: %s", got)
	}
	if got := Invalid("topics.password", "abc", "too short"); got.Key != "topics.password" || got.Msg != "Invalid value [hidden] for configuration topics.password: too short" {
		t.Errorf("Invalid: %+v", got)
	}
	exact := ValidString{Values: []string{"none", "all"}}
	if !exact.Allows("all") || exact.Allows("ALL") || exact.Message() != "String must be one of: none, all" {
		t.Errorf("ValidString: %v %v %s", exact.Allows("all"), exact.Allows("ALL"), exact.Message())
	}
	anyCase := ValidString{Values: []string{"base64", "Numeric"}, IgnoreCase: true}
	if !anyCase.Allows("NUMERIC") || anyCase.Allows("hex") || anyCase.Message() != "String must be one of (case insensitive): BASE64, NUMERIC" {
		t.Errorf("case-insensitive ValidString: %s", anyCase.Message())
	}
	if !reflect.DeepEqual(SplitList("a,,b"), []string{"a", "", "b"}) {
		t.Errorf("SplitList keeps inner empties: %q", SplitList("a,,b"))
	}
}
