package worker

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
	"github.com/wasmconnect/wasmconnect/wasmhost"
)

// ResolveConnector finds the plugin named by a connector config's connector.class.
func (w *Worker) ResolveConnector(cfg map[string]string) (wasmhost.Plugin, connect.ConnectorType, error) {
	class := strings.TrimSpace(cfg["connector.class"])
	if class == "" {
		return wasmhost.Plugin{}, connect.TypeUnknown, connect.BadRequest("Connector config %v contains no connector type", cfg)
	}
	if p, err := w.host.Resolve(class, wire.KindSource); err == nil {
		return p, connect.TypeSource, nil
	}
	p, err := w.host.Resolve(class, wire.KindSink)
	if err != nil {
		return wasmhost.Plugin{}, connect.TypeUnknown, connect.BadRequest("%s", w.unknownConnectorMessage(class))
	}
	return p, connect.TypeSink, nil
}

// unknownConnectorMessage follows Kafka Connect's wording for an unknown connector class.
func (w *Worker) unknownConnectorMessage(class string) string {
	var names []string
	for _, p := range w.host.Plugins() {
		if p.Kind == wire.KindSource || p.Kind == wire.KindSink {
			names = append(names, p.Class+", "+p.Name)
		}
	}
	return fmt.Sprintf("Failed to find any class that implements Connector and which name matches %s, available connectors are: %s",
		class, strings.Join(names, ", "))
}

// converterSpec is a converter plugin and the settings it is opened with.
type converterSpec struct {
	plugin wasmhost.Plugin
	config map[string]string
}

// converters resolves a connector's key and value converters: the connector's key.converter /
// value.converter and their prefixed settings where it sets them, else the worker's.
func (w *Worker) converters(connCfg map[string]string) (key, value converterSpec, err error) {
	if key, err = w.converter(connCfg, "key"); err != nil {
		return
	}
	value, err = w.converter(connCfg, "value")
	return
}

func (w *Worker) converter(connCfg map[string]string, which string) (converterSpec, error) {
	prefix := which + ".converter"
	class, props := w.cfg.KeyConverter, w.cfg.KeyConverterProps
	if which == "value" {
		class, props = w.cfg.ValueConverter, w.cfg.ValueConverterProps
	}
	if c := strings.TrimSpace(connCfg[prefix]); c != "" {
		class = c
		props = map[string]string{}
		for k, v := range connCfg {
			if rest, ok := strings.CutPrefix(k, prefix+"."); ok {
				props[rest] = v
			}
		}
	}
	p, err := w.host.Resolve(class, wire.KindConverter)
	if err != nil {
		return converterSpec{}, connect.BadRequest("Invalid value %s for configuration %s: %v", class, prefix, err)
	}
	cfg := make(map[string]string, len(props)+1)
	for k, v := range props {
		cfg[k] = v
	}
	cfg["converter.type"] = which
	return converterSpec{plugin: p, config: cfg}, nil
}

// TasksMax reads tasks.max (default 1, as Kafka).
func TasksMax(cfg map[string]string) (int, error) {
	s := strings.TrimSpace(cfg["tasks.max"])
	if s == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("Invalid value %s for configuration tasks.max: must be an integer of at least 1", s)
	}
	return n, nil
}
