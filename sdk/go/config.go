package sdk

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// Config is a plugin's configuration. Values are strings, as in Kafka Connect. The SDK fills in the
// defaults of the plugin's ConfigDefs before it hands a connector or converter its Config.
type Config map[string]string

// String returns the value of key, or def if the key is not set.
func (c Config) String(key, def string) string {
	if v, ok := c[key]; ok {
		return v
	}
	return def
}

// Int returns the value of key as a 32-bit integer (Kafka's INT), or def if the key is not set.
func (c Config) Int(key string, def int) (int, error) {
	v, ok := c[key]
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
	if err != nil {
		return def, invalidValue(key, v, "Not a number of type INT")
	}
	return int(n), nil
}

// Int64 returns the value of key as a 64-bit integer (Kafka's LONG), or def if the key is not set.
func (c Config) Int64(key string, def int64) (int64, error) {
	v, ok := c[key]
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return def, invalidValue(key, v, "Not a number of type LONG")
	}
	return n, nil
}

// Float64 returns the value of key as a float (Kafka's DOUBLE), or def if the key is not set.
func (c Config) Float64(key string, def float64) (float64, error) {
	v, ok := c[key]
	if !ok {
		return def, nil
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		return def, invalidValue(key, v, "Not a number of type DOUBLE")
	}
	return f, nil
}

