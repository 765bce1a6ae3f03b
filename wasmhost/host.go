package wasmhost

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
	"github.com/wasmconnect/wasmconnect/wasmhost/internal/rootfs"
	"github.com/wasmconnect/wasmconnect/wasmhost/netgrant"
)

// Defaults for the zero values of Config.
const (
	DefaultMemoryLimitBytes = 256 << 20
	DefaultCallTimeout      = 30 * time.Second
)

// Config says where plugins are and how they are confined. The zero value of every field except
// PluginPath is usable.
type Config struct {
	// PluginPath lists directories. Every *.wasm file directly inside each, and inside its immediate
	// subdirectories (one folder per plugin, as Kafka's plugin.path), is loaded as a module.
	PluginPath []string
	// CacheDir holds wazero's compiled code, the fuel-instrumented modules and the modules'
	// descriptors across processes, so that a restart neither compiles nor runs a module before a
	// plugin of it is used (see lazy.go). Empty: compile in memory only.
	CacheDir string
	// MemoryLimitBytes caps the linear memory of each instance, rounded up to 64 KiB pages.
	// Zero: DefaultMemoryLimitBytes.
	MemoryLimitBytes uint64
	// CallTimeout bounds one guest call; a call that runs longer is aborted and fails like a trap.
	// Zero: DefaultCallTimeout.
	CallTimeout time.Duration
	// NoCPUBound runs guest calls without the fuel bound, for benchmarks and diagnostics only (the
	// worker's plugin.cpu.bound=none): what the bound costs is then measurable on the real pipeline.
	// Without it a call that never returns is never stopped (CallTimeout is not enforced) and, as
	// compiled guest code reaches no Go preemption point, every garbage collection of the whole
	// process waits for it.
	NoCPUBound bool
	// FSAllow lists the host directories plugins may see, each mounted at its own path. Every path
	// is confined to its directory after symbolic links are resolved (see internal/rootfs), and only
	// regular files and directories can be opened. None: the guest has no file system at all.
	FSAllow []string
	// NetAllow is what plugins may connect to (sdk/ABI.md §1, "Network"); a session may narrow it
	// (Env.NetAllow). The zero grant: no network at all.
	NetAllow netgrant.Grant
	// Lookup resolves the host names plugins dial and the names in the grants. Nil: the system
	// resolver.
	Lookup netgrant.Lookup
	// CompileAfter, when set, holds the background compiles of the modules a scan described back
	// until it is closed: a worker closes it once it has joined its group, or a few seconds after
	// it serves requests if it has not joined by then, so that its start does not share the CPUs
	// (and the garbage collector) with compiling a large Go guest for seconds. A module that an
	// instance needs first still compiles at once (lazy.go). Nil: compile at once.
	CompileAfter <-chan struct{}
	// Logger receives host diagnostics and, tagged per connector and task, guest log lines and
	// stdout/stderr. Nil: slog.Default().
	Logger *slog.Logger
}

// Plugin is one plugin a module describes (sdk/ABI.md §3), plus the module that provides it.
type Plugin struct {
	Name    string
	Class   string
	Aliases []string
	Kind    wire.Kind
	Version string
	Config  []wire.ConfigKey
	Module  string // absolute path of the .wasm file
}

// LoadError says why one module file was not loaded.
type LoadError struct {
	Path string // the .wasm file (or plugin directory) concerned
	Err  error
}

func (e LoadError) Error() string { return fmt.Sprintf("plugin module %s: %v", e.Path, e.Err) }
func (e LoadError) Unwrap() error { return e.Err }

