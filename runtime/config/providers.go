package config

import "strings"

// Provider is one config provider a worker declares (KIP-297): config.providers lists the names,
// config.providers.<name>.class the class and config.providers.<name>.param.* its parameters.
// Package configprovider builds them.
type Provider struct {
	Name   string
	Class  string
	Params map[string]string // config.providers.<name>.param.*, prefix removed
	// Key is config.providers.<name>., for errors.
	Key string
}

var providerKeys = []Key{
	{Name: "config.providers", Doc: "names of the config providers"},
	{Name: "config.providers.", Doc: "each provider's class and param.* settings"},
}

func parseProviders(p *parser) []Provider {
	var out []Provider
	for _, name := range p.list("config.providers") {
		prefix := "config.providers." + name + "."
		pr := Provider{Name: name, Key: prefix, Class: strings.TrimSpace(p.props[prefix+"class"]), Params: p.under(prefix + "param.")}
		if pr.Class == "" {
			p.failf("config.providers lists %q but %sclass is not set", name, prefix)
			continue
		}
		out = append(out, pr)
	}
	return out
}
