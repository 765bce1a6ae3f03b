package sdk

import (
	"net"
	"net/netip"
)

// addr is a connection's address as the plugin dialed it: the host resolves names and does not
// tell the guest which address it connected to.
type addr struct{ network, address string }

func (a addr) Network() string { return a.network }
func (a addr) String() string  { return a.address }

// remoteAddr is a *net.TCPAddr for an address literal, as net.Conn users expect, else the name.
func remoteAddr(network, address string) net.Addr {
	if ap, err := netip.ParseAddrPort(address); err == nil {
		return net.TCPAddrFromAddrPort(ap)
	}
	return addr{network, address}
}
