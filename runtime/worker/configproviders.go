package worker

import (
	"github.com/wasmconnect/wasmconnect/runtime/configprovider"
)

// resolve returns cfg with its config-provider placeholders (${env:X}, ${file:/p:k},
// ${directory:/d:f}) resolved by the worker's config.providers, for a plugin to be opened with.
// The raw configs, with placeholders, are what the worker keeps, compares and stores.
func (w *Worker) resolve(cfg map[string]string) (map[string]string, error) {
	if !configprovider.HasPlaceholders(cfg) {
		return cfg, nil
	}
	return w.providers.Resolve(cfg)
}
