package wasmhost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
	"github.com/wasmconnect/wasmconnect/wasmhost/netgrant"
)

// This file is the network capability (sdk/ABI.md §1, "Network"): TCP connections a guest opens
// through the host, to the destinations the operator granted (Config.NetAllow, narrowed per session
// by Env.NetAllow), checked on the resolved addresses.
//
// A guest never blocks in its own code waiting for the network: a read or write that waits does so
// here, in Go, where the garbage collector can stop it, and the wait is bounded by the call's
// deadline and its context. The CPU bound's check-ins do not run during a host call, so this file
// applies the same rule they do: a wait that reaches the call's deadline, or whose context is
// canceled (the task stops), aborts the call, exactly as a spinning guest would be aborted.

// maxConnsPerInstance bounds the connections one instance may hold open, so that a runaway plugin
// cannot exhaust the worker's file descriptors.
const maxConnsPerInstance = 256

// NetMetrics counts one session's network use (Env.Net). The worker backs it with its metrics
// registry; wasmhost only calls it.
type NetMetrics interface {
	ConnOpened()
	ConnClosed()
	DialFailed() // refused by the grant, or the connection could not be made
	BytesReceived(n int)
	BytesSent(n int)
}

// netState is an instance's network: its grant, its connections and the message of the last failed
// network call (net_error). Only touched with the instance's mutex held.
type netState struct {
	allow   netgrant.Grant  // the worker's grant
	narrow  *netgrant.Grant // the connector's own, nil when it has none
	lookup  netgrant.Lookup
	metrics NetMetrics
	conns   map[int32]*net.TCPConn
	addrs   map[int32]string // what the guest dialed, for messages
	next    int32
	lastErr string
}

func (h *Host) newNetState(env Env) *netState {
	return &netState{allow: h.cfg.NetAllow, narrow: env.NetAllow, lookup: h.lookup, metrics: env.Net,
		conns: map[int32]*net.TCPConn{}, addrs: map[int32]string{}}
}

// NarrowsNetAllow checks a connector's own plugin.net.allow (the raw setting) against the
// worker's grant (Config.NetAllow): nil if it parses and every entry lies within the worker's,
// else an error that says which entries do not, or why it does not parse. A wider entry would
// grant nothing (a destination must be in both), so it is a mistake worth saying at /validate.
func (h *Host) NarrowsNetAllow(ctx context.Context, connectorGrant string) error {
	g, err := netgrant.Parse(connectorGrant)
	if err != nil {
		return err
	}
	outside := h.cfg.NetAllow.Outside(ctx, h.lookup, g)
	switch {
	case len(outside) == 0:
		return nil
	case h.cfg.NetAllow.Empty():
		return fmt.Errorf("the worker's plugin.net.allow grants no network at all, so a connector's cannot grant %s", strings.Join(outside, ", "))
	}
	return fmt.Errorf("a connector's plugin.net.allow may only narrow the worker's (%s), and %s is not within it", h.cfg.NetAllow, strings.Join(outside, ", "))
}

// closeAll closes every connection, when the instance is discarded.
func (s *netState) closeAll() {
	if s == nil {
		return
	}
	for h, c := range s.conns {
		c.Close()
		s.closed(h)
	}
}

func (s *netState) closed(h int32) {
	delete(s.conns, h)
	delete(s.addrs, h)
	if s.metrics != nil {
		s.metrics.ConnClosed()
	}
}

func exportNet(b wazero.HostModuleBuilder) wazero.HostModuleBuilder {
	return b.
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(hostNetDial), []api.ValueType{i32, i32, i64}, []api.ValueType{i32}).
		WithParameterNames("addr_ptr", "addr_len", "timeout_ns").WithResultNames("handle").
		Export("net_dial").
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(hostNetRead), []api.ValueType{i32, i32, i32, i64}, []api.ValueType{i32}).
		WithParameterNames("handle", "ptr", "len", "wait_ns").WithResultNames("n").
		Export("net_read").
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(hostNetWrite), []api.ValueType{i32, i32, i32, i64}, []api.ValueType{i32}).
		WithParameterNames("handle", "ptr", "len", "wait_ns").WithResultNames("n").
		Export("net_write").
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(hostNetClose), []api.ValueType{i32}, []api.ValueType{i32}).
		WithParameterNames("handle").WithResultNames("result").
		Export("net_close").
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(hostNetError), []api.ValueType{i32, i32}, []api.ValueType{i32}).
		WithParameterNames("out_ptr", "out_cap").WithResultNames("len").
		Export("net_error")
}

