package metrics

import (
	"github.com/wasmconnect/wasmconnect/runtime/connect"
)

// Connector holds one connector's connector-metrics: its status and what it is (class, type,
// version). In wasmconnect the group leader runs every connector (it generates their task
// configs), so the leader exports them. Nil-safe like Task.
type Connector struct {
	name string
	s    series
}

// ConnectorInfo is what connector-metrics says a connector is.
type ConnectorInfo struct {
	Class   string                // connector-class
	Type    connect.ConnectorType // connector-type: source or sink
	Version string                // connector-version
}

// Connector returns the handle of a connector this worker runs, creating its series with status
// unassigned. Asking again for a live connector returns the same handle (info is then ignored).
// Call Unregister when the connector stops here.
func (r *Registry) Connector(name string, info ConnectorInfo) *Connector {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.connectors[name]; c != nil {
		return c
	}
	c := &Connector{name: name}
	c.s = series{r: r, labels: `connector="` + escapeLabel(name) + `"`}
	c.s.setStatus(Kafka(groupConnector, "status"), statusLabel(connect.StateUnassigned))
	c.s.info(Kafka(groupConnector, "connector-class"), "connector_class", info.Class)
	c.s.info(Kafka(groupConnector, "connector-type"), "connector_type", string(info.Type))
	c.s.info(Kafka(groupConnector, "connector-version"), "connector_version", info.Version)
	if r.closed {
		c.s.unregister()
		return c
	}
	r.connectors[name] = c
	r.nConns.Add(1)
	return c
}

// SetState sets the connector's status series (status="running" and so on, Kafka's lower-case
// state names).
func (c *Connector) SetState(st connect.State) {
	if c == nil {
		return
	}
	c.s.setStatus(Kafka(groupConnector, "status"), statusLabel(st))
}

// Unregister drops the connector's series and removes it from the connector count. Idempotent.
func (c *Connector) Unregister() {
	if c == nil {
		return
	}
	r := c.s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.connectors[c.name] == c {
		delete(r.connectors, c.name)
		r.nConns.Add(-1)
	}
	c.s.unregister()
}

func (c *Connector) close() {
	if c.s.unregister() {
		c.s.r.nConns.Add(-1)
	}
}