// Host owns the wazero runtime, the compiled modules and the plugin catalogue. It is safe for
// concurrent use; instances live in Sessions.
type Host struct {
	cfg    Config
	log    *slog.Logger
	rt     wazero.Runtime
	cache  wazero.CompilationCache
	cpu    cpuBound
	lookup netgrant.Lookup
	modCfg wazero.ModuleConfig // shared part of every instance's config (FS, clocks, randomness)
	roots  []*rootfs.FS        // the FSAllow directories, shared by every instance
	pages  uint32              // memory cap in pages

	callDescribe bool // ignore descriptor sections (hostOptions)

	// The catalogue changes after New when the plugin path is rescanned (Reload, Watch) and when a
	// module fails its deferred compile (dropModule). A session that opened a module keeps its
	// instance whatever happens to the catalogue afterwards.
	mu      sync.RWMutex
	modules map[string]*module // by path
	plugins []Plugin           // sorted by kind, then class
	errs    []LoadError

	scanMu sync.Mutex             // one scan of the plugin path at a time (reload.go)
	files  map[string]scannedFile // the last scan's outcome per file, guarded by scanMu
	logged map[string]string      // the load error last logged per path, guarded by scanMu

	watchers  []*fsnotify.Watcher // Watch's, closed by Close; guarded by mu
	watching  sync.WaitGroup      // Watch's loops, which Close waits for
	compiling sync.WaitGroup      // background compiles, which Close waits for
	closing   atomic.Bool         // set by Close: queued background compiles are skipped
	closed    chan struct{}       // closed by Close: compiles held back by CompileAfter give up
	closeOnce sync.Once
}

// module is one .wasm file; it is compiled at most once per process, when first needed
// (compiledModule), and instantiated per session.
type module struct {
	path          string
	base          string   // file name, for messages and log tags
	sum           [32]byte // SHA-256 of the file as described, so a later compile uses the same bytes
	hasInitialize bool
	plugins       []Plugin
	cached        bool                      // the descriptor came from the cache: the module compiled before, unchanged
	descriptor    []byte                    // what wc_describe returned, until it is cached after the first compile
	unchecked     bool                      // described from its descriptor section: compile checks its shape
	wasm          []byte                    // the bytes described, until compiled (nil when described from the cache)
	dropped       atomic.Pointer[LoadError] // set when its deferred compile failed (dropModule)

	transformChain bool // the module runs TRANSFORM_CHAIN (descriptor "transform_chain")
	// transformConvert: the module runs TRANSFORM_CONVERT (descriptor "transform_convert").
	transformConvert bool

	compileOnce sync.Once
	compiled    wazero.CompiledModule
	compileErr  error

	instances atomic.Int64 // live instances, for Instances

	// Instances alive, and whether the module left the catalogue (replaced or removed by a
	// rescan): its compiled code is released with its last instance (retire.go).
	life    sync.Mutex
	users   int
	retired bool
}

// New reads the descriptor of every module on the plugin path, from the cache or by running the
// module in wazero's interpreter, and compiles the modules it had not seen before in the
// background (see lazy.go). A module that cannot be used is recorded in LoadErrors and skipped, so
// that one bad file never keeps the others (or the worker) from starting; New itself fails only
// when the runtime cannot be set up.
func New(ctx context.Context, cfg Config) (*Host, error) { return newHost(ctx, cfg, hostOptions{}) }

// hostOptions are the choices New makes for its callers.
type hostOptions struct {
	// cpu is the CPU bound (nil: the default), so that tests and benchmarks can compare mechanisms.
	cpu cpuBound
	// callDescribe describes every module by calling it, even one with a descriptor section: for
	// Inspect and Check, which report what the module does, not what its section says.
	callDescribe bool
}

