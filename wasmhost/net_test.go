package wasmhost

import (
	"bufio"
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
	"github.com/wasmconnect/wasmconnect/wasmhost/netgrant"
	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

// The network tests run the netprobe and nethttp test plugins (plugins/testdata), Go guests that
// dial through sdk.Dial, against listeners on loopback.

func newNetHost(t *testing.T, allow string, cfg Config) *Host {
	t.Helper()
	return newNetHostOf(t, "plugins/testdata/netprobe", allow, cfg)
}

func newNetHostOf(t *testing.T, pkg, allow string, cfg Config) *Host {
	t.Helper()
	dir, err := pluginbuild.Dir(pkg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.PluginPath = []string{dir}
	cfg.CacheDir = filepath.Join(fixtureDir, "cache") // a Go guest with net/http compiles in seconds
	cfg.MemoryLimitBytes = 128 << 20
	if cfg.NetAllow, err = netgrant.Parse(allow); err != nil {
		t.Fatal(err)
	}
	h, _ := newTestHost(t, cfg)
	return h
}

// probe opens a NetProbe task in a new session with env and config cfg.
func probe(t *testing.T, h *Host, env Env, cfg map[string]string) *Object {
	t.Helper()
	return openIn(t, h, "NetProbe", env, cfg)
}

func openIn(t *testing.T, h *Host, plugin string, env Env, cfg map[string]string) *Object {
	t.Helper()
	s := h.NewSession(env)
	t.Cleanup(func() { s.Close(context.Background()) })
	o, err := s.Open(context.Background(), mustResolve(t, h, plugin), wire.RoleTask, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// echoServer listens on addr ("127.0.0.1:0") and answers each line with the same line; it
// counts the connections it accepted.
type echoServer struct {
	ln       net.Listener
	accepted atomic.Int32
}

func newEchoServer(t testing.TB, addr string) *echoServer {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	e := &echoServer{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			e.accepted.Add(1)
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					c.Write([]byte(line))
				}
			}()
		}
	}()
	return e
}

func (e *echoServer) addr() string { return e.ln.Addr().String() }

func (e *echoServer) port() int { return e.ln.Addr().(*net.TCPAddr).Port }

func pollValue(t *testing.T, o *Object) string {
	t.Helper()
	recs, err := o.Poll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Fatalf("want 1 record, got %d", len(recs))
	}
	return string(recs[0].Value.Bytes)
}

// pollRefused polls and wants the dial refused with want in the message, and no connection made.
func pollRefused(t *testing.T, o *Object, srv *echoServer, want string) {
	t.Helper()
	_, err := o.Poll(context.Background())
	var ge *GuestError
	if !errors.As(err, &ge) {
		t.Fatalf("want a *GuestError (the guest's Poll failed), got %T %v", err, err)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not contain %q", err, want)
	}
	if n := srv.accepted.Load(); n != 0 {
		t.Fatalf("the listener accepted %d connections; the dial should have been refused before connecting", n)
	}
}

func TestNetWithoutGrantIsRefused(t *testing.T) {
	h := newNetHost(t, "", Config{})
	srv := newEchoServer(t, "127.0.0.1:0")
	o := probe(t, h, Env{Connector: "c"}, map[string]string{"mode": "echo", "address": srv.addr()})
	pollRefused(t, o, srv, fmt.Sprintf("plugin.net.allow does not grant %s (granted: nothing, the worker's plugin.net.allow is empty)", srv.addr()))
}

func TestNetGrantForOnePortDoesNotOpenAnother(t *testing.T) {
	granted := newEchoServer(t, "127.0.0.1:0")
	other := newEchoServer(t, "127.0.0.1:0")
	h := newNetHost(t, granted.addr(), Config{})
	m := &netCounts{}
	ok := probe(t, h, Env{Connector: "c", Net: m}, map[string]string{"mode": "echo", "address": granted.addr()})
	if v := pollValue(t, ok); v != "ping 1" {
		t.Fatalf("echo = %q", v)
	}
	if v := pollValue(t, ok); v != "ping 2" {
		t.Fatalf("echo = %q", v)
	}
	refused := probe(t, h, Env{Connector: "c", Net: m}, map[string]string{"mode": "echo", "address": other.addr()})
	pollRefused(t, refused, other, fmt.Sprintf("plugin.net.allow does not grant %s (granted: %s)", other.addr(), granted.addr()))

	// The metrics saw two connections opened and closed, "ping N\n" out and back, one refusal.
	got := m.snapshot()
	want := netTotals{opened: 2, closed: 2, dialErrors: 1, in: 14, out: 14}
	if got != want {
		t.Fatalf("net metrics = %+v, want %+v", got, want)
	}
}

