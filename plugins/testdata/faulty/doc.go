// Command faulty is a test-only wasmconnect plugin module (under testdata, so go build ./... skips
// it) whose source connector misbehaves on purpose, to test that the worker confines a bad plugin to
// its own task. Build it with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags='-s -w' -o build/testplugins/faulty.wasm ./plugins/testdata/faulty
//
// Faulty (class wasmconnect.testing.FaultySource) emits one record per poll, "poll N" on topic, and
// on poll after.polls+1 does what fault says:
//
//   - none: nothing, it keeps emitting.
//   - trap: a real WebAssembly trap. The SDK recovers panics on the goroutine that runs wc_call, so
//     the task makes the runtime panic (a nil function call) on a new goroutine and waits for it:
//     nothing recovers there, so the Go runtime prints the panic to stderr and aborts the module
//     instance; the host sees a trap ("unreachable") or an exit and must discard the instance.
//   - loop: spins forever; the host's call timeout (plugin.call.timeout.ms) must abort it.
//   - oom: allocates until the linear memory cap (plugin.memory.max.bytes) is hit; the Go runtime's
//     "fatal error: out of memory" cannot be recovered and aborts the instance.
//   - panic: panics in Poll; the SDK recovers it and returns a clean error result, the instance stays
//     usable.
//   - fs: opens file (default /etc/passwd), which should lie outside plugin.fs.allow: a clean error
//     naming the path and the granted directories.
package main
