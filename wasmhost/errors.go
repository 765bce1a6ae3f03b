package wasmhost

import (
	"github.com/wasmconnect/wasmconnect/wasmhost/internal/fuel"

	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tetratelabs/wazero/sys"
)

// GuestError is a call that the guest completed but reported as failed (sdk/ABI.md §2: bit 31 of
// the result), or a result the host could not accept (a pointer outside guest memory, a malformed
// batch). The instance stays usable: the guest is in a state it chose, unlike after a trap.
type GuestError struct {
	Plugin    string // plugin name; empty for module-level calls (wc_describe, wc_alloc)
	Module    string // file name of the module
	Op        string // "POLL", "OPEN", ..., or the export name for module-level calls
	Message   string // the guest's message, or what the host found wrong with the result
	Retriable bool   // bit 30: the same call may be repeated later (errors.retry.timeout)
}

// IsRetriable reports the retriable bit, for callers that test errors by behaviour
// (errors.As(err, &interface{ IsRetriable() bool })) rather than by type.
func (e *GuestError) IsRetriable() bool { return e.Retriable }

func (e *GuestError) Error() string {
	return fmt.Sprintf("%s %s failed: %s", who(e.Plugin, e.Module), e.Op, e.Message)
}

// TrapError is a call that did not complete: a trap (panic, unreachable, out-of-bounds access), a
// call aborted by the CPU bound or a canceled context, or a guest that exited (proc_exit). The
// instance is discarded afterwards; every later call on it fails with an error that wraps this one.
type TrapError struct {
	Plugin string // plugin name; empty for module-level calls
	Module string // file name of the module
	Op     string
	Cause  error // as wazero reported it: "wasm error: unreachable" plus the wasm stack trace, a *sys.ExitError, ...

	// Stderr is what the guest wrote to stderr during the failed call (its first and last 2 KiB
	// when longer): a Go or Rust guest prints its panic message there, which the wasm error alone
	// does not carry.
	Stderr string

	// Timeout is set when the call was aborted by the per-call CPU bound.
	Timeout bool
	// OutOfMemory is set when the instance had grown its linear memory to (nearly) the configured
	// cap, or the guest said "out of memory" on stderr. WebAssembly does not tell the host that a
	// memory.grow failed, so this is a diagnosis, not a certainty.
	OutOfMemory bool

	elapsed  time.Duration // how long the failed call ran
	limit    time.Duration // the call timeout
	memBytes uint64        // linear memory size at the failure
	memLimit uint64        // the cap
}

func (e *TrapError) Error() string {
	var b strings.Builder
	b.WriteString(who(e.Plugin, e.Module))
	b.WriteByte(' ')
	b.WriteString(e.Op)
	var exit *sys.ExitError
	switch {
	case e.Timeout:
		fmt.Fprintf(&b, " timed out: aborted after %s (call timeout %s)", e.elapsed.Round(time.Millisecond), e.limit)
	case errors.Is(e.Cause, context.Canceled):
		b.WriteString(" was canceled: ")
		b.WriteString(e.Cause.Error())
	case errors.As(e.Cause, &exit):
		fmt.Fprintf(&b, " exited with code %d", exit.ExitCode())
	default:
		b.WriteString(" trapped: ")
		b.WriteString(strings.TrimRight(e.Cause.Error(), "\n"))
	}
	if e.OutOfMemory {
		fmt.Fprintf(&b, "\nout of memory: the instance uses %s of its %s limit", mib(e.memBytes), mib(e.memLimit))
	}
	if e.Stderr != "" {
		b.WriteString("\nguest stderr:\n")
		b.WriteString(e.Stderr)
	}
	return b.String()
}

func (e *TrapError) Unwrap() error { return e.Cause }

// ErrInstanceFailed is wrapped by every error returned for a call that was not made because the
// instance had failed (trapped, timed out, exited) on an earlier call, or its session was closed.
var ErrInstanceFailed = errors.New("instance failed earlier")

// failedError is returned instead of calling into a failed instance. It wraps both
// ErrInstanceFailed and the original *TrapError, so errors.As finds the trap details.
type failedError struct {
	plugin, module, op string
	cause              error
}

func (e *failedError) Error() string {
	if e.cause == errSessionClosed {
		return fmt.Sprintf("%s %s not called: its session is closed", who(e.plugin, e.module), e.op)
	}
	first, _, _ := strings.Cut(e.cause.Error(), "\n")
	return fmt.Sprintf("%s %s not called: the module instance failed earlier (%s)", who(e.plugin, e.module), e.op, first)
}

func (e *failedError) Unwrap() []error { return []error{ErrInstanceFailed, e.cause} }

// errSessionClosed is the cause recorded on instances closed with their session.
var errSessionClosed = errors.New("session closed")

func who(plugin, module string) string {
	if plugin != "" {
		return fmt.Sprintf("plugin %q", plugin)
	}
	return fmt.Sprintf("module %q", module)
}

func mib(n uint64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// isTimeout reports whether err is a call aborted because its deadline passed.
func isTimeout(err error) bool {
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode() == sys.ExitCodeDeadlineExceeded
	}
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, fuel.ErrCPUBudgetExceeded)
}
