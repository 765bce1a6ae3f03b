package rest

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
)

// GET /connector-plugins/{plugin}/config
func (s *Server) pluginConfig(ctx context.Context, c call) (response, error) {
	keys, err := s.h.PluginConfig(ctx, c.ps.ByName("plugin"))
	if err != nil {
		return response{}, err
	}
	out := make([]connect.ConfigKeyInfo, len(keys))
	for i, k := range keys {
		out[i] = normKey(k)
	}
	return ok(out), nil
}

// PUT /connector-plugins/{plugin}/config/validate: 200 ConfigInfos, even with errors.
func (s *Server) validateConfig(ctx context.Context, c call) (response, error) {
	plugin := c.ps.ByName("plugin")
	cfg, err := decodeFlatConfig(c.body)
	if err != nil {
		return response{}, err
	}
	class, found := cfg["connector.class"]
	if !found {
		return response{}, connect.BadRequest("Connector config %s contains no connector type", javaMap(cfg))
	}
	if !strings.HasSuffix(normalizedPluginName(class), normalizedPluginName(plugin)) {
		return response{}, connect.BadRequest("Included connector type %s does not match request type %s", class, plugin)
	}
	infos, err := s.h.ValidateConfig(ctx, plugin, cfg)
	if err != nil {
		return response{}, err
	}
	return ok(normInfos(infos)), nil
}

// normalizedPluginName is Kafka's: a name ending in "Connector" without that suffix, so that the
// alias FileStreamSink matches the class org.apache.kafka.connect.file.FileStreamSinkConnector.
func normalizedPluginName(name string) string {
	const suffix = "Connector"
	if len(name) > len(suffix) && strings.HasSuffix(name, suffix) {
		return name[:len(name)-len(suffix)]
	}
	return name
}

// javaMap renders a config as Java's Map.toString, {k1=v1, k2=v2}, with keys sorted.
func javaMap(m map[string]string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(m[k])
	}
	b.WriteByte('}')
	return b.String()
}

// normKey gives nil lists their empty JSON form.
func normKey(k connect.ConfigKeyInfo) connect.ConfigKeyInfo {
	if k.Dependents == nil {
		k.Dependents = []string{}
	}
	return k
}

// normInfos gives nil lists their empty JSON form, without touching the herder's values.
func normInfos(in connect.ConfigInfos) connect.ConfigInfos {
	out := in
	if out.Groups == nil {
		out.Groups = []string{}
	}
	out.Configs = make([]connect.ConfigInfo, len(in.Configs))
	for i, ci := range in.Configs {
		if ci.Definition != nil {
			d := normKey(*ci.Definition)
			ci.Definition = &d
		}
		if ci.Value != nil {
			v := *ci.Value
			if v.RecommendedValues == nil {
				v.RecommendedValues = []string{}
			}
			if v.Errors == nil {
				v.Errors = []string{}
			}
			ci.Value = &v
		}
		out.Configs[i] = ci
	}
	return out
}
