package wasmhost

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/wasmconnect/wasmconnect/sdk/go/configdef"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// Validate checks cfg for plugin p: first the host's own checks against the descriptor (required
// keys present, values parse as their declared type; sdk/ABI.md §3), then the plugin's VALIDATE on a
// throwaway instance, so that validating never disturbs a running task. The result maps config keys
// to error messages; an empty map means valid. An error return means validation itself failed.
func (h *Host) Validate(ctx context.Context, p Plugin, cfg map[string]string) (map[string][]string, error) {
	m, err := h.moduleOf(p)
	if err != nil {
		return nil, err
	}
	errs := checkConfig(p.Config, cfg)
	in, err := h.instantiate(ctx, m, h.log.With("module", m.base), nil)
	if err != nil {
		return nil, err
	}
	defer in.close(ctx, nil)
	if cfg == nil {
		cfg = map[string]string{}
	}
	in.mu.Lock()
	out, err := in.call(ctx, p.Name, nil, wire.OpValidate, 0, appendJSON(wire.ValidateRequest{Plugin: p.Name, Config: cfg}))
	in.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if len(out) > 0 {
		var resp wire.ValidateResponse
		if err := json.Unmarshal(out, &resp); err != nil {
			return nil, malformed(in, p.Name, wire.OpValidate, err)
		}
		for k, msgs := range resp.Errors {
			for _, msg := range msgs {
				if !slices.Contains(errs[k], msg) {
					errs[k] = append(errs[k], msg)
				}
			}
		}
	}
	return errs, nil
}

// checkConfig applies the descriptor's declarations to cfg with Kafka's ConfigDef rules and
// messages (sdk/go/configdef, which the SDK applies inside the plugin too, so that the two
// answers merge without repeats and hide the same values).
func checkConfig(keys []wire.ConfigKey, cfg map[string]string) map[string][]string {
	errs := map[string][]string{}
	for _, k := range keys {
		v, ok := cfg[k.Name]
		if !ok {
			if k.Required {
				errs[k.Name] = append(errs[k.Name], configdef.Missing(k.Name).Error())
			}
			continue
		}
		if _, err := configdef.Parse(k.Name, configdef.Type(k.Type), v); err != nil {
			errs[k.Name] = append(errs[k.Name], err.Error())
		}
	}
	return errs
}
