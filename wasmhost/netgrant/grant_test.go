package netgrant

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{in: "", want: ""},
		{in: " , ", want: ""},
		{in: "127.0.0.1:5432", want: "127.0.0.1:5432"},
		{in: "db.Internal:*, 10.0.0.0/8:443", want: "db.internal:*, 10.0.0.0/8:443"},
		{in: "10.1.2.3/8:443", want: "10.0.0.0/8:443"},
		{in: "[::1]:5432,[fd00::/8]:*", want: "[::1]:5432, [fd00::/8]:*"},
		{in: "localhost", err: `entry "localhost": want host:port`},
		{in: "localhost:0", err: `port "0" is not a number from 1 to 65535 or *`},
		{in: "localhost:http", err: `port "http" is not a number`},
		{in: "::1:5432", err: "must be in brackets"},
		{in: "[::1]", err: "want host:port"},
		{in: ":5432", err: "no host"},
		{in: "10.0.0.0/33:1", err: `range "10.0.0.0/33"`},
		{in: "a b:1", err: "is not a host name"},
	} {
		g, err := Parse(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Parse(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if g.String() != tc.want {
			t.Errorf("Parse(%q) = %q, want %q", tc.in, g, tc.want)
		}
		if g.Empty() != (tc.want == "") {
			t.Errorf("Parse(%q).Empty() = %v", tc.in, g.Empty())
		}
	}
}

func TestAllows(t *testing.T) {
	lookup := func(_ context.Context, host string) ([]netip.Addr, error) {
		switch host {
		case "db.test":
			return []netip.Addr{netip.MustParseAddr("10.0.0.5"), netip.MustParseAddr("::ffff:10.0.0.6")}, nil
		}
		return nil, errors.New("no such host")
	}
	g, err := Parse("127.0.0.1:5432, db.test:5432, 192.168.0.0/16:*, [::1]:*, gone.test:1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dst  string
		want bool
	}{
		{"127.0.0.1:5432", true},
		{"127.0.0.1:5433", false}, // a grant for one port does not open another
		{"10.0.0.5:5432", true},   // what db.test resolves to
		{"10.0.0.6:5432", true},   // IPv4-mapped addresses compare as IPv4
		{"10.0.0.5:22", false},    // on its port only
		{"10.0.0.7:5432", false},  // not what db.test resolves to
		{"192.168.44.1:9", true},  // in the range, any port
		{"[::ffff:127.0.0.1]:5432", true},
		{"[::1]:80", true},
		{"[::2]:80", false},
	} {
		ok, _ := g.Allows(context.Background(), lookup, netip.MustParseAddrPort(tc.dst))
		if ok != tc.want {
			t.Errorf("Allows(%s) = %v, want %v", tc.dst, ok, tc.want)
		}
	}
	// A name that cannot be resolved grants nothing, and says why.
	if ok, err := g.Allows(context.Background(), lookup, netip.MustParseAddrPort("10.9.9.9:1")); ok || err == nil || !strings.Contains(err.Error(), "resolving gone.test") {
		t.Errorf("Allows(10.9.9.9:1) = %v, %v", ok, err)
	}
	if ok, _ := (Grant{}).Allows(context.Background(), lookup, netip.MustParseAddrPort("127.0.0.1:5432")); ok {
		t.Error("the empty grant allows 127.0.0.1:5432")
	}
}

func TestOutside(t *testing.T) {
	lookup := func(_ context.Context, host string) ([]netip.Addr, error) {
		switch host {
		case "db.test":
			return []netip.Addr{netip.MustParseAddr("10.0.0.5")}, nil
		case "wide.test":
			return []netip.Addr{netip.MustParseAddr("10.0.0.5"), netip.MustParseAddr("172.16.0.1")}, nil
		case "local.test":
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return nil, errors.New("no such host")
	}
	worker, err := Parse("127.0.0.1:5432, 10.0.0.0/8:*, db.test:6543, [::1]:*, local.test:80")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ connector, outside string }{
		{"", ""},
		{"127.0.0.1:5432", ""},
		{"127.0.0.1:5433", "127.0.0.1:5433"}, // another port
		{"127.0.0.1:*", "127.0.0.1:*"},       // every port of a one-port grant
		{"10.1.0.0/16:443, 10.2.3.4:*", ""},  // within the range, on any port
		{"10.0.0.0/7:443", "10.0.0.0/7:443"}, // a wider range
		{"db.test:6543, db.test:5432", ""},   // the same name; a name that resolves within a range
		{"wide.test:443", "wide.test:443"},   // a name that also resolves outside
		{"gone.test:1", "gone.test:1"},       // a name that does not resolve
		{"127.0.0.1:80", ""},                 // an address a name of the grant resolves to
		{"[::1]:5432, [::2]:1", "[::2]:1"},   // IPv6
		{"[::ffff:10.0.0.1]:1", ""},          // IPv4-mapped is IPv4
		{"0.0.0.0/0:5432, [::/0]:*", "0.0.0.0/0:5432, [::/0]:*"},
	} {
		c, err := Parse(tc.connector)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(worker.Outside(context.Background(), lookup, c), ", "); got != tc.outside {
			t.Errorf("Outside(%q) = %q, want %q", tc.connector, got, tc.outside)
		}
	}
	if got := (Grant{}).Outside(context.Background(), lookup, worker); len(got) != 5 {
		t.Errorf("the empty grant holds some of %s: outside %v", worker, got)
	}
}
