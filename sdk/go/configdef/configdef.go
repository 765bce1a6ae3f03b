// Package configdef is the part of Kafka's ConfigDef (org.apache.kafka.common.config) that both
// sides of the plugin boundary apply: the types a setting may have, parsing a value as its type,
// hiding secrets, and the texts of Kafka's ConfigException. The SDK checks a plugin's settings with
// it inside the plugin, and the worker validates connector configs with it on the host, so the two
// word an error identically (the REST layer merges their answers) and hide the same values.
//
// It has no dependency beyond the standard library and no WebAssembly-only code, so guests and the
// host can both import it.
package configdef

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Type is the type of a setting, as ConfigDef.Type names it.
type Type string

// Setting types.
const (
	String   Type = "STRING"
	Int      Type = "INT"
	Short    Type = "SHORT"
	Long     Type = "LONG"
	Double   Type = "DOUBLE"
	Boolean  Type = "BOOLEAN"
	List     Type = "LIST"
	Class    Type = "CLASS"
	Password Type = "PASSWORD"
)

// Importance says how much a setting matters, as ConfigDef.Importance.
type Importance string

// Importance levels.
const (
	High   Importance = "HIGH"
	Medium Importance = "MEDIUM"
	Low    Importance = "LOW"
)

// Hidden is the text that stands for a secret value in messages and validation results, as
// Kafka's Password.toString.
const Hidden = "[hidden]"

// Secret reports whether the value of setting name of type t is never shown: a PASSWORD, as in
// Kafka, and also any setting whose name says it holds a password, so that a secret a plugin
// declared as a plain string does not reach a log line or a REST answer either.
func Secret(name string, t Type) bool {
	return t == Password || strings.Contains(strings.ToLower(name), "password")
}

// Value is a setting's value parsed as its type, as ConfigDef.parseType returns it.
type Value struct {
	Null   bool // no value: the setting is unset without a default, or did not parse
	Type   Type
	Str    string   // STRING, PASSWORD and CLASS; INT, SHORT, LONG, DOUBLE and BOOLEAN as Java writes them back
	List   []string // LIST
	Num    float64  // INT, SHORT, LONG and DOUBLE
	Secret bool     // see Secret
}

// Parse reads raw as a value of type t (empty means STRING) for setting name: trimmed, then
// parsed. A value that does not parse is an *Error with Kafka's text ("Invalid value x for
// configuration n: Not a number of type INT") and a Null Value.
func Parse(name string, t Type, raw string) (Value, error) {
	if t == "" {
		t = String
	}
	t = Type(strings.ToUpper(string(t)))
	s := strings.TrimSpace(raw)
	v := Value{Type: t, Str: s, Secret: Secret(name, t)}
	fail := func(msg string) (Value, error) {
		return Value{Null: true, Type: t, Secret: v.Secret}, Invalid(name, raw, msg)
	}
	switch t {
	case Boolean:
		if !strings.EqualFold(s, "true") && !strings.EqualFold(s, "false") {
			return fail("Expected value to be either true or false")
		}
		v.Str = strings.ToLower(s)
	case Int, Short, Long:
		bits := map[Type]int{Int: 32, Short: 16, Long: 64}[t]
		n, err := strconv.ParseInt(s, 10, bits)
		if err != nil {
			return fail("Not a number of type " + string(t))
		}
		v.Str, v.Num = strconv.FormatInt(n, 10), float64(n)
	case Double:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fail("Not a number of type DOUBLE")
		}
		v.Num = f
	case List:
		v.List = SplitList(s)
	}
	return v, nil
}

// SplitList splits a LIST value at commas with blanks trimmed, as Kafka does: an empty value is
// an empty list, and trailing empty elements are dropped (Java's String.split).
func SplitList(s string) []string {
	s = strings.TrimSpace(s)
	if s == "" {
		return []string{}
	}
	list := strings.Split(s, ",")
	for i := range list {
		list[i] = strings.TrimSpace(list[i])
	}
	for len(list) > 0 && list[len(list)-1] == "" {
		list = list[:len(list)-1]
	}
	return list
}

// Display is ConfigDef.convertToString: the value as a validation result shows it; nil for no
// value, Hidden for a secret.
func (v Value) Display() *string {
	if v.Null {
		return nil
	}
	s := v.Str
	switch {
	case v.Secret:
		s = Hidden
	case v.Type == List:
		s = strings.Join(v.List, ",")
	}
	return &s
}

// Java is the value as Java's String.valueOf prints it in a ConfigException.
func (v Value) Java() string {
	switch {
	case v.Null:
		return "null"
	case v.Secret:
		return Hidden
	case v.Type == List:
		return "[" + strings.Join(v.List, ", ") + "]"
	case v.Type == Class:
		return "class " + v.Str
	}
	return v.Str
}

// Error is a problem with one setting, worded as Kafka's ConfigException.
type Error struct {
	Key string // the setting; "" for the configuration as a whole
	Msg string
}

func (e *Error) Error() string { return e.Msg }

// Invalid is ConfigException(name, value, message): "Invalid value <value> for configuration
// <name>: <message>". A value given as a string is hidden if the setting's name says it is a
// password (see Secret); give a Value's Java() for the rest.
func Invalid(name string, value any, msg string) *Error {
	if _, ok := value.(string); ok && Secret(name, String) {
		value = Hidden
	}
	return &Error{Key: name, Msg: fmt.Sprintf("Invalid value %v for configuration %s: %s", value, name, msg)}
}

// Missing is ConfigDef's error for a setting that has no value and no default.
func Missing(name string) *Error {
	return &Error{Key: name, Msg: fmt.Sprintf("Missing required configuration %q which has no default value.", name)}
}

// ValidString is ConfigDef.ValidString, or CaseInsensitiveValidString with IgnoreCase: the
// values a STRING setting may take.
type ValidString struct {
	Values     []string
	IgnoreCase bool
}

// Allows reports whether v is one of the values.
func (vs ValidString) Allows(v string) bool {
	if vs.IgnoreCase {
		return slices.ContainsFunc(vs.Values, func(a string) bool { return strings.EqualFold(a, v) })
	}
	return slices.Contains(vs.Values, v)
}

// Message is the validator's message for a value it does not allow; the case-insensitive one
// names the values in upper case, as Kafka's does.
func (vs ValidString) Message() string {
	if !vs.IgnoreCase {
		return "String must be one of: " + strings.Join(vs.Values, ", ")
	}
	upper := make([]string, len(vs.Values))
	for i, a := range vs.Values {
		upper[i] = strings.ToUpper(a)
	}
	return "String must be one of (case insensitive): " + strings.Join(upper, ", ")
}