// netCall returns the calling instance and its network, or records why there is none.
func netCall(ctx context.Context) (*instance, *netState) {
	in, _ := ctx.Value(instanceKey{}).(*instance)
	if in == nil {
		return nil, nil
	}
	if in.net == nil {
		// The scratch instance that reads a module's descriptor: no session, no grant.
		in.net = &netState{conns: map[int32]*net.TCPConn{}, addrs: map[int32]string{}}
	}
	return in, in.net
}

// fail records msg for net_error and returns wire.NetError.
func (s *netState) fail(msg string) int32 {
	s.lastErr = msg
	return wire.NetError
}

// hostNetDial is wasmconnect.net_dial(addr_ptr, addr_len, timeout_ns) -> handle.
func hostNetDial(ctx context.Context, m api.Module, stack []uint64) {
	ptr, n, timeout := api.DecodeU32(stack[0]), api.DecodeU32(stack[1]), time.Duration(int64(stack[2]))
	stack[0] = api.EncodeI32(wire.NetError)
	in, s := netCall(ctx)
	if in == nil {
		return
	}
	b, ok := m.Memory().Read(ptr, n)
	if !ok {
		in.badPointer(m.Memory(), "net_dial", ptr, n)
		return
	}
	address := string(b)
	if len(s.conns) >= maxConnsPerInstance {
		stack[0] = api.EncodeI32(s.fail(fmt.Sprintf("dial %s: the plugin already holds %d connections, the most an instance may", address, maxConnsPerInstance)))
		return
	}
	in.checkCall(ctx, m, "net_dial")
	dctx, cancel := in.waitContext(ctx, timeout)
	defer cancel()
	c, err := s.dial(dctx, address)
	if err != nil {
		in.checkCall(ctx, m, "net_dial")
		if s.metrics != nil {
			s.metrics.DialFailed()
		}
		in.log.Warn("plugin dial failed", "address", address, "error", err)
		stack[0] = api.EncodeI32(s.fail(err.Error()))
		return
	}
	s.next++
	for s.next <= 0 || s.conns[s.next] != nil {
		s.next++
	}
	s.conns[s.next] = c
	s.addrs[s.next] = address
	if s.metrics != nil {
		s.metrics.ConnOpened()
	}
	stack[0] = api.EncodeI32(s.next)
}

