package sdk

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/wasmconnect/wasmconnect/sdk/go/configdef"
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
	v, err := c.parse(key, configdef.Int)
	if err != nil || v.Null {
		return def, err
	}
	return int(v.Num), nil
}

// Int64 returns the value of key as a 64-bit integer (Kafka's LONG), or def if the key is not set.
func (c Config) Int64(key string, def int64) (int64, error) {
	v, err := c.parse(key, configdef.Long)
	if err != nil || v.Null {
		return def, err
	}
	return strconv.ParseInt(v.Str, 10, 64) // v.Str is the number as parsed, exact where Num is not
}

// Float64 returns the value of key as a float (Kafka's DOUBLE), or def if the key is not set.
func (c Config) Float64(key string, def float64) (float64, error) {
	v, err := c.parse(key, configdef.Double)
	if err != nil || v.Null {
		return def, err
	}
	return v.Num, nil
}

// Bool returns the value of key as a boolean ("true" or "false", any case), or def if the key is not set.
func (c Config) Bool(key string, def bool) (bool, error) {
	v, err := c.parse(key, configdef.Boolean)
	if err != nil || v.Null {
		return def, err
	}
	return v.Str == "true", nil
}

// List returns the value of key split at commas with blanks trimmed (Kafka's LIST), or def if the key
// is not set. An empty value is an empty list.
func (c Config) List(key string, def []string) []string {
	v, ok := c[key]
	if !ok {
		return def
	}
	return configdef.SplitList(v)
}

// parse parses the value of key as type t; a Null Value if the key is not set.
func (c Config) parse(key string, t configdef.Type) (configdef.Value, error) {
	v, ok := c[key]
	if !ok {
		return configdef.Value{Null: true}, nil
	}
	return configdef.Parse(key, t, v)
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
type ConfigType = configdef.Type

// Config types. The SDK checks INT, SHORT, LONG, DOUBLE and BOOLEAN values before a plugin sees
// them, and never shows a PASSWORD value (nor that of a key whose name says it is a password) in
// an error.
const (
	TypeString   = configdef.String
	TypeInt      = configdef.Int
	TypeShort    = configdef.Short
	TypeLong     = configdef.Long
	TypeDouble   = configdef.Double
	TypeBoolean  = configdef.Boolean
	TypeList     = configdef.List
	TypeClass    = configdef.Class
	TypePassword = configdef.Password
)

// Importance says how much a setting matters, as in Kafka's ConfigDef.
type Importance = configdef.Importance

// Importance levels.
const (
	High   = configdef.High
	Medium = configdef.Medium
	Low    = configdef.Low
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
	return validString(configdef.ValidString{Values: values})
}

// OneOfIgnoreCase returns a Validator accepting the given values in any case.
func OneOfIgnoreCase(values ...string) func(string) error {
	return validString(configdef.ValidString{Values: values, IgnoreCase: true})
}

func validString(vs configdef.ValidString) func(string) error {
	return func(v string) error {
		if !vs.Allows(v) {
			return errors.New(vs.Message())
		}
		return nil
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

// check returns the error message for the value v of this key, or "": the type's, then the
// Validator's, both worded as Kafka's ConfigException.
func (d *ConfigDef) check(v string) string {
	p, err := configdef.Parse(d.Name, d.typ(), v)
	if err != nil {
		return err.Error()
	}
	if d.Validator == nil {
		return ""
	}
	if err := d.Validator(v); err != nil {
		value := any(v)
		if p.Secret {
			value = configdef.Hidden
		}
		return configdef.Invalid(d.Name, value, err.Error()).Error()
	}
	return ""
}

// InvalidConfig returns an error worded as Kafka's ConfigException: "Invalid value <value> for
// configuration <key>: <msg>" (the value hidden if key names a password). Returned from a
// transformation's or predicate's Configure, VALIDATE reports it under key.
func InvalidConfig(key, value, msg string) error { return configdef.Invalid(key, value, msg) }

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
				add(d.Name, configdef.Missing(d.Name).Error())
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
