package wasmhost

import (
	"context"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// cpuBound bounds the CPU time of each guest call. It is the one seam where the mechanism lives
// (fuelBound: load-time fuel instrumentation, wasmhost/internal/fuel), so that the benchmarks can
// compare it with other mechanisms without touching loading, instances or the ABI code:
//
//   - configure adjusts the runtime once, before any module is compiled;
//   - prepare returns the bytes to compile for a module (fuel: the instrumented module);
//   - start bounds one call into mod (nil while the module is being instantiated) and returns the
//     context to pass to it; the returned stop must be called when the call has returned, and
//     says how much fuel the call burned (0 for a mechanism that does not count it).
//
// Whatever the mechanism, an aborted call must surface as a *sys.ExitError with
// sys.ExitCodeDeadlineExceeded (or an error wrapping context.DeadlineExceeded), which is how
// classify recognises a timeout.
type cpuBound interface {
	configure(wazero.RuntimeConfig) wazero.RuntimeConfig
	// setup runs once on the new runtime, before any module is compiled (fuel: its host module).
	setup(ctx context.Context, rt wazero.Runtime) error
	prepare(wasm []byte) ([]byte, error)
	start(ctx context.Context, mod api.Module) (context.Context, func() (fuel uint64))
	// release forgets an instance that is being closed.
	release(mod api.Module)
}

// deadlineBound is the CPU bound the worker used before fuel: wazero's WithCloseOnContextDone plus
// a deadline per call. It is kept as the benchmarks' point of comparison, and bounds the one-off
// describe calls in the interpreter (see describer), where a fuel rewrite would cost more than it
// saves. It is simple and catches every runaway loop, but it is expensive on loop-heavy guests: wazero then exits to Go at every
// loop header and starts a goroutine per call (measured 8-23x slower on byte-at-a-time transforms,
// ~1.5 µs per call; see docs/DECISIONS.md).
type deadlineBound struct {
	timeout time.Duration
}

func (d deadlineBound) configure(rc wazero.RuntimeConfig) wazero.RuntimeConfig {
	// Without this, neither a deadline nor Module.Close stops a spinning guest, and the next GC of
	// the whole worker waits for it forever.
	return rc.WithCloseOnContextDone(true)
}

func (deadlineBound) setup(context.Context, wazero.Runtime) error { return nil }
func (deadlineBound) prepare(wasm []byte) ([]byte, error)         { return wasm, nil }
func (deadlineBound) release(api.Module)                          {}

func (d deadlineBound) start(ctx context.Context, _ api.Module) (context.Context, func() uint64) {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	return ctx, func() uint64 { cancel(); return 0 }
}

// unbounded is no CPU bound at all (Config.NoCPUBound): the benchmarks' baseline for what a bound
// costs. Nothing stops a call that never returns.
type unbounded struct{}

func (unbounded) configure(rc wazero.RuntimeConfig) wazero.RuntimeConfig { return rc }
func (unbounded) prepare(b []byte) ([]byte, error)                       { return b, nil }
func (unbounded) setup(context.Context, wazero.Runtime) error            { return nil }
func (unbounded) release(api.Module)                                     {}
func (unbounded) start(ctx context.Context, _ api.Module) (context.Context, func() uint64) {
	return ctx, func() uint64 { return 0 }
}
