package worker

import (
	"context"
	"fmt"

	"github.com/wasmconnect/wasmconnect/runtime/metrics"
	"github.com/wasmconnect/wasmconnect/wasmhost"
	"github.com/wasmconnect/wasmconnect/wasmhost/netgrant"
)

// netAllowKey is the connector setting that narrows the worker's plugin.net.allow for the
// connector's own plugins: a destination must be granted by both, so a connector can never widen
// what the operator granted the worker.
const netAllowKey = "plugin.net.allow"

// withNet fills in the network part of a session's env for a connector with config cfg: the
// connector's own grant, if it has one, and the connector's network metrics. Call release when the
// session is closed.
func (w *Worker) withNet(env wasmhost.Env, cfg map[string]string) (_ wasmhost.Env, release func(), err error) {
	if v, ok := cfg[netAllowKey]; ok {
		g, err := netgrant.Parse(v)
		if err != nil {
			return env, nil, fmt.Errorf("connector %s: invalid value %q for %s: %w", env.Connector, v, netAllowKey, err)
		}
		env.NetAllow = &g
	}
	var m *metrics.Net
	if w.metrics != nil {
		m = w.metrics.Net(env.Connector)
		env.Net = m
	}
	return env, m.Release, nil
}

// netAllowRule checks a connector's plugin.net.allow at validation: that it parses, and that it
// narrows the worker's grant rather than reaching beyond it.
func (w *Worker) netAllowRule(ctx context.Context, v *validation, cfg map[string]string) {
	raw, ok := cfg[netAllowKey]
	if !ok {
		return
	}
	if err := w.host.NarrowsNetAllow(ctx, raw); err != nil {
		v.addError(netAllowKey, fmt.Sprintf("Invalid value %s for configuration %s: %v", raw, netAllowKey, err))
	}
}
