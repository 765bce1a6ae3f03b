//go:build wasip1

package sdk

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

//go:wasmimport wasmconnect net_dial
func hostNetDial(addr unsafe.Pointer, n uint32, timeoutNs int64) int32

//go:wasmimport wasmconnect net_read
func hostNetRead(h int32, p unsafe.Pointer, n uint32, waitNs int64) int32

//go:wasmimport wasmconnect net_write
func hostNetWrite(h int32, p unsafe.Pointer, n uint32, waitNs int64) int32

//go:wasmimport wasmconnect net_close
func hostNetClose(h int32) int32

//go:wasmimport wasmconnect net_error
func hostNetError(out unsafe.Pointer, capacity uint32) int32

// Dial connects to address over TCP (network "tcp", "tcp4" or "tcp6"). The host makes the
// connection, to the destinations the operator granted with plugin.net.allow only (sdk/ABI.md §1,
// "Network"); a refused dial fails with the host's message, which names the address and the grant.
// ctx's deadline bounds the dial. Its signature is that of http.Transport.DialContext and of pgx's
// DialFunc, so that net/http, crypto/tls and database drivers work on top of it.
func Dial(ctx context.Context, network, address string) (net.Conn, error) {
	if err := checkNetwork(network, address); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Addr: addr{network, address}, Err: err}
	}
	var timeout int64
	if d, ok := ctx.Deadline(); ok {
		timeout = max(int64(time.Until(d)), 1)
	}
	b := []byte(address)
	h := hostNetDial(unsafe.Pointer(unsafe.SliceData(b)), uint32(len(b)), timeout)
	if h < 0 {
		return nil, &net.OpError{Op: "dial", Net: network, Addr: addr{network, address}, Err: lastNetError()}
	}
	return &conn{h: h, remote: remoteAddr(network, address)}, nil
}

func checkNetwork(network, address string) error {
	switch network {
	case "tcp", "tcp4", "tcp6":
		return nil
	}
	return &net.OpError{Op: "dial", Net: network, Addr: addr{network, address}, Err: net.UnknownNetworkError(network)}
}

func lastNetError() error {
	buf := make([]byte, 256)
	for range 3 {
		n := hostNetError(unsafe.Pointer(unsafe.SliceData(buf)), uint32(len(buf)))
		if int(n) <= len(buf) {
			return errors.New(string(buf[:n]))
		}
		buf = make([]byte, n)
	}
	return errors.New("the host gave no message")
}

// conn is a connection the host holds. The guest is single-threaded: a read or write that would
// wait must let the plugin's other goroutines run (net/http reads a connection in one goroutine
// while another writes the request), so it never waits in the host for long. It tries at once and
// yields to the other goroutines, then waits in the host for growing spans, yielding between them.
// A wait in the host ends as soon as the socket is ready, so a reply is read the moment it
// arrives; sleeping in the guest instead would wake only when the sleep is over (on average half a
// step after the reply, a few hundred microseconds per round trip).
type conn struct {
	h      int32
	remote net.Addr

	mu            sync.Mutex
	closed        bool
	readDeadline  time.Time
	writeDeadline time.Time
}

// The waits in the host of a read or write that finds nothing: the first is a loopback or LAN
// round trip, each next one twice as long, up to the longest, which bounds how long the plugin's
// other goroutines (and its timers) wait for their turn.
const (
	minHostWait = 200 * time.Microsecond
	maxHostWait = time.Millisecond
)

func (c *conn) deadlines() (closed bool, read, write time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed, c.readDeadline, c.writeDeadline
}

func (c *conn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.LocalAddr(), Addr: c.remote, Err: err}
}

// io runs one host read or write until it moves bytes, with the waits described on conn.
func (c *conn) io(op string, b []byte, f func(h int32, p unsafe.Pointer, n uint32, waitNs int64) int32) (int, error) {
	closed, rd, wd := c.deadlines()
	if closed {
		return 0, c.opError(op, net.ErrClosed)
	}
	if len(b) == 0 {
		return 0, nil
	}
	deadline := rd
	if op == "write" {
		deadline = wd
	}
	p, n := unsafe.Pointer(unsafe.SliceData(b)), uint32(min(len(b), 1<<30))
	wait := time.Duration(0)
	for {
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				return 0, c.opError(op, os.ErrDeadlineExceeded)
			}
			wait = min(wait, left)
		}
		r := f(c.h, p, n, int64(wait))
		switch {
		case r > 0:
			return int(r), nil
		case r == 0 && op == "read":
			return 0, io.EOF
		case r == wire.NetError:
			return 0, c.opError(op, lastNetError())
		}
		runtime.Gosched()
		if closed, _, _ := c.deadlines(); closed {
			return 0, c.opError(op, net.ErrClosed)
		}
		wait = min(max(2*wait, minHostWait), maxHostWait)
	}
}

func (c *conn) Read(b []byte) (int, error) { return c.io("read", b, hostNetRead) }

func (c *conn) Write(b []byte) (int, error) {
	var done int
	for done < len(b) {
		n, err := c.io("write", b[done:], hostNetWrite)
		done += n
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

func (c *conn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return c.opError("close", net.ErrClosed)
	}
	c.closed = true
	c.mu.Unlock()
	if hostNetClose(c.h) < 0 {
		return c.opError("close", lastNetError())
	}
	return nil
}

func (c *conn) LocalAddr() net.Addr  { return addr{"tcp", "wasm"} }
func (c *conn) RemoteAddr() net.Addr { return c.remote }

func (c *conn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.readDeadline, c.writeDeadline = t, t
	return nil
}

func (c *conn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.readDeadline = t
	return nil
}

func (c *conn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writeDeadline = t
	return nil
}
