// Package fuel bounds the CPU time of untrusted WebAssembly guests run by
// wazero, cheaply, by rewriting each module once when it is loaded.
//
// Instrument adds to a module an exported mutable i64 global, the fuel
// counter, and a check at the entry of every function and at the top of
// every loop body that decrements it by the number of instructions of the
// code the check covers (the function outside its loops, the loop's body
// outside the loops in it). When the counter goes below zero the
// check calls a host function, refill, which either refills the counter or
// aborts the call. A Meter gives each instance a per-call deadline:
//
//	fuel.Instantiate(ctx, r)                 // once per runtime
//	wasm, err := fuel.Instrument(raw, api.CoreFeaturesV2) // once per module; cache it
//	mod, err := r.Instantiate(ctx, wasm)
//	meter, err := fuel.NewMeter(mod)         // once per instance; Close it with the instance
//	meter.Start(time.Now().Add(time.Second)) // before every call
//	_, err = mod.ExportedFunction("process").Call(ctx, ...)
//	// errors.Is(err, fuel.ErrCPUBudgetExceeded) after a runaway call
//
// # Why not WithCloseOnContextDone
//
// wazero can stop a guest when the call's context is done
// (wazero.RuntimeConfig.WithCloseOnContextDone), but to do so its compiler
// makes every loop iteration leave the compiled code and call into Go to
// check the module's state, and each call starts a goroutine to watch the
// context. On loop-heavy guests that costs 8-23x in throughput, and about 2
// µs per call. The fuel check is a load, a store and a branch that is almost
// never taken. The benchmarks in this package compare the three ways on a
// byte-at-a-time loop; medians of 8 rounds on 2 shared vCPUs:
//
//	                 plain      fuel              WithCloseOnContextDone
//	C guest          740 MB/s   665 MB/s (0.90x)  60 MB/s (0.08x)
//	Go guest         404 MB/s   264 MB/s (0.65x)  27 MB/s (0.07x)
//	one tiny call     53 ns     118 ns            2.4 µs
//
// Go guests pay more because the Go compiler turns every function into a
// loop around a br_table, so most branches pass a loop header. Of the 65 ns
// per call, 55 ns are the caller's time.Now for the deadline.
//
// # Why check in with the host
//
// Compiled WebAssembly has no Go preemption point. While any guest call runs,
// a stop-the-world phase of the Go garbage collector, in the whole process,
// waits for it: a guest that spins for a second stalls every goroutine of
// the host for that second, and a guest that never returns stalls it for
// ever. Trapping when the fuel runs out would bound that, but only by the
// whole budget. Instead the counter holds a small quantum (DefaultQuantum,
// about a millisecond of a tight loop), and the refill, a Go function, is
// where the goroutine lets the collector in, and where the deadline and the
// context are checked.
//
// A unit of fuel is one instruction of the code a check covers. In structured
// WebAssembly the only backward branches go to loop headers, so between two
// checks each such instruction runs at most once: the fuel burned is an upper
// bound of the instructions run, and a quantum is about a millisecond of any
// code (instructions differ in cost, by a small factor). An earlier version
// charged one unit per check, which let a loop whose body is long
// straight-line code run a quantum for seconds
// (TestFuelChargesWhatALoopBodyHolds). Recursion and tail calls
// (return_call) are counted by the entry checks, and a guest's catch_all
// does not catch an abort, which is a Go panic, not a WebAssembly exception.
//
// # After an abort
//
// An abort stops the guest in the middle of whatever it was doing: its
// allocator, its language runtime (a Go guest's scheduler, say) may be left
// inconsistent. The refill therefore closes the instance (with the exit code
// wazero uses for a context deadline or cancellation) before it panics, so a
// later call fails at once. Discard the instance and instantiate a new one.
//
// Without a Meter, an instance honours only the cancellation and deadline of
// the context of each call. That is also how start functions (_initialize)
// are bounded: instantiate with a context that has a deadline.
//
// # Security
//
// The module is untrusted, and the rewrite is part of the sandbox:
//
//   - Instrument validates the original module with wazero (compiling it with
//     the interpreter, without instantiating it) before returning the
//     rewrite. The rewrite adds a global and a function, so a module that
//     refers to an index one past its own is invalid as uploaded but would
//     be valid, and able to write its own counter, after the rewrite.
//   - The walker must see every loop that wazero compiles. It knows the
//     immediates of every instruction wazero accepts and reads them the way
//     wazero does where that differs from the specification (wazero reads
//     the 0xfd and 0xfe sub-opcodes as one byte); it rejects what it does not
//     know, including the legacy exception handling instructions, which
//     wazero rejects too.
//   - Before wazero sees a module, this package parses all of it and rejects
//     vectors that declare more elements than they have bytes and functions
//     with absurd numbers of locals: wazero's decoder allocates from declared
//     counts, so a few bytes could make it allocate gigabytes.
//   - Do not let other untrusted modules import from an instrumented
//     instance: one that imports the counter global could keep refilling it.
//     Instantiate guests anonymously, or check their imports.
//
// Bulk operations on a range (memory.copy, memory.fill, memory.init and the
// table ones) are charged their length, a unit per 8 bytes, before they run,
// so a loop of them checks in every iteration; a single one still runs whole,
// for as long as the memory cap (wazero.RuntimeConfig.WithMemoryLimitPages)
// lets it: about 30 ms for 256 MiB. What fuel does not bound: memory.grow
// (bounded by the cap), and host functions the guest calls, which run
// outside the guest's accounting.
package fuel