// dial resolves address, keeps the addresses both grants allow, and connects to the first that
// answers. It connects to the checked address itself, never to the name again, so that a name
// cannot resolve to one address for the check and to another for the connection.
func (s *netState) dial(ctx context.Context, address string) (*net.TCPConn, error) {
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("dial %q: want host:port: %v", address, err)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil || port == 0 {
		return nil, fmt.Errorf("dial %s: port %q is not a number from 1 to 65535", address, portStr)
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip.Unmap()}
	} else if s.lookup == nil {
		return nil, fmt.Errorf("dial %s: no resolver", address)
	} else if ips, err = s.lookup(ctx, host); err != nil {
		return nil, fmt.Errorf("dial %s: %w", address, err)
	}
	var granted []netip.AddrPort
	var grantErr error
	for _, ip := range ips {
		dst := netip.AddrPortFrom(ip.Unmap(), uint16(port))
		ok, err := s.allow.Allows(ctx, s.lookup, dst)
		if ok && s.narrow != nil {
			ok, err = s.narrow.Allows(ctx, s.lookup, dst)
		}
		if ok {
			granted = append(granted, dst)
		} else if err != nil {
			grantErr = err
		}
	}
	if len(granted) == 0 {
		return nil, s.refusal(host, uint16(port), ips, grantErr)
	}
	var d net.Dialer
	var errs []error
	for _, dst := range granted {
		c, err := d.DialContext(ctx, "tcp", dst.String())
		if err == nil {
			return c.(*net.TCPConn), nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("dial %s: %w", address, errors.Join(errs...))
}

// refusal is the error for a destination no grant covers: it names the destination, what it
// resolved to, and what is granted, so that the operator sees in the task's trace what to change.
func (s *netState) refusal(host string, port uint16, ips []netip.Addr, cause error) error {
	dst := net.JoinHostPort(host, strconv.Itoa(int(port)))
	var b strings.Builder
	b.WriteString("plugin.net.allow does not grant ")
	b.WriteString(dst)
	if _, err := netip.ParseAddr(host); err != nil {
		addrs := make([]string, len(ips))
		for i, ip := range ips {
			addrs[i] = ip.Unmap().String() // as checked: 127.0.0.1, not the resolver's ::ffff:127.0.0.1
		}
		fmt.Fprintf(&b, ", which resolves to %s", strings.Join(addrs, ", "))
	}
	if s.allow.Empty() {
		b.WriteString(" (granted: nothing, the worker's plugin.net.allow is empty)")
	} else {
		fmt.Fprintf(&b, " (granted: %s", s.allow)
		if s.narrow != nil {
			fmt.Fprintf(&b, "; narrowed by the connector's plugin.net.allow to: %s", s.narrow)
		}
		b.WriteString(")")
	}
	if cause != nil {
		fmt.Fprintf(&b, ": %v", cause)
	}
	return errors.New(b.String())
}

// hostNetRead is wasmconnect.net_read(handle, ptr, len, wait_ns) -> n. It reads into guest memory
// what has arrived, waiting up to wait_ns for something to arrive (0: not at all).
func hostNetRead(ctx context.Context, m api.Module, stack []uint64) {
	stack[0] = api.EncodeI32(netIO(ctx, m, stack, "net_read"))
}

// hostNetWrite is wasmconnect.net_write(handle, ptr, len, wait_ns) -> n. It writes what the socket
// takes within wait_ns (0: without waiting); n may be less than len.
func hostNetWrite(ctx context.Context, m api.Module, stack []uint64) {
	stack[0] = api.EncodeI32(netIO(ctx, m, stack, "net_write"))
}

func netIO(ctx context.Context, m api.Module, stack []uint64, op string) int32 {
	h, ptr, n, wait := api.DecodeI32(stack[0]), api.DecodeU32(stack[1]), api.DecodeU32(stack[2]), time.Duration(int64(stack[3]))
	in, s := netCall(ctx)
	if in == nil {
		return wire.NetError
	}
	c := s.conns[h]
	if c == nil {
		return s.fail(fmt.Sprintf("%s: no open connection with handle %d", op, h))
	}
	buf, ok := m.Memory().Read(ptr, n)
	if !ok {
		in.badPointer(m.Memory(), op, ptr, n)
		return wire.NetError
	}
	if n == 0 {
		return 0
	}
	in.checkCall(ctx, m, op)
	read := op == "net_read"
	var got int
	var err error
	if wait <= 0 {
		got, err = rawIO(c, buf, read)
	} else {
		got, err = in.waitIO(ctx, c, buf, read, wait)
	}
	if got > 0 {
		if s.metrics != nil {
			if read {
				s.metrics.BytesReceived(got)
			} else {
				s.metrics.BytesSent(got)
			}
		}
		return int32(got)
	}
	switch {
	case read && errors.Is(err, io.EOF):
		return 0
	case errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EINTR) || errors.Is(err, errWaitOver):
		return wire.NetWouldBlock
	case errors.Is(err, errCallBound):
		in.checkCall(ctx, m, op)
		return wire.NetWouldBlock // not reached: the call is aborted
	default:
		what := "read from"
		if !read {
			what = "write to"
		}
		return s.fail(fmt.Sprintf("%s %s: %v", what, s.addrs[h], err))
	}
}

var (
	errWaitOver  = errors.New("the wait the guest gave is over")
	errCallBound = errors.New("the call's deadline or context ended the wait")
)

// rawIO reads or writes once without waiting: a Go net.Conn cannot poll (a deadline in the past
// fails before the system call is tried), so this goes to the socket itself.
func rawIO(c *net.TCPConn, buf []byte, read bool) (int, error) {
	var err error
	if read {
		err = c.SetReadDeadline(time.Time{})
	} else {
		err = c.SetWriteDeadline(time.Time{})
	}
	if err != nil {
		return 0, err
	}
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var opErr error
	f := func(fd uintptr) bool {
		if read {
			n, opErr = syscall.Read(int(fd), buf)
			if n == 0 && opErr == nil {
				opErr = io.EOF
			}
		} else {
			n, opErr = syscall.Write(int(fd), buf)
		}
		n = max(n, 0)
		return true // done, whatever happened: never wait
	}
	if read {
		err = rc.Read(f)
	} else {
		err = rc.Write(f)
	}
	if err != nil {
		return 0, err
	}
	return n, opErr
}

