//go:build !wasip1

package sdk

import (
	"context"
	"net"
)

// Dial connects to address over TCP (network "tcp", "tcp4" or "tcp6"). In a plugin module the host
// makes the connection, to the destinations the operator granted with plugin.net.allow only
// (sdk/ABI.md §1, "Network"); in a native build, for a plugin's own tests, it is an ordinary
// net.Dialer with no grant. Its signature is that of http.Transport.DialContext and of pgx's
// DialFunc, so that net/http, crypto/tls and database drivers work on top of it.
func Dial(ctx context.Context, network, address string) (net.Conn, error) {
	if err := checkNetwork(network, address); err != nil {
		return nil, err
	}
	var d net.Dialer
	return d.DialContext(ctx, network, address)
}

func checkNetwork(network, address string) error {
	switch network {
	case "tcp", "tcp4", "tcp6":
		return nil
	}
	return &net.OpError{Op: "dial", Net: network, Addr: addr{network, address}, Err: net.UnknownNetworkError(network)}
}
