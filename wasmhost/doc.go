// Package wasmhost runs wasmconnect plugins: WebAssembly modules that implement connectors,
// converters, transformations and predicates against the plugin ABI (sdk/ABI.md), sandboxed by wazero. It is the host side of that
// ABI and nothing else.
//
// # What it owns
//
//   - Loading. New scans the plugin path (each directory and its immediate subdirectories, as
//     Kafka's plugin.path), checks every *.wasm's exports and imports against ABI v1, and reads
//     wc_abi_version and wc_describe from a scratch instance in wazero's interpreter, or takes the
//     descriptor from the cache for a file it described and compiled before, or from the module's
//     descriptor section (section.go; the shape is then checked when the module compiles). It compiles a module
//     once per process: a new one in the background at once, a cached one when it is first used
//     (lazy.go). A module that fails any step is listed in LoadErrors with its file and the precise
//     reason, and the others load regardless: one broken plugin must not keep a worker from starting.
//   - Reloading. Reload rescans the plugin path, and Watch does so whenever it changes (fsnotify):
//     new and replaced modules are described, removed ones leave the catalogue, and the sessions
//     already open keep the instances they have (reload.go, watch.go, retire.go).
//   - The catalogue. Plugins lists what the modules describe; Resolve finds the plugin a user named
//     the way Kafka Connect users expect (class, then short name, then alias) and, for an unknown
//     name, lists what is available.
//   - The caches. With Config.CacheDir, compiled code, instrumented modules and descriptors
//     survive restarts (a Go guest compiles in 1.3-2.2 s cold, ~60 ms from the cache), so that a
//     restarted worker lists its plugins in milliseconds.
//   - Instances. A Session holds the instances of one connector or task: at most one per module,
//     shared by every plugin of that module the session opens (key and value converter, say),
//     because a Go guest instance costs ~3 MiB and ~6 ms. Validate uses a throwaway instance so
//     that it never disturbs a running task. Each instance has a mutex: guests are single-threaded.
//   - The ABI host side. Input goes through one wc_alloc'd buffer per instance, reused and grown as
//     needed; results are copied out of guest memory at once, so nothing returned aliases it; the
//     imports wasmconnect.log and wasmconnect.offset_get bounds-check every guest pointer. The
//     binary layouts come from sdk/go/wire, shared with the Go guest SDK.
//   - Limits. Linear memory is capped per instance (Config.MemoryLimitBytes); every call is bounded
//     in time (Config.CallTimeout); the guest sees only the directories in Config.FSAllow (each
//     path confined to them after symbolic links are resolved, only regular files and directories
//     opened: internal/rootfs), real clocks and randomness, no environment, and only the TCP
//     destinations of Config.NetAllow (net.go, wasmhost/netgrant: checked on resolved addresses,
//     narrowed per session by Env.NetAllow, waits in the host bounded by the call's deadline and
//     context). Guest stdout and stderr become log lines tagged with connector and task.
//
// # Failures
//
// A plugin is untrusted, so no guest behaviour may crash the worker or leak into another task:
//
//   - *GuestError: the guest returned an error result (with its retriable bit), or a result the
//     host cannot accept (a pointer outside its memory, a malformed batch). The instance stays.
//   - *TrapError: a trap, a call aborted at its timeout or by its context, or a guest exit. Its
//     message carries the wasm stack trace and the tail of the guest's stderr (where Go and Rust
//     guests print their panics), so that a task's status trace explains itself. The instance is
//     then discarded: a guest that trapped cannot be trusted again (a Go guest was seen to die 17
//     calls after one trap). Later calls on any object of it fail with ErrInstanceFailed without
//     calling in; other instances and sessions are unaffected.
//
// # CPU bound
//
// Every module is fuel-instrumented when it is loaded (wasmhost/internal/fuel): each function entry
// and loop header counts down a per-instance counter by the instructions of the code up to the next
// check (an upper bound of the instructions run), and about every millisecond of work the guest
// calls back into the host, which aborts the call once plugin.call.timeout.ms has passed. That stops
// any loop, and the regular check-ins keep a spinning guest from stalling the Go GC of the whole
// process, at a fraction of the cost of wazero's WithCloseOnContextDone (BenchmarkCall and
// BenchmarkPoll compare bound=fuel, bound=deadline and bound=none). The mechanism sits behind the
// small cpuBound interface in cpu.go.
//
// # What it must not know
//
// Kafka. Records, offsets and configurations are opaque ABI values here: no topics are created,
// no offsets stored, no connector config keys interpreted (the Env's OffsetReader and the caller's
// config maps come from the worker). Nor does it know the worker's settings names: the worker maps
// plugin.path, plugin.memory.max.bytes, plugin.call.timeout.ms, plugin.fs.allow and plugin.net.allow
// onto Config (refused dials name plugin.net.allow, as sdk/ABI.md documents them).
//
// # Usage
//
//	h, err := wasmhost.New(ctx, wasmhost.Config{PluginPath: []string{"/opt/plugins"}, CacheDir: cacheDir})
//	for _, e := range h.LoadErrors() { log.Print(e) }
//	p, err := h.Resolve("FileStreamSource", wire.KindSource)
//	s := h.NewSession(wasmhost.Env{Connector: "file-source", Task: 0, Offsets: offsetStore})
//	defer s.Close(ctx)
//	task, err := s.Open(ctx, p, wire.RoleTask, taskConfig)
//	records, err := task.Poll(ctx)
//
// A task's transformations and predicates are objects of the same session (all of Kafka's standard
// ones come from one module, so a chain costs one instance). Object.Transform returns, for each
// output record, the index of the input it came from (an input with no output was dropped) and the
// records that failed alone, for errors.tolerance and the dead letter queue; Object.Test says which
// records a predicate matches:
//
//	tr, err := s.Open(ctx, insertField, wire.RoleTransformation, map[string]string{"static.field": "f", "static.value": "v"})
//	out, failed, err := tr.Transform(ctx, records) // out[i].Input, out[i].Record; failed[j].Input, .Class, .Message
package wasmhost
