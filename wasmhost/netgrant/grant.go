// Package netgrant parses and checks plugin.net.allow, the TCP destinations an operator lets plugins
// connect to. It is pure logic: the caller resolves names (a Lookup), so that the check runs on the
// addresses a connection will really go to, and tests need no DNS.
//
// A grant is a comma-separated list of entries, each a destination and a port or "*" for any port:
//
//	db.internal:5432        a name: the addresses it resolves to at each dial
//	127.0.0.1:5432          an address
//	[::1]:*                 an IPv6 address (in brackets), any port
//	10.0.0.0/8:443          a CIDR range
//	[fd00::/8]:*            an IPv6 range
//
// The empty grant allows nothing, which is the default: a plugin has no network unless granted.
package netgrant

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// Grant is a parsed allow list. The zero value grants nothing.
type Grant struct {
	entries []entry
}

type entry struct {
	name   string       // a host name (lower case), or "" for an address or range
	prefix netip.Prefix // the address or range when name is ""
	port   uint16       // 0: any port
}

// Lookup resolves a host name to its addresses (net.Resolver.LookupNetIP with network "ip").
type Lookup func(ctx context.Context, host string) ([]netip.Addr, error)

// Parse reads a comma-separated allow list; blanks around entries are ignored and an empty list
// grants nothing. The error names the entry at fault and why.
func Parse(s string) (Grant, error) {
	var g Grant
	for _, raw := range strings.Split(s, ",") {
		item := strings.TrimSpace(raw)
		if item == "" {
			continue
		}
		e, err := parseEntry(item)
		if err != nil {
			return Grant{}, fmt.Errorf("entry %q: %w", item, err)
		}
		g.entries = append(g.entries, e)
	}
	return g, nil
}

func parseEntry(item string) (entry, error) {
	i := strings.LastIndexByte(item, ':')
	if i < 0 || strings.HasSuffix(item, "]") {
		return entry{}, fmt.Errorf("want host:port, host:*, address:port or range:port (a CIDR range such as 10.0.0.0/8:5432)")
	}
	host, port := item[:i], item[i+1:]
	var e entry
	if port != "*" {
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil || n == 0 {
			return entry{}, fmt.Errorf("port %q is not a number from 1 to 65535 or *", port)
		}
		e.port = uint16(n)
	}
	if strings.HasPrefix(host, "[") != strings.HasSuffix(host, "]") {
		return entry{}, fmt.Errorf("unbalanced brackets in %q", host)
	}
	bracketed := strings.HasPrefix(host, "[")
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if !bracketed && strings.Contains(host, ":") {
		return entry{}, fmt.Errorf("an IPv6 address or range must be in brackets, as in [%s]:%s", host, port)
	}
	switch {
	case host == "":
		return entry{}, fmt.Errorf("no host")
	case strings.Contains(host, "/"):
		p, err := netip.ParsePrefix(host)
		if err != nil {
			return entry{}, fmt.Errorf("range %q: %v", host, err)
		}
		e.prefix = p.Masked()
	default:
		if a, err := netip.ParseAddr(host); err == nil {
			a = a.Unmap()
			e.prefix = netip.PrefixFrom(a, a.BitLen())
		} else if validName(host) && !bracketed {
			e.name = strings.ToLower(strings.TrimSuffix(host, "."))
		} else {
			return entry{}, fmt.Errorf("%q is not a host name, an IP address or a CIDR range", host)
		}
	}
	return e, nil
}

func validName(s string) bool {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return s != "" && s != "."
}

// Empty reports whether g grants nothing.
func (g Grant) Empty() bool { return len(g.entries) == 0 }

// String renders g as a list Parse reads back, or "" for the empty grant.
func (g Grant) String() string {
	parts := make([]string, len(g.entries))
	for i, e := range g.entries {
		host := e.name
		if host == "" {
			host = e.prefix.String()
			if e.prefix.IsSingleIP() {
				host = e.prefix.Addr().String()
			}
			if e.prefix.Addr().Is6() {
				host = "[" + host + "]"
			}
		}
		port := "*"
		if e.port != 0 {
			port = strconv.Itoa(int(e.port))
		}
		parts[i] = host + ":" + port
	}
	return strings.Join(parts, ", ")
}

// Allows reports whether g lets a plugin connect to dst. Names in g are resolved with lookup when an
// address has to be compared with them, so a name grants the addresses it resolves to now; a name
// that cannot be resolved grants nothing (its error is returned when nothing else matched).
func (g Grant) Allows(ctx context.Context, lookup Lookup, dst netip.AddrPort) (bool, error) {
	ip := dst.Addr().Unmap()
	var lookupErr error
	for _, e := range g.entries {
		if e.port != 0 && e.port != dst.Port() {
			continue
		}
		if e.name == "" {
			if e.prefix.Contains(ip) {
				return true, nil
			}
			continue
		}
		addrs, err := lookup(ctx, e.name)
		if err != nil {
			lookupErr = fmt.Errorf("resolving %s of plugin.net.allow: %w", e.name, err)
			continue
		}
		for _, a := range addrs {
			if a.Unmap() == ip {
				return true, nil
			}
		}
	}
	return false, lookupErr
}

// Outside returns the entries of inner that g does not wholly grant, as Parse reads them: a
// connector's plugin.net.allow may narrow the worker's, and an entry that reaches beyond it would
// grant nothing more (a destination must be in both) while looking as if it did. An entry is
// within g when an entry of g has its port (or any port) and holds its address or range; a name is
// within g when g has the same name, or holds every address the name resolves to now.
func (g Grant) Outside(ctx context.Context, lookup Lookup, inner Grant) []string {
	var out []string
	for _, e := range inner.entries {
		if !g.holds(ctx, lookup, e) {
			out = append(out, Grant{entries: []entry{e}}.String())
		}
	}
	return out
}

func (g Grant) holds(ctx context.Context, lookup Lookup, e entry) bool {
	var addrs []netip.Addr // e's addresses, for a name: resolved once, when needed
	resolved := false
	for _, w := range g.entries {
		if w.port != 0 && w.port != e.port {
			continue
		}
		switch {
		case e.name != "" && w.name == e.name:
			return true
		case e.name == "" && w.name == "":
			if w.prefix.Addr().Is4() == e.prefix.Addr().Is4() && w.prefix.Bits() <= e.prefix.Bits() && w.prefix.Contains(e.prefix.Addr()) {
				return true
			}
		case e.name == "" && e.prefix.IsSingleIP():
			// A name of g holds an address if it resolves to it.
			ws, err := lookup(ctx, w.name)
			if err == nil && slices.ContainsFunc(ws, func(a netip.Addr) bool { return a.Unmap() == e.prefix.Addr() }) {
				return true
			}
		case e.name != "" && w.name == "":
			if !resolved {
				resolved = true
				if as, err := lookup(ctx, e.name); err == nil {
					addrs = as
				}
			}
			if len(addrs) > 0 && !slices.ContainsFunc(addrs, func(a netip.Addr) bool { return !g.holdsAddr(a.Unmap(), e.port) }) {
				return true
			}
		}
	}
	return false
}

// holdsAddr reports whether an address or range entry of g holds a on port (0: every port).
func (g Grant) holdsAddr(a netip.Addr, port uint16) bool {
	for _, w := range g.entries {
		if w.name == "" && (w.port == 0 || w.port == port) && w.prefix.Contains(a) {
			return true
		}
	}
	return false
}
