package wasmhost

// Loading without compiling. A Go guest takes 1.3-2.2 s to compile with wazero's compiler, plus
// 0.2-0.3 s of fuel instrumentation, and ~60 ms from the compilation cache; yet all the worker needs
// to start and to answer GET /connector-plugins is each module's descriptor. So:
//
//   - A module seen before (same bytes, same memory limit, and it compiled) is described from the
//     descriptor cache in CacheDir and compiled when an instance of it is first needed: a restart
//     runs no guest code and compiles nothing until a connector uses the module.
//   - A module not seen before is described from its descriptor section (section.go), which takes
//     reading the file, or else checked and described in wazero's interpreter, which compiles a Go
//     guest in 0.1-0.25 s (several times that on a busy machine) and runs its _initialize and
//     wc_describe in ~50 ms. It is then compiled in the background, at once or when
//     Config.CompileAfter says (a worker: once it has joined its group, or a few seconds after it
//     serves requests), so that a compile error still shows at start-up and the caches fill. Its
//     descriptor is cached once it has compiled. A module whose background compile fails (its
//     shape, for one described from its section) is dropped from the catalogue and listed in
//     LoadErrors, as if New had refused it.
//
// An instance waits for its module's compile (compiledModule); a module that is needed first is
// compiled by the goroutine that needs it, ahead of the background queue.

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// describeTimeout bounds each guest call made to describe a module (_initialize, wc_abi_version,
// wc_describe), below plugin.call.timeout.ms: a module that never returns from them would otherwise
// hold the worker's start (and a hot reload) for the whole call timeout. A Go guest needs ~50 ms.
const describeTimeout = 5 * time.Second

// describer runs modules in a scratch host on wazero's interpreter, created on the first module
// that is not in the descriptor cache and closed when loading is done.
type describer struct {
	h       *Host
	once    sync.Once
	scratch *Host
	err     error
}

func (d *describer) host(ctx context.Context) (*Host, error) {
	d.once.Do(func() {
		h := d.h
		cfg := h.cfg
		cfg.CallTimeout = min(cfg.CallTimeout, describeTimeout)
		cpu := deadlineBound{timeout: cfg.CallTimeout}
		s := &Host{cfg: cfg, log: h.log, cpu: cpu, pages: h.pages, modCfg: h.modCfg, closed: make(chan struct{})}
		s.rt = wazero.NewRuntimeWithConfig(ctx, cpu.configure(wazero.NewRuntimeConfigInterpreter().WithMemoryLimitPages(h.pages)))
		if _, err := wasi_snapshot_preview1.Instantiate(ctx, s.rt); err != nil {
			d.err = fmt.Errorf("describing in the interpreter: WASI: %w", err)
		} else if err := instantiateHostModule(ctx, s.rt); err != nil {
			d.err = fmt.Errorf("describing in the interpreter: host functions: %w", err)
		}
		d.scratch = s
	})
	return d.scratch, d.err
}

// describe checks wasm, m's bytes, against ABI v1 and reads its descriptor into m.
func (d *describer) describe(ctx context.Context, m *module, wasm []byte) error {
	s, err := d.host(ctx)
	if err != nil {
		return err
	}
	c, err := s.rt.CompileModule(ctx, wasm)
	if err != nil {
		return d.h.compileError(err)
	}
	defer c.Close(ctx)
	if err := checkShape(m, c); err != nil {
		return err
	}
	run := &module{path: m.path, base: m.base, hasInitialize: m.hasInitialize}
	run.compileOnce.Do(func() { run.compiled = c })
	out, err := s.describe(ctx, run)
	if trap := (*TrapError)(nil); errors.As(err, &trap) && trap.Timeout {
		return fmt.Errorf("%w; describing a module may take at most %s per call", err, s.cfg.CallTimeout)
	}
	if err != nil {
		return err
	}
	if err := d.h.parseDescriptor(m, out); err != nil {
		return err
	}
	m.descriptor = out
	return nil
}

func (d *describer) close(ctx context.Context) {
	if d.scratch != nil {
		d.scratch.Close(ctx)
	}
}

// compiledModule returns m's compiled code, compiling it on first use. A module that does not
// compile is dropped from the catalogue; the error names it.
func (h *Host) compiledModule(m *module) (wazero.CompiledModule, error) {
	m.compileOnce.Do(func() {
		m.compiled, m.compileErr = h.compile(m)
		if m.compileErr != nil {
			h.dropModule(m, m.compileErr)
			m.compileErr = LoadError{Path: m.path, Err: m.compileErr}
			return
		}
		if m.descriptor != nil {
			h.cacheDescriptor(m)
			m.descriptor = nil
		}
	})
	return m.compiled, m.compileErr
}

// compile instruments and compiles the bytes m was described from. Not under any caller's
// context: the result is shared by every later instance.
func (h *Host) compile(m *module) (wazero.CompiledModule, error) {
	b := m.wasm
	m.wasm = nil
	if b == nil {
		var err error
		if b, err = os.ReadFile(m.path); err != nil {
			return nil, err
		}
		if sha256.Sum256(b) != m.sum {
			return nil, fmt.Errorf("the file changed after the worker described it; the new version is listed once the plugin path is rescanned (Reload)")
		}
	}
	b, err := h.cpu.prepare(b)
	if err != nil {
		return nil, fmt.Errorf("instrument: %w", err)
	}
	c, err := h.rt.CompileModule(context.Background(), b)
	if err != nil {
		return nil, h.compileError(err)
	}
	if m.unchecked { // described from its descriptor section: nothing has checked its shape yet
		if err := checkShape(m, c); err != nil {
			c.Close(context.Background())
			return nil, err
		}
	}
	return c, nil
}