// newHost is New with opts.
func newHost(ctx context.Context, cfg Config, opts hostOptions) (*Host, error) {
	if cfg.MemoryLimitBytes == 0 {
		cfg.MemoryLimitBytes = DefaultMemoryLimitBytes
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = DefaultCallTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Lookup == nil {
		cfg.Lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	if cfg.MemoryLimitBytes > 1<<32 {
		return nil, fmt.Errorf("wasmhost: memory limit %d bytes is over the 4 GiB a 32-bit WebAssembly memory can address", cfg.MemoryLimitBytes)
	}
	pages := (cfg.MemoryLimitBytes + 0xffff) >> 16
	allow, err := cleanFSAllow(cfg.FSAllow)
	if err != nil {
		return nil, err
	}
	cfg.FSAllow = allow

	cpu := opts.cpu
	switch {
	case cpu != nil:
	case cfg.NoCPUBound:
		cpu = unbounded{}
	default:
		cpu = newFuelBound(cfg.CallTimeout, cfg.CacheDir)
	}
	h := &Host{
		cfg:          cfg,
		log:          cfg.Logger,
		cpu:          cpu,
		callDescribe: opts.callDescribe,
		lookup:       cfg.Lookup,
		pages:        uint32(pages),
		modules:      map[string]*module{},
		closed:       make(chan struct{}),
	}
	rc := wazero.NewRuntimeConfig().WithMemoryLimitPages(h.pages)
	rc = h.cpu.configure(rc)
	if cfg.CacheDir != "" {
		h.cache, err = wazero.NewCompilationCacheWithDir(cfg.CacheDir)
		if err != nil {
			return nil, fmt.Errorf("wasmhost: compilation cache %s: %w", cfg.CacheDir, err)
		}
		rc = rc.WithCompilationCache(h.cache)
	}
	h.rt = wazero.NewRuntimeWithConfig(ctx, rc)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, h.rt); err != nil {
		h.Close(ctx)
		return nil, fmt.Errorf("wasmhost: WASI: %w", err)
	}
	if err := h.cpu.setup(ctx, h.rt); err != nil {
		h.Close(ctx)
		return nil, fmt.Errorf("wasmhost: CPU bound: %w", err)
	}
	if err := instantiateHostModule(ctx, h.rt); err != nil {
		h.Close(ctx)
		return nil, fmt.Errorf("wasmhost: host functions: %w", err)
	}
	for _, d := range allow {
		r, err := rootfs.New(d)
		if err != nil {
			h.Close(ctx)
			return nil, fmt.Errorf("wasmhost: file system allow-list entry %q: %w", d, err)
		}
		h.roots = append(h.roots, r)
	}
	h.modCfg = baseModuleConfig(h.roots)

	h.scan(ctx)
	return h, nil
}

// cleanFSAllow makes the granted directories absolute and checks that they exist, because a
// mount of a missing directory would only fail later, inside a plugin, with a vaguer error.
func cleanFSAllow(dirs []string) ([]string, error) {
	var out []string
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("wasmhost: file system allow-list entry %q: %w", d, err)
		}
		st, err := os.Stat(abs)
		if err != nil {
			return nil, fmt.Errorf("wasmhost: file system allow-list entry %q: %w", d, err)
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("wasmhost: file system allow-list entry %q is not a directory", d)
		}
		if !slices.Contains(out, abs) {
			out = append(out, abs)
		}
	}
	return out, nil
}

// baseModuleConfig is what every instance shares: the granted directories, real clocks and a real
// random source (wazero defaults to fake, deterministic ones), no arguments, no environment, and no
// start function (plugins are reactors; _initialize is called explicitly, under the CPU bound).
// Each directory is mounted at its own host path through rootfs, not wazero's WithDirMount, which
// follows any symbolic link out of the directory.
func baseModuleConfig(roots []*rootfs.FS) wazero.ModuleConfig {
	mc := wazero.NewModuleConfig().
		WithName(""). // anonymous, so that one compiled module can be instantiated many times
		WithStartFunctions().
		WithSysWalltime().
		WithSysNanotime().
		WithRandSource(rand.Reader)
	if len(roots) > 0 {
		fc := wazero.NewFSConfig()
		for _, r := range roots {
			fc = fc.(sysfs.FSConfig).WithSysFSMount(r, r.String())
		}
		mc = mc.WithFSConfig(fc)
	}
	return mc
}