func TestNetConnectorNarrowsTheWorkerGrant(t *testing.T) {
	a := newEchoServer(t, "127.0.0.1:0")
	b := newEchoServer(t, "127.0.0.1:0")
	h := newNetHost(t, "127.0.0.1:*", Config{})
	narrow, err := netgrant.Parse(a.addr())
	if err != nil {
		t.Fatal(err)
	}
	env := Env{Connector: "narrow", NetAllow: &narrow}
	if v := pollValue(t, probe(t, h, env, map[string]string{"mode": "echo", "address": a.addr()})); v != "ping 1" {
		t.Fatalf("echo = %q", v)
	}
	pollRefused(t, probe(t, h, env, map[string]string{"mode": "echo", "address": b.addr()}), b,
		fmt.Sprintf("plugin.net.allow does not grant %s (granted: 127.0.0.1:*; narrowed by the connector's plugin.net.allow to: %s)", b.addr(), a.addr()))
	// The same worker grant without the connector's: b is reachable.
	if v := pollValue(t, probe(t, h, Env{Connector: "wide"}, map[string]string{"mode": "echo", "address": b.addr()})); v != "ping 1" {
		t.Fatalf("echo = %q", v)
	}

	// A connector cannot widen: granting itself every port does not help when the worker grants a's only.
	c := newEchoServer(t, "127.0.0.1:0")
	h2 := newNetHost(t, a.addr(), Config{})
	wide, err := netgrant.Parse("127.0.0.1:*")
	if err != nil {
		t.Fatal(err)
	}
	pollRefused(t, probe(t, h2, Env{Connector: "widen", NetAllow: &wide}, map[string]string{"mode": "echo", "address": c.addr()}), c,
		fmt.Sprintf("plugin.net.allow does not grant %s (granted: %s; narrowed by the connector's plugin.net.allow to: 127.0.0.1:*)", c.addr(), a.addr()))
}

func TestNetNameResolvingOutsideTheGrantIsRefused(t *testing.T) {
	inside := newEchoServer(t, "127.0.0.1:0")
	// A listener on the same port of another loopback address, so that a dial that ignored the
	// resolved address would succeed.
	outside := newEchoServer(t, fmt.Sprintf("127.0.0.2:%d", inside.port()))
	names := map[string]netip.Addr{
		"inside.test": netip.MustParseAddr("127.0.0.1"),
		// As Go's resolver returns addresses from /etc/hosts: IPv4 in its IPv6-mapped form.
		"outside.test": netip.AddrFrom16(netip.MustParseAddr("127.0.0.2").As16()),
	}
	lookup := func(_ context.Context, host string) ([]netip.Addr, error) {
		if a, ok := names[host]; ok {
			return []netip.Addr{a}, nil
		}
		return nil, fmt.Errorf("no such host %s", host)
	}
	h := newNetHost(t, inside.addr(), Config{Lookup: lookup})
	port := inside.port()
	pollRefused(t, probe(t, h, Env{}, map[string]string{"mode": "echo", "address": fmt.Sprintf("outside.test:%d", port)}), outside,
		fmt.Sprintf("plugin.net.allow does not grant outside.test:%d, which resolves to 127.0.0.2 (granted: %s)", port, inside.addr()))
	if v := pollValue(t, probe(t, h, Env{}, map[string]string{"mode": "echo", "address": fmt.Sprintf("inside.test:%d", port)})); v != "ping 1" {
		t.Fatalf("echo = %q", v)
	}
	if inside.accepted.Load() != 1 {
		t.Fatalf("inside accepted %d connections, want 1", inside.accepted.Load())
	}

	// A name in the grant grants what it resolves to.
	h2 := newNetHost(t, fmt.Sprintf("inside.test:%d", port), Config{Lookup: lookup})
	if v := pollValue(t, probe(t, h2, Env{}, map[string]string{"mode": "echo", "address": inside.addr()})); v != "ping 1" {
		t.Fatalf("echo = %q", v)
	}
}

// silentServer accepts connections and never writes, so that a reader waits for good; hangUp
// closes the connections accepted so far, to free a test's reader when the test has failed.
func silentServer(t *testing.T) (ln net.Listener, hangUp func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	hangUp = func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	}
	t.Cleanup(func() { ln.Close(); hangUp() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	return ln, hangUp
}

// A read that waits on a silent peer ends promptly when the task stops (its context is canceled),
// whether the guest waits in the host (hostwait: one net_read with an hour's wait) or cooperatively
// in the Go SDK (hold).
func TestNetBlockedReadEndsAtStop(t *testing.T) {
	ln, hangUp := silentServer(t)
	h := newNetHost(t, ln.Addr().String(), Config{CallTimeout: time.Minute})
	for _, mode := range []string{"hostwait", "hold"} {
		t.Run(mode, func(t *testing.T) {
			o := probe(t, h, Env{Connector: mode}, map[string]string{"mode": mode, "address": ln.Addr().String()})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { _, err := o.Poll(ctx); done <- err }()
			time.Sleep(300 * time.Millisecond)
			select {
			case err := <-done:
				t.Fatalf("poll returned before the stop: %v", err)
			default:
			}
			stop := time.Now()
			cancel()
			select {
			case err := <-done:
				if took := time.Since(stop); took > time.Second {
					t.Fatalf("poll returned %s after the stop", took)
				}
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("want an error that is context.Canceled, got %v", err)
				}
			case <-time.After(5 * time.Second):
				hangUp()
				t.Fatal("poll still waits 5 s after the stop")
			}
		})
	}
}

