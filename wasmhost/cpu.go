package wasmhost

import (
	"context"

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
//     context to pass to it; the returned stop must be called when the call has returned.
//
// Whatever the mechanism, an aborted call must surface as a *sys.ExitError with
// sys.ExitCodeDeadlineExceeded (or an error wrapping context.DeadlineExceeded), which is how
// classify recognises a timeout.
type cpuBound interface {
	configure(wazero.RuntimeConfig) wazero.RuntimeConfig
	// setup runs once on the new runtime, before any module is compiled (fuel: its host module).
	setup(ctx context.Context, rt wazero.Runtime) error
	prepare(wasm []byte) ([]byte, error)
	start(ctx context.Context, mod api.Module) (context.Context, context.CancelFunc)
	// release forgets an instance that is being closed.
	release(mod api.Module)
}
