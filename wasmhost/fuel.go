package wasmhost

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/wasmconnect/wasmconnect/wasmhost/internal/fuel"
)

// fuelBound is the default CPU bound: every module is rewritten at load time so that each function
// entry and loop header counts down a per-instance counter, and the guest calls back into the host
// about every millisecond of work; the host then checks the call's deadline and aborts it if it has
// passed.
//
// Compared with wazero's WithCloseOnContextDone (deadlineBound) it costs 0.65-0.9x of plain speed
// instead of 0.07-0.09x on loop-heavy guests and ~60 ns per call instead of ~2 µs, and the regular
// check-ins keep a long guest call from stalling the Go garbage collector of the whole worker
// (see wasmhost/internal/fuel and docs/DECISIONS.md).
type fuelBound struct {
	timeout  time.Duration
	cacheDir string // where instrumented modules are kept across processes; "" = nowhere

	mu     sync.Mutex
	meters map[api.Module]*fuel.Meter
}

func newFuelBound(timeout time.Duration, cacheDir string) *fuelBound {
	return &fuelBound{timeout: timeout, cacheDir: cacheDir, meters: map[api.Module]*fuel.Meter{}}
}

func (f *fuelBound) configure(rc wazero.RuntimeConfig) wazero.RuntimeConfig { return rc }

func (f *fuelBound) setup(ctx context.Context, rt wazero.Runtime) error {
	_, err := fuel.Instantiate(ctx, rt)
	return err
}

// fuelCacheDir is the cache directory's folder of instrumented modules, named by the version of
// the rewrite: v4 charges each check the longest path of the code it covers (v1 one unit) and
// each bulk memory or table operation its length (v3 did not).
const fuelCacheDir = "fuel-v4"

// prepare instruments a module, reusing an earlier process's result from the cache directory: the
// rewrite and the validation of a 2 MB Go guest take ~0.1 s, on every start otherwise.
func (f *fuelBound) prepare(wasm []byte) ([]byte, error) {
	var cached string
	if f.cacheDir != "" {
		sum := sha256.Sum256(wasm)
		cached = filepath.Join(f.cacheDir, fuelCacheDir, hex.EncodeToString(sum[:])+".wasm")
		if b, err := os.ReadFile(cached); err == nil {
			return b, nil
		}
	}
	out, err := fuel.Instrument(wasm, api.CoreFeaturesV2)
	if err != nil {
		return nil, err
	}
	if cached != "" {
		writeCacheFile(cached, out)
	}
	return out, nil
}

func (f *fuelBound) start(ctx context.Context, mod api.Module) (context.Context, func() uint64) {
	if mod == nil {
		// Instantiation (a start section) has no meter yet; the refill function honours the
		// context's deadline instead.
		ctx, cancel := context.WithTimeout(ctx, f.timeout)
		return ctx, func() uint64 { cancel(); return 0 }
	}
	f.mu.Lock()
	m := f.meters[mod]
	if m == nil {
		var err error
		if m, err = fuel.NewMeter(mod); err != nil {
			f.mu.Unlock()
			// Not instrumented (cannot happen for modules this host loaded): fall back to the
			// context, which the guest never checks, so say so loudly in the error path instead.
			ctx, cancel := context.WithCancelCause(ctx)
			cancel(fmt.Errorf("wasmhost: instance is not metered: %w", err))
			return ctx, func() uint64 { return 0 }
		}
		f.meters[mod] = m
	}
	f.mu.Unlock()
	m.Start(time.Now().Add(f.timeout))
	return ctx, m.Used
}

func (f *fuelBound) release(mod api.Module) {
	f.mu.Lock()
	m := f.meters[mod]
	delete(f.meters, mod)
	f.mu.Unlock()
	if m != nil {
		m.Close()
	}
}