// Bool returns the value of key as a boolean ("true" or "false", any case), or def if the key is not set.
func (c Config) Bool(key string, def bool) (bool, error) {
	v, ok := c[key]
	if !ok {
		return def, nil
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return def, invalidValue(key, v, "Expected value to be either true or false")
}

// List returns the value of key split at commas with blanks trimmed (Kafka's LIST), or def if the key
// is not set. An empty value is an empty list.
func (c Config) List(key string, def []string) []string {
	v, ok := c[key]
	if !ok {
		return def
	}
	v = strings.TrimSpace(v)
	if v == "" {
		return []string{}
	}
	parts := strings.Split(v, ",")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	return parts
}

// Clone returns a copy of c.
func (c Config) Clone() Config {
	out := make(Config, len(c))
	for k, v := range c {
		out[k] = v
	}
	return out
}

// ConfigType is the type of a config value, as Kafka's ConfigDef.Type names it.
type ConfigType string

// Config types. The SDK checks INT, SHORT, LONG, DOUBLE and BOOLEAN values before a plugin sees them.
const (
	TypeString   ConfigType = "STRING"
	TypeInt      ConfigType = "INT"
	TypeShort    ConfigType = "SHORT"
	TypeLong     ConfigType = "LONG"
	TypeDouble   ConfigType = "DOUBLE"
	TypeBoolean  ConfigType = "BOOLEAN"
	TypeList     ConfigType = "LIST"
	TypeClass    ConfigType = "CLASS"
	TypePassword ConfigType = "PASSWORD"
)

// Importance says how much a setting matters, as in Kafka's ConfigDef.
type Importance string

// Importance levels.
const (
	High   Importance = "HIGH"
	Medium Importance = "MEDIUM"
	Low    Importance = "LOW"
)

// ConfigDef defines one setting of a plugin. It becomes a ConfigKeyInfo in the descriptor, and the
// SDK uses it to check configs (required keys, types, Validator) and to fill in defaults.
type ConfigDef struct {
	Name string
	Type ConfigType // empty means STRING
	// Required: the key must be set; it has no default. Kafka calls this NO_DEFAULT_VALUE.
	Required bool
	// Default is the default value; nil means the default is null (Kafka's "null" default).
	// Go 1.26: Default: new("2000").
	Default       *string
	Importance    Importance // empty means MEDIUM
	Documentation string
	Group         string
	Order         int    // order in Group; ignored without a Group
	Width         string // NONE, SHORT, MEDIUM, LONG; empty means NONE
	DisplayName   string // empty means Name
	Dependents    []string
	// Validator checks a value that is set and of the right type. Its error message is shown as
	// "Invalid value <v> for configuration <name>: <message>".
	Validator func(value string) error
}

// OneOf returns a Validator accepting only the given values (exact match).
func OneOf(values ...string) func(string) error {
	return func(v string) error {
		if slices.Contains(values, v) {
			return nil
		}
		return fmt.Errorf("String must be one of: %s", strings.Join(values, ", "))
	}
}

// OneOfIgnoreCase returns a Validator accepting the given values in any case.
func OneOfIgnoreCase(values ...string) func(string) error {
	return func(v string) error {
		for _, a := range values {
			if strings.EqualFold(a, v) {
				return nil
			}
		}
		return fmt.Errorf("String must be one of (case insensitive): %s", strings.Join(values, ", "))
	}
}

func (d *ConfigDef) typ() ConfigType {
	if d.Type == "" {
		return TypeString
	}
	return d.Type
}

func (d *ConfigDef) key() wire.ConfigKey {
	k := wire.ConfigKey{
		Name:          d.Name,
		Type:          string(d.typ()),
		Required:      d.Required,
		Importance:    string(d.Importance),
		Documentation: d.Documentation,
		Order:         -1,
		Width:         d.Width,
		DisplayName:   d.DisplayName,
		Dependents:    d.Dependents,
	}
	if !d.Required && d.Default != nil {
		v := *d.Default
		k.DefaultValue = &v
	}
	if k.Importance == "" {
		k.Importance = string(Medium)
	}
	if d.Group != "" {
		g := d.Group
		k.Group = &g
		k.Order = d.Order
	}
	if k.Width == "" {
		k.Width = "NONE"
	}
	if k.DisplayName == "" {
		k.DisplayName = d.Name
	}
	if k.Dependents == nil {
		k.Dependents = []string{}
	}
	return k
}

// check returns the error message for the value v of this key, or "".
func (d *ConfigDef) check(v string) string {
	t := strings.TrimSpace(v)
	var bad string
	switch d.typ() {
	case TypeInt:
		if _, err := strconv.ParseInt(t, 10, 32); err != nil {
			bad = "Not a number of type INT"
		}
	case TypeShort:
		if _, err := strconv.ParseInt(t, 10, 16); err != nil {
			bad = "Not a number of type SHORT"
		}
	case TypeLong:
		if _, err := strconv.ParseInt(t, 10, 64); err != nil {
			bad = "Not a number of type LONG"
		}
	case TypeDouble:
		if _, err := strconv.ParseFloat(t, 64); err != nil {
			bad = "Not a number of type DOUBLE"
		}
	case TypeBoolean:
		if !strings.EqualFold(t, "true") && !strings.EqualFold(t, "false") {
			bad = "Expected value to be either true or false"
		}
	}
	if bad == "" && d.Validator != nil {
		if err := d.Validator(v); err != nil {
			bad = err.Error()
		}
	}
	if bad == "" {
		return ""
	}
	return invalidValue(d.Name, v, bad).Error()
}

// configError is a config problem worded as Kafka's ConfigException words it.
type configError struct{ key, msg string }

func (e *configError) Error() string { return e.msg }

func invalidValue(key, value, msg string) error {
	if key != "" && strings.Contains(strings.ToLower(key), "password") {
		value = "[hidden]"
	}
	return &configError{key, fmt.Sprintf("Invalid value %s for configuration %s: %s", value, key, msg)}
}

// InvalidConfig returns an error worded as Kafka's ConfigException: "Invalid value <value> for
// configuration <key>: <msg>". Returned from a transformation's or predicate's Configure, VALIDATE
// reports it under key.
func InvalidConfig(key, value, msg string) error { return invalidValue(key, value, msg) }

func missingValue(key string) string {
	return fmt.Sprintf("Missing required configuration \"%s\" which has no default value.", key)
}

// checkConfig checks cfg against defs: required keys, types and Validators. It returns the error
// messages per key (nil if there are none).
func checkConfig(defs []ConfigDef, cfg Config) map[string][]string {
	var errs map[string][]string
	add := func(k, msg string) {
		if errs == nil {
			errs = map[string][]string{}
		}
		errs[k] = append(errs[k], msg)
	}
	for i := range defs {
		d := &defs[i]
		v, ok := cfg[d.Name]
		if !ok {
			if d.Required {
				add(d.Name, missingValue(d.Name))
			}
			continue
		}
		if d.typ() == TypePassword {
			if d.Validator != nil {
				if err := d.Validator(v); err != nil {
					add(d.Name, invalidValue(d.Name, "[hidden]", err.Error()).Error())
				}
			}
			continue
		}
		if msg := d.check(v); msg != "" {
			add(d.Name, msg)
		}
	}
	return errs
}

// withDefaults returns a copy of cfg with the defaults of defs filled in for unset keys.
func withDefaults(defs []ConfigDef, cfg map[string]string) Config {
	out := make(Config, len(cfg)+len(defs))
	for k, v := range cfg {
		out[k] = v
	}
	for i := range defs {
		d := &defs[i]
		if _, ok := out[d.Name]; !ok && !d.Required && d.Default != nil {
			out[d.Name] = *d.Default
		}
	}
	return out
}

// mergeErrors adds the messages of more to errs, skipping duplicates, and drops empty entries.
func mergeErrors(errs, more map[string][]string) map[string][]string {
	if errs == nil {
		errs = map[string][]string{}
	}
	for k, msgs := range more {
		for _, m := range msgs {
			if !slices.Contains(errs[k], m) {
				errs[k] = append(errs[k], m)
			}
		}
	}
	for k, msgs := range errs {
		if len(msgs) == 0 {
			delete(errs, k)
		}
	}
	return errs
}

// formatErrors renders per-key errors as one line, keys sorted.
func formatErrors(errs map[string][]string) string {
	keys := make([]string, 0, len(errs))
	for k := range errs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(strings.Join(errs[k], " "))
	}
	return b.String()
}
