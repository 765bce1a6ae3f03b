package fuel

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"
)

// DefaultQuantum is the fuel one refill grants: about 1 ms of a tight loop, and
// at most a few milliseconds of any code. A unit is one WebAssembly instruction
// of the code a check covers (see charges in walk.go).
const DefaultQuantum = 1_000_000

// ErrCPUBudgetExceeded is the cause of a call that ran past the deadline
// given to Meter.Start.
var ErrCPUBudgetExceeded = errors.New("fuel: guest call exceeded its CPU deadline")

// errAborted prefixes the other causes of an abort.
const errAborted = "fuel: guest call aborted"

// Instantiate instantiates, in r, the host module that instrumented modules
// import. Call it once per runtime, before instantiating instrumented
// modules.
func Instantiate(ctx context.Context, r wazero.Runtime) (api.Closer, error) {
	return r.NewHostModuleBuilder(ImportModule).
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(refill), nil, nil).
		Export(ImportName).
		Instantiate(ctx)
}

// meters maps an instrumented api.Module to its *Meter.
var meters sync.Map

// Meter holds the CPU deadline of the calls into one instance of an
// instrumented module. Like the instance, it must be used by one goroutine
// at a time.
//
// Without a Meter, an instance still honours the cancellation and deadline
// of the context passed to each call, which is how the start functions
// (_initialize) run under a bound: instantiate with a context that has a
// deadline.
type Meter struct {
	mod      api.Module
	fuel     api.MutableGlobal
	deadline time.Time
	burned   int64 // since Start, up to the last refill
}

// NewMeter attaches a Meter to mod, an instance of an instrumented module.
// Close it when the instance is discarded: until then the meter keeps the
// instance reachable. (An abort closes it.)
func NewMeter(mod api.Module) (*Meter, error) {
	fuel, ok := mod.ExportedGlobal(ExportGlobal).(api.MutableGlobal)
	if !ok {
		return nil, fmt.Errorf("fuel: module %q is not instrumented: no mutable global %q", mod.Name(), ExportGlobal)
	}
	m := &Meter{mod: mod, fuel: fuel}
	if _, loaded := meters.LoadOrStore(mod, m); loaded {
		return nil, fmt.Errorf("fuel: module %q already has a meter", mod.Name())
	}
	return m, nil
}

// Start prepares the next call into the instance: it sets the counter to
// DefaultQuantum and the deadline after which the call fails with
// ErrCPUBudgetExceeded. The zero time means no deadline. Call it before
// every call.
func (m *Meter) Start(deadline time.Time) {
	m.deadline = deadline
	m.burned = 0
	m.fuel.Set(DefaultQuantum)
}

// Used returns the fuel the call since Start has burned: an upper bound of the WebAssembly
// instructions it ran. It costs one global read, cheap enough to ask after every call.
func (m *Meter) Used() uint64 {
	left := int64(m.fuel.Get()) // the counter is an i64; it may have gone below zero
	used := m.burned + DefaultQuantum - left
	return uint64(max(used, 0))
}

// Close detaches the meter from its instance.
func (m *Meter) Close() {
	meters.CompareAndDelete(m.mod, m)
}

// refill implements ImportModule.ImportName. The checks call it when the
// counter of mod goes below zero, that is about every DefaultQuantum units
// of work, so it is also where the guest lets the Go runtime stop the world.
//
// It refills the counter, or aborts the call: it closes mod, as a call
// stopped in the middle leaves the guest's own state (its allocator, its
// runtime) inconsistent, and panics with the cause, which wazero returns
// from the call wrapped with the wasm stack trace.
func refill(ctx context.Context, mod api.Module, _ []uint64) {
	var m *Meter
	if v, ok := meters.Load(mod); ok {
		m = v.(*Meter)
	}
	if err := checkCall(ctx, mod, m); err != nil {
		if m != nil {
			m.Close()
		}
		code := sys.ExitCodeDeadlineExceeded
		if errors.Is(err, context.Canceled) {
			code = sys.ExitCodeContextCanceled
		}
		_ = mod.CloseWithExitCode(ctx, code)
		panic(err)
	}
	if m != nil {
		// A check may take the counter well below zero (its region's weight): count all of it.
		m.burned += DefaultQuantum - int64(m.fuel.Get())
		m.fuel.Set(DefaultQuantum)
		return
	}
	fuel, ok := mod.ExportedGlobal(ExportGlobal).(api.MutableGlobal)
	if !ok {
		panic(fmt.Errorf("fuel: module %q calls %s.%s but has no mutable global %q",
			mod.Name(), ImportModule, ImportName, ExportGlobal))
	}
	fuel.Set(DefaultQuantum)
}

// checkCall returns why the current call must stop, or nil.
func checkCall(ctx context.Context, mod api.Module, m *Meter) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", errAborted, err)
	}
	if mod.IsClosed() {
		return fmt.Errorf("%s: module %q was closed", errAborted, mod.Name())
	}
	ctxDeadline, hasCtxDeadline := ctx.Deadline()
	if !hasCtxDeadline && (m == nil || m.deadline.IsZero()) {
		return nil
	}
	// The context's timer may not have fired yet: with the guest on the only
	// P, nothing runs it.
	now := time.Now()
	if hasCtxDeadline && !now.Before(ctxDeadline) {
		return fmt.Errorf("%s: %w", errAborted, context.DeadlineExceeded)
	}
	if m != nil && !m.deadline.IsZero() && !now.Before(m.deadline) {
		return ErrCPUBudgetExceeded
	}
	return nil
}
