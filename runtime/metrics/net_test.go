package metrics

import "testing"

func TestNetSeriesAreSharedPerConnector(t *testing.T) {
	r := New(Unregistered())
	a, b := r.Net("jdbc"), r.Net("jdbc") // a connector's task and connector sessions
	a.ConnOpened()
	b.ConnOpened()
	b.ConnClosed()
	a.BytesReceived(100)
	b.BytesSent(7)
	a.DialFailed()
	wantLines(t, dump(r),
		`wasmconnect_plugin_net_connections_open{connector="jdbc"} 1`,
		`wasmconnect_plugin_net_received_bytes_total{connector="jdbc"} 100`,
		`wasmconnect_plugin_net_sent_bytes_total{connector="jdbc"} 7`,
		`wasmconnect_plugin_net_dial_errors_total{connector="jdbc"} 1`,
	)
	a.Release()
	wantLines(t, dump(r), `wasmconnect_plugin_net_received_bytes_total{connector="jdbc"} 100`)
	b.Release()
	noSubstring(t, dump(r), "wasmconnect_plugin_net_")
	var none *Net
	none.ConnOpened() // nil-safe, like Task
	none.Release()
}