// waitIO reads or writes, waiting up to wait but never past the call's deadline, and ending early
// when the call's context is done.
func (in *instance) waitIO(ctx context.Context, c *net.TCPConn, buf []byte, read bool, wait time.Duration) (int, error) {
	deadline := time.Now().Add(wait)
	callBound := false
	if cd := in.callDeadline(ctx); !cd.IsZero() && cd.Before(deadline) {
		deadline, callBound = cd, true
	}
	set := c.SetWriteDeadline
	if read {
		set = c.SetReadDeadline
	}
	if err := set(deadline); err != nil {
		return 0, err
	}
	stop := context.AfterFunc(ctx, func() { set(time.Unix(1, 0)) })
	var n int
	var err error
	if read {
		n, err = c.Read(buf)
	} else {
		n, err = c.Write(buf)
	}
	stop()
	if n > 0 || err == nil {
		return n, nil
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		if ctx.Err() != nil || callBound {
			return 0, errCallBound
		}
		return 0, errWaitOver
	}
	return 0, err
}

// waitContext bounds a dial by the guest's timeout (none when <= 0) and the call's deadline.
func (in *instance) waitContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	deadline := in.callDeadline(ctx)
	if timeout > 0 {
		if d := time.Now().Add(timeout); deadline.IsZero() || d.Before(deadline) {
			deadline = d
		}
	}
	if deadline.IsZero() {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, deadline)
}

// callDeadline is when the current call must end: its CPU bound's deadline or its context's,
// whichever comes first (zero: none).
func (in *instance) callDeadline(ctx context.Context) time.Time {
	d := in.deadline
	if cd, ok := ctx.Deadline(); ok && (d.IsZero() || cd.Before(d)) {
		d = cd
	}
	return d
}

// checkCall aborts the current call, as the CPU bound would at its next check-in, when its
// context is done or its deadline has passed: the guest's state after a call stopped half-way
// cannot be trusted, so the module is closed and the host function panics with the cause, which
// wazero returns from the call.
func (in *instance) checkCall(ctx context.Context, m api.Module, op string) {
	var err error
	code := sys.ExitCodeDeadlineExceeded
	if ctx.Err() != nil {
		err = fmt.Errorf("wasmhost: %s: %w", op, context.Cause(ctx))
		if errors.Is(err, context.Canceled) {
			code = sys.ExitCodeContextCanceled
		}
	} else if d := in.callDeadline(ctx); !d.IsZero() && !time.Now().Before(d) {
		err = fmt.Errorf("wasmhost: %s waited until the call's deadline: %w", op, context.DeadlineExceeded)
	}
	if err != nil {
		_ = m.CloseWithExitCode(ctx, code)
		panic(err)
	}
}

// hostNetClose is wasmconnect.net_close(handle) -> 0 or -1.
func hostNetClose(ctx context.Context, m api.Module, stack []uint64) {
	h := api.DecodeI32(stack[0])
	stack[0] = api.EncodeI32(wire.NetError)
	in, s := netCall(ctx)
	if in == nil {
		return
	}
	c := s.conns[h]
	if c == nil {
		stack[0] = api.EncodeI32(s.fail(fmt.Sprintf("net_close: no open connection with handle %d", h)))
		return
	}
	addr := s.addrs[h]
	s.closed(h)
	if err := c.Close(); err != nil {
		stack[0] = api.EncodeI32(s.fail(fmt.Sprintf("close %s: %v", addr, err)))
		return
	}
	stack[0] = 0
}

// hostNetError is wasmconnect.net_error(out_ptr, out_cap) -> len: the message of the last failed
// network call, copied when it fits (as offset_get).
func hostNetError(ctx context.Context, m api.Module, stack []uint64) {
	ptr, capacity := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
	stack[0] = 0
	in, s := netCall(ctx)
	if in == nil {
		return
	}
	msg := s.lastErr
	if uint32(len(msg)) <= capacity && !m.Memory().Write(ptr, []byte(msg)) {
		in.badPointer(m.Memory(), "net_error", ptr, capacity)
		return
	}
	stack[0] = api.EncodeI32(int32(len(msg)))
}
