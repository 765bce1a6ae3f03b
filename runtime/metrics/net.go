package metrics

import (
	"sync/atomic"

	vm "github.com/VictoriaMetrics/metrics"
)

// Network metric names (the plugins' network capability, sdk/ABI.md §1 "Network"). Kafka Connect has
// no counterpart: its connectors open sockets of their own, unseen by the worker.
const (
	NameNetConnectionsOpen = "wasmconnect_plugin_net_connections_open"
	NameNetReceivedBytes   = "wasmconnect_plugin_net_received_bytes_total"
	NameNetSentBytes       = "wasmconnect_plugin_net_sent_bytes_total"
	NameNetDialErrors      = "wasmconnect_plugin_net_dial_errors_total"
)

// Net holds one connector's network series, shared by its connector and task sessions on this
// worker: wasmconnect_plugin_net_connections_open, _received_bytes_total, _sent_bytes_total and
// _dial_errors_total, each labelled with the connector. It implements wasmhost.NetMetrics; a nil
// *Net ignores every call. Get one with Registry.Net and Release it when the session ends.
type Net struct {
	r     *Registry
	name  string
	refs  int // guarded by r.mu
	s     series
	open  atomic.Int64
	in    *vm.Counter
	out   *vm.Counter
	fails *vm.Counter
}

// Net returns the network series of a connector, creating them on first use; every call needs a
// Release.
func (r *Registry) Net(connector string) *Net {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.nets == nil {
		r.nets = map[string]*Net{}
	}
	if n := r.nets[connector]; n != nil {
		n.refs++
		return n
	}
	n := &Net{r: r, name: connector, refs: 1}
	n.s = series{r: r, labels: `connector="` + escapeLabel(connector) + `"`}
	n.s.gauge(NameNetConnectionsOpen, "", func() float64 { return float64(n.open.Load()) })
	n.in = n.s.counter(NameNetReceivedBytes, "")
	n.out = n.s.counter(NameNetSentBytes, "")
	n.fails = n.s.counter(NameNetDialErrors, "")
	if r.closed {
		n.s.unregister()
		return n
	}
	r.nets[connector] = n
	return n
}

// Release gives back a handle from Registry.Net; the series go when the last one is released.
func (n *Net) Release() {
	if n == nil {
		return
	}
	r := n.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if n.refs--; n.refs > 0 {
		return
	}
	if r.nets[n.name] == n {
		delete(r.nets, n.name)
	}
	n.s.unregister()
}

func (n *Net) ConnOpened() {
	if n != nil {
		n.open.Add(1)
	}
}

func (n *Net) ConnClosed() {
	if n != nil {
		n.open.Add(-1)
	}
}

func (n *Net) DialFailed() {
	if n != nil {
		n.fails.Inc()
	}
}

func (n *Net) BytesReceived(b int) {
	if n != nil {
		n.in.Add(b)
	}
}

func (n *Net) BytesSent(b int) {
	if n != nil {
		n.out.Add(b)
	}
}
