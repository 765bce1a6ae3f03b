package connect

// ConfigKeyInfo is one config definition, as GET /connector-plugins/{plugin}/config lists them and as
// the "definition" of a validation result shows them. Its fields are those of sdk/go/wire.ConfigKey
// in the same order, so a plugin descriptor's key converts directly: connect.ConfigKeyInfo(k).
type ConfigKeyInfo struct {
	Name          string   `json:"name"`
	Type          string   `json:"type"` // STRING, INT, SHORT, LONG, DOUBLE, BOOLEAN, LIST, CLASS, PASSWORD
	Required      bool     `json:"required"`
	DefaultValue  *string  `json:"default_value"` // nil when the key has no default (then Required is true)
	Importance    string   `json:"importance"`    // HIGH, MEDIUM, LOW
	Documentation string   `json:"documentation"`
	Group         *string  `json:"group"`
	Order         int      `json:"order"`
	Width         string   `json:"width"` // NONE, SHORT, MEDIUM, LONG
	DisplayName   string   `json:"display_name"`
	Dependents    []string `json:"dependents"`
}

// ConfigValueInfo is the "value" of a validation result: the value given (or the default), the errors
// found, the recommended values and whether the key is visible given the other values. Kafka shows a
// PASSWORD value as "[hidden]".
type ConfigValueInfo struct {
	Name              string   `json:"name"`
	Value             *string  `json:"value"`
	RecommendedValues []string `json:"recommended_values"`
	Errors            []string `json:"errors"`
	Visible           bool     `json:"visible"`
}

// ConfigInfo is one key of a validation result. Definition is nil for a key that has errors but no
// definition (for example a transform alias that names no transformation).
type ConfigInfo struct {
	Definition *ConfigKeyInfo   `json:"definition"`
	Value      *ConfigValueInfo `json:"value"`
}

// ConfigInfos is the body of PUT /connector-plugins/{plugin}/config/validate. It is answered with 200
// even when ErrorCount is not 0.
type ConfigInfos struct {
	Name       string       `json:"name"`        // connector.class as given
	ErrorCount int          `json:"error_count"` // the number of error messages over all Configs
	Groups     []string     `json:"groups"`      // e.g. "Common", "Transforms", "Predicates", "Error Handling", then the plugin's
	Configs    []ConfigInfo `json:"configs"`
}

// CountErrors sets ErrorCount to the number of error messages in Configs.
func (c *ConfigInfos) CountErrors() {
	n := 0
	for _, ci := range c.Configs {
		if ci.Value != nil {
			n += len(ci.Value.Errors)
		}
	}
	c.ErrorCount = n
}