// A read that waits on a silent peer ends at the call's deadline, as a call timeout.
func TestNetBlockedReadEndsAtCallDeadline(t *testing.T) {
	ln, hangUp := silentServer(t)
	const timeout = 700 * time.Millisecond
	h := newNetHost(t, ln.Addr().String(), Config{CallTimeout: timeout})
	for _, mode := range []string{"hostwait", "hold"} {
		t.Run(mode, func(t *testing.T) {
			o := probe(t, h, Env{Connector: mode}, map[string]string{"mode": mode, "address": ln.Addr().String()})
			start := time.Now()
			done := make(chan error, 1)
			go func() { _, err := o.Poll(context.Background()); done <- err }()
			var err error
			select {
			case err = <-done:
			case <-time.After(timeout + 5*time.Second):
				hangUp()
				t.Fatalf("poll still waits %s after its call timeout of %s", 5*time.Second, timeout)
			}
			took := time.Since(start)
			var te *TrapError
			if !errors.As(err, &te) || !te.Timeout {
				t.Fatalf("want a *TrapError with Timeout, got %T %v", err, err)
			}
			if took < timeout || took > timeout+time.Second {
				t.Fatalf("poll took %s with a call timeout of %s", took, timeout)
			}
		})
	}
}

// net/http and crypto/tls run in the guest over sdk.Dial, and a kept-alive connection waiting
// between polls does not hold up the next poll.
func TestNetHTTPAndTLSInGuest(t *testing.T) {
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "hello %s", r.URL.Path) })
	plain := httptest.NewServer(handler)
	defer plain.Close()
	secure := httptest.NewTLSServer(handler)
	defer secure.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: secure.Certificate().Raw})
	h := newNetHostOf(t, "plugins/testdata/nethttp", plain.Listener.Addr().String()+","+secure.Listener.Addr().String(), Config{CallTimeout: 5 * time.Second})

	for name, cfg := range map[string]map[string]string{
		"http":  {"url": plain.URL + "/plain"},
		"https": {"url": secure.URL + "/secure", "tls.ca": string(ca)},
	} {
		t.Run(name, func(t *testing.T) {
			o := openIn(t, h, "NetHTTP", Env{Connector: name}, cfg)
			want := "200 hello /" + map[string]string{"http": "plain", "https": "secure"}[name]
			for i := range 3 {
				start := time.Now()
				if v := pollValue(t, o); v != want {
					t.Fatalf("poll %d: %q, want %q", i, v, want)
				}
				if took := time.Since(start); i > 0 && took > time.Second {
					t.Fatalf("poll %d took %s", i, took)
				}
			}
		})
	}
}

// netCounts is a NetMetrics that counts.
type netCounts struct {
	mu sync.Mutex
	t  netTotals
}

type netTotals struct{ opened, closed, dialErrors, in, out int }

func (c *netCounts) add(f func())        { c.mu.Lock(); defer c.mu.Unlock(); f() }
func (c *netCounts) ConnOpened()         { c.add(func() { c.t.opened++ }) }
func (c *netCounts) ConnClosed()         { c.add(func() { c.t.closed++ }) }
func (c *netCounts) DialFailed()         { c.add(func() { c.t.dialErrors++ }) }
func (c *netCounts) BytesReceived(n int) { c.add(func() { c.t.in += n }) }
func (c *netCounts) BytesSent(n int)     { c.add(func() { c.t.out += n }) }

func (c *netCounts) snapshot() netTotals {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// BenchmarkNetEcho measures one poll of the netprobe echo mode: a dial through the grant check, a
// line written and read back over loopback, and a close.
func BenchmarkNetEcho(b *testing.B) {
	srv := newEchoServer(b, "127.0.0.1:0")
	dir, err := pluginbuild.Dir("plugins/testdata/netprobe")
	if err != nil {
		b.Fatal(err)
	}
	g, _ := netgrant.Parse(srv.addr())
	h, _ := newTestHost(b, Config{PluginPath: []string{dir}, MemoryLimitBytes: 128 << 20, NetAllow: g})
	s := h.NewSession(Env{Connector: "bench"})
	defer s.Close(context.Background())
	o, err := s.Open(context.Background(), mustResolve(b, h, "NetProbe"), wire.RoleTask, map[string]string{"mode": "echo", "address": srv.addr()})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := o.Poll(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