// Close releases the runtime and every instance still open. Sessions fail afterwards.
func (h *Host) Close(ctx context.Context) error {
	var err error
	h.closeOnce.Do(func() {
		// A compile into a closed runtime would fail and be reported as a load error: let the
		// running ones finish (one module on 2 CPUs) and skip the queued ones.
		h.closing.Store(true)
		close(h.closed)
		h.mu.Lock()
		watchers := h.watchers
		h.watchers = nil
		h.mu.Unlock()
		for _, w := range watchers {
			w.Close()
		}
		h.watching.Wait()
		h.compiling.Wait()
		if h.rt != nil {
			err = h.rt.Close(ctx)
		}
		if h.cache != nil {
			err = errors.Join(err, h.cache.Close(ctx))
		}
		for _, r := range h.roots {
			err = errors.Join(err, r.Close())
		}
	})
	return err
}

// Plugins returns every loaded plugin, sorted by kind and class.
func (h *Host) Plugins() []Plugin {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return slices.Clone(h.plugins)
}

// ModuleNames returns the file names of the loaded modules, sorted.
func (h *Host) ModuleNames() []string {
	h.mu.RLock()
	defer h.mu.RUnlock()
	names := make([]string, 0, len(h.modules))
	for _, m := range h.modules {
		names = append(names, m.base)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// Instances returns how many instances of the modules with this file name are alive: a Go guest
// costs megabytes each, so this is the number to watch on a worker with many tasks.
func (h *Host) Instances(module string) int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	n := int64(0)
	for _, m := range h.modules {
		if m.base == module {
			n += m.instances.Load()
		}
	}
	return int(n)
}

// LoadErrors returns the modules that were not loaded, and why.
func (h *Host) LoadErrors() []LoadError {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return slices.Clone(h.errs)
}

// UnknownPluginError is returned by Resolve for a name that matches no plugin of the kind asked.
type UnknownPluginError struct {
	Name      string
	Kind      wire.Kind // empty: any kind
	Available []Plugin  // the loaded plugins of that kind
}

func (e *UnknownPluginError) Error() string {
	kind := "plugin"
	if e.Kind != "" {
		kind = string(e.Kind) + " plugin"
	}
	if len(e.Available) == 0 {
		return fmt.Sprintf("failed to find any %s whose class, name or alias matches %q: no %ss are loaded", kind, e.Name, kind)
	}
	names := make([]string, len(e.Available))
	for i, p := range e.Available {
		names[i] = fmt.Sprintf("%s (name %s, version %s)", p.Class, p.Name, p.Version)
	}
	return fmt.Sprintf("failed to find any %s whose class, name or alias matches %q, available %ss are: %s",
		kind, e.Name, kind, strings.Join(names, ", "))
}

// Resolve finds the plugin a user named, in the order Kafka Connect users expect: the exact class,
// then the short name, then the aliases. An empty kind matches every kind.
func (h *Host) Resolve(name string, kind wire.Kind) (Plugin, error) {
	var cands []Plugin
	for _, p := range h.Plugins() {
		if kind == "" || p.Kind == kind {
			cands = append(cands, p)
		}
	}
	for _, match := range []func(Plugin) bool{
		func(p Plugin) bool { return p.Class == name },
		func(p Plugin) bool { return p.Name == name },
		func(p Plugin) bool { return slices.Contains(p.Aliases, name) },
	} {
		for _, p := range cands {
			if match(p) {
				return p, nil
			}
		}
	}
	return Plugin{}, &UnknownPluginError{Name: name, Kind: kind, Available: cands}
}

// moduleOf returns the loaded module that provides p.
func (h *Host) moduleOf(p Plugin) (*module, error) {
	h.mu.RLock()
	m := h.modules[p.Module]
	h.mu.RUnlock()
	if m == nil || !slices.ContainsFunc(m.plugins, func(q Plugin) bool { return q.Class == p.Class }) {
		// A module dropped after its deferred compile failed: say why.
		for _, e := range h.LoadErrors() {
			if e.Path == p.Module {
				return nil, fmt.Errorf("wasmhost: plugin %q is not loaded by this host: %w", p.Name, e)
			}
		}
		return nil, fmt.Errorf("wasmhost: plugin %q (%s) is not loaded by this host", p.Name, p.Module)
	}
	return m, nil
}