// compileNewModules compiles mods in the background, once Config.CompileAfter is closed, on all
// but one of the CPUs: the worker's own work keeps one. It then logs "plugin modules compiled" with
// how many it compiled and how many more modules the scan described from the cache (cached), which
// compile from wazero's cache on first use: the line comes once per scan that loaded anything, also
// when every module was cached, so that whoever waits for it (a benchmark) does not wait forever.
func (h *Host) compileNewModules(todo []*module, cached int) {
	if len(todo) == 0 {
		if cached > 0 {
			h.log.Info("plugin modules compiled", "modules", 0, "cached", cached, "took", time.Duration(0))
		}
		return
	}
	slices.SortFunc(todo, func(a, b *module) int { return strings.Compare(a.path, b.path) })
	h.compiling.Add(1)
	go func() {
		defer h.compiling.Done()
		if !h.mayCompile() {
			return
		}
		start := time.Now()
		sem := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)-1))
		var wg sync.WaitGroup
		for _, m := range todo {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				if !h.closing.Load() { // a worker stopping soon after its start does not wait for the queue
					h.compiledModule(m)
				}
			}()
		}
		wg.Wait()
		// Compiling a large Go guest leaves hundreds of MB of garbage (an 11 MB module: ~180 MB
		// of RSS) that the runtime would return to the OS only over minutes: return it now, once.
		debug.FreeOSMemory()
		if !h.closing.Load() {
			h.log.Info("plugin modules compiled", "modules", len(todo), "cached", cached, "took", time.Since(start).Round(time.Millisecond))
		}
	}()
}

// mayCompile waits for Config.CompileAfter and says whether to compile: not once Close has begun.
func (h *Host) mayCompile() bool {
	if h.cfg.CompileAfter != nil {
		select {
		case <-h.cfg.CompileAfter:
		case <-h.closed:
		}
	}
	return !h.closing.Load()
}

// dropModule removes a module that failed its deferred compile from the catalogue and reports it
// the way New reports a module it refuses.
func (h *Host) dropModule(m *module, err error) {
	m.dropped.Store(&LoadError{Path: m.path, Err: err})
	h.mu.Lock()
	if h.modules[m.path] == m {
		delete(h.modules, m.path)
		h.plugins = slices.DeleteFunc(slices.Clone(h.plugins), func(p Plugin) bool { return p.Module == m.path })
	}
	h.errs = append(h.errs, LoadError{Path: m.path, Err: err})
	h.mu.Unlock()
	h.log.Error("plugin module not loaded", "path", m.path, "error", err)
}

// descriptorEntry is a descriptor cache file: what wc_describe returned, and whether the module
// has an _initialize export (which checkShape found).
type descriptorEntry struct {
	Initialize bool            `json:"initialize"`
	Descriptor json.RawMessage `json:"descriptor"`
}

// descriptorFile is where m's descriptor is cached, keyed by the module's bytes and by the memory
// limit (a module whose minimum memory is over the limit does not compile); "" without CacheDir.
func (h *Host) descriptorFile(m *module) string {
	if h.cfg.CacheDir == "" {
		return ""
	}
	return filepath.Join(h.cfg.CacheDir, "describe-v1", fmt.Sprintf("%x-%d.json", m.sum, h.pages))
}

func (h *Host) cachedDescriptor(m *module) (descriptorEntry, bool) {
	var e descriptorEntry
	file := h.descriptorFile(m)
	if file == "" {
		return e, false
	}
	b, err := os.ReadFile(file)
	if err != nil || json.Unmarshal(b, &e) != nil || len(e.Descriptor) == 0 {
		return e, false // a missing or damaged entry: describe the module again
	}
	return e, true
}

func (h *Host) cacheDescriptor(m *module) {
	if file := h.descriptorFile(m); file != "" {
		b, err := json.Marshal(descriptorEntry{Initialize: m.hasInitialize, Descriptor: m.descriptor})
		if err == nil {
			writeCacheFile(file, b)
		}
	}
}

// writeCacheFile writes a cache entry atomically (so that a concurrent reader never sees half of
// it), at best effort: a cache that cannot be written only costs time on the next start.
func writeCacheFile(file string, b []byte) {
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return
	}
	tmp := fmt.Sprintf("%s.%d.tmp", file, os.Getpid())
	if os.WriteFile(tmp, b, 0o600) == nil {
		if os.Rename(tmp, file) != nil {
			os.Remove(tmp)
		}
	}
}

// CompileAll compiles every module that is not compiled yet, GOMAXPROCS at a time, and returns
// once all are, with the modules that failed (which are dropped, as a background compile that
// fails is). For callers whose start-up may pay for it so that the first use of a plugin does not:
// tests with deadlines, benchmarks.
func (h *Host) CompileAll() error {
	h.mu.RLock()
	mods := make([]*module, 0, len(h.modules))
	for _, m := range h.modules {
		mods = append(mods, m)
	}
	h.mu.RUnlock()
	errs := make([]error, len(mods))
	parallel(len(mods), func(i int) { _, errs[i] = h.compiledModule(mods[i]) })
	return errors.Join(errs...)
}
