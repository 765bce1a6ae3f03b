package metrics

import (
	"strings"
	"sync/atomic"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
)

// Connector holds one connector's connector-metrics: its status and what it is (class, type,
// version). In wasmconnect the group leader runs every connector (it generates their task
// configs), so the leader exports them. Nil-safe like Task.
type Connector struct {
	name  string
	s     series
	tasks atomic.Int64 // the connector's task count, for the per-connector task counts
}

// ConnectorInfo is what connector-metrics says a connector is.
type ConnectorInfo struct {
	Class   string                // connector-class
	Type    connect.ConnectorType // connector-type: source or sink
	Version string                // connector-version
	// TaskStates returns the last reported state of each of the connector's tasks, by task
	// number, for connect-worker-metrics' connector-<state>-task-count; nil: none are exported.
	// It is called when /metrics is scraped.
	TaskStates func() map[int]connect.State
}

// taskCountStates are the states of connect-worker-metrics' connector-<state>-task-count
// (destroyed: a task whose status was deleted, which wasmconnect never reports).
var taskCountStates = []connect.State{
	connect.StateRunning, connect.StatePaused, connect.StateFailed, connect.StateUnassigned,
	"DESTROYED", connect.StateRestarting,
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
	c.s.setStatus(r.kafka(groupConnector, "status"), statusLabel(connect.StateUnassigned))
	c.s.info(r.kafka(groupConnector, "connector-class"), "connector_class", info.Class)
	c.s.info(r.kafka(groupConnector, "connector-type"), "connector_type", string(info.Type))
	c.s.info(r.kafka(groupConnector, "connector-version"), "connector_version", info.Version)
	if info.TaskStates != nil {
		c.s.gauge(r.kafka(groupWorker, "connector-total-task-count"), "", func() float64 { return float64(c.tasks.Load()) })
		for _, st := range taskCountStates {
			c.s.gauge(r.kafka(groupWorker, "connector-"+strings.ToLower(string(st))+"-task-count"), "", func() float64 {
				n, states := int(c.tasks.Load()), info.TaskStates()
				count := 0
				for i := 0; i < n; i++ {
					got, ok := states[i]
					if !ok {
						got = connect.StateUnassigned // no status yet
					}
					if got == st {
						count++
					}
				}
				return float64(count)
			})
		}
	}
	registerHandle(&c.s, &r.connectors, name, c, &r.nConns)
	return c
}

// SetState sets the connector's status series (status="running" and so on, Kafka's lower-case
// state names).
func (c *Connector) SetState(st connect.State) {
	if c == nil {
		return
	}
	c.s.setStatus(c.s.r.kafka(groupConnector, "status"), statusLabel(st))
}

// SetTasks sets how many tasks the connector has (its task configs).
func (c *Connector) SetTasks(n int) {
	if c != nil {
		c.tasks.Store(int64(n))
	}
}

// Unregister drops the connector's series and removes it from the connector count. Idempotent.
func (c *Connector) Unregister() {
	if c != nil {
		unregisterHandle(&c.s, &c.s.r.connectors, c.name, c, &c.s.r.nConns)
	}
}

func (c *Connector) close() { c.s.closeCounted(&c.s.r.nConns) }
