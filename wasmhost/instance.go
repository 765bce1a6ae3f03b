package wasmhost

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// instance is one instantiation of a module. A guest is single-threaded and keeps state between
// calls, so every call goes through mu; the fields below it are only touched with mu held (host
// functions run on the calling goroutine, inside a call).
type instance struct {
	h   *Host
	m   *module
	log *slog.Logger // tagged with connector, task and module

	mu             sync.Mutex
	mod            api.Module
	mem            api.Memory
	fnAlloc        api.Function
	fnFree         api.Function
	fnCall         api.Function
	stack          [4]uint64
	inPtr, inCap   uint32 // the input buffer obtained with wc_alloc, reused across calls
	offsets        OffsetReader
	stdout, stderr *lineLogger
	failed         error           // set once: a *TrapError, or errSessionClosed; no call is made after
	hostErr        error           // a host function's complaint about the current call
	done           <-chan struct{} // the current call's cancellation, for sleeping host functions
	deadline       time.Time       // the current call's CPU bound, for waiting host functions
	net            *netState       // its connections (net.go); nil until a session owns it
	last           callCost        // of the last invoke that reached the guest
}

// callCost is what one call into the guest took, for PluginCalls.
type callCost struct {
	took time.Duration
	fuel uint64
}

// instanceKey carries the calling instance to the host functions through the call's context.
type instanceKey struct{}

func (in *instance) bind(ctx context.Context) context.Context {
	return context.WithValue(ctx, instanceKey{}, in)
}

// instantiate creates an instance of m and runs its _initialize. log receives the guest's log lines
// and stdio; offsets answers offset_get (nil: nothing stored).
func (h *Host) instantiate(ctx context.Context, m *module, log *slog.Logger, offsets OffsetReader) (*instance, error) {
	compiled, err := h.compiledModule(m)
	if err != nil {
		return nil, err
	}
	if err := m.use(); err != nil {
		return nil, err
	}
	in := &instance{h: h, m: m, log: log, offsets: offsets}
	in.stdout = newLineLogger(log, slog.LevelInfo, "stdout", false)
	in.stderr = newLineLogger(log, slog.LevelWarn, "stderr", true)
	mc := h.modCfg.WithStdout(in.stdout).WithStderr(in.stderr).WithNanosleep(in.nanosleep)

	// A start section runs guest code during instantiation, so the CPU bound applies here too.
	cctx, stop := h.cpu.start(ctx, nil)
	mod, err := h.rt.InstantiateModule(experimental.WithMemoryAllocator(in.bind(cctx), memoryAllocator), compiled, mc)
	stop()
	if err != nil {
		h.release(m)
		msg := fmt.Sprintf("instantiate %s: %v", m.base, err)
		if t := in.stderr.Output(); t != "" {
			msg += "\nguest stderr:\n" + t
		}
		return nil, fmt.Errorf("%s", msg)
	}
	in.mod = mod
	in.mem = mod.Memory()
	m.instances.Add(1)
	in.fnAlloc = mod.ExportedFunction("wc_alloc")
	in.fnFree = mod.ExportedFunction("wc_free")
	in.fnCall = mod.ExportedFunction("wc_call")
	if m.hasInitialize {
		in.mu.Lock()
		err := in.invoke(ctx, "", "_initialize", mod.ExportedFunction("_initialize"), in.stack[:])
		in.mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
	return in, nil
}

// nanosleep backs WASI clock sleeps: a real sleep, cut short when the call is aborted, so that a
// sleeping guest cannot outlive its call's deadline (wazero's default sleep returns at once).
func (in *instance) nanosleep(ns int64) {
	if ns <= 0 {
		return
	}
	t := time.NewTimer(time.Duration(ns))
	defer t.Stop()
	select {
	case <-t.C:
	case <-in.done:
	}
}

// invoke calls fn under the CPU bound. A failed call poisons the instance: after a trap a guest's
// state cannot be trusted (a Go guest was seen to die 17 calls after one), and after a timeout wazero
// has closed the module anyway. Callers hold in.mu.
func (in *instance) invoke(ctx context.Context, plugin, op string, fn api.Function, stack []uint64) error {
	if in.failed != nil {
		return &failedError{plugin: plugin, module: in.m.base, op: op, cause: in.failed}
	}
	cctx, stop := in.h.cpu.start(ctx, in.mod)
	in.done = cctx.Done()
	in.deadline = time.Now().Add(in.h.cfg.CallTimeout)
	in.hostErr = nil
	in.stderr.startCall()
	t0 := time.Now()
	err := fn.CallWithStack(in.bind(cctx), stack)
	elapsed := time.Since(t0)
	in.last = callCost{took: elapsed, fuel: stop()}
	in.done, in.deadline = nil, time.Time{}
	if err != nil {
		return in.fail(plugin, op, err, elapsed)
	}
	if e := in.hostErr; e != nil {
		in.hostErr = nil
		return &GuestError{Plugin: plugin, Module: in.m.base, Op: op, Message: e.Error()}
	}
	return nil
}

// fail turns a failed call into a *TrapError and discards the instance.
func (in *instance) fail(plugin, op string, cause error, elapsed time.Duration) *TrapError {
	in.stdout.flush()
	in.stderr.flush()
	te := &TrapError{
		Plugin: plugin, Module: in.m.base, Op: op, Cause: cause,
		Stderr:   in.stderr.Output(),
		Timeout:  isTimeout(cause),
		elapsed:  elapsed,
		limit:    in.h.cfg.CallTimeout,
		memBytes: uint64(in.mem.Size()),
		memLimit: uint64(in.h.pages) << 16,
	}
	// A failed memory.grow is invisible to the host; a memory at its cap (within a Go heap arena's
	// worth) or the guest's own words are the evidence we have.
	slack := min(te.memLimit/8, 4<<20)
	te.OutOfMemory = !te.Timeout && (te.memBytes+slack >= te.memLimit ||
		strings.Contains(strings.ToLower(te.Stderr), "out of memory"))
	in.failed = te
	in.m.instances.Add(-1)
	in.net.closeAll()
	in.h.cpu.release(in.mod)
	in.mod.Close(context.Background())
	in.h.release(in.m)
	in.log.Error("plugin instance failed and was discarded", "op", op, "plugin", plugin, "error", firstLine(te.Error()))
	return te
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// close discards the instance; later calls fail with cause (errSessionClosed if nil).
func (in *instance) close(ctx context.Context, cause error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if cause == nil {
		cause = errSessionClosed
	}
	if in.failed == nil {
		in.failed = cause
		in.m.instances.Add(-1)
		in.net.closeAll()
		in.h.cpu.release(in.mod)
		in.mod.Close(ctx)
		in.h.release(in.m)
	}
	in.stdout.flush()
	in.stderr.flush()
}

// call runs op on an object handle with the input that encode appends (nil: no input) and returns a
// copy of the result, so that nothing returned aliases guest memory. obs, if not nil, is told what
// the call cost. Callers hold in.mu.
func (in *instance) call(ctx context.Context, plugin string, obs PluginCalls, op wire.Op, handle int32, encode func([]byte) []byte) ([]byte, error) {
	return in.callInto(ctx, plugin, obs, op, handle, encode, nil)
}

// callInto is call copying the result into dst's backing array when it is large enough, so that a
// caller that reuses its buffer (the source loop's POLL results) does not allocate one per call.
func (in *instance) callInto(ctx context.Context, plugin string, obs PluginCalls, op wire.Op, handle int32, encode func([]byte) []byte, dst []byte) ([]byte, error) {
	name := op.String()
	if in.failed != nil {
		return nil, &failedError{plugin: plugin, module: in.m.base, op: name, cause: in.failed}
	}
	var ptr, n uint32
	if encode != nil {
		var err error
		if ptr, n, err = in.encodeInput(ctx, plugin, name, encode); err != nil {
			return nil, err
		}
	}
	s := in.stack[:]
	s[0], s[1], s[2], s[3] = api.EncodeI32(handle), api.EncodeI32(int32(op)), api.EncodeU32(ptr), api.EncodeU32(n)
	err := in.invoke(ctx, plugin, name, in.fnCall, s)
	if obs != nil {
		in.observe(obs, op, err)
	}
	if err != nil {
		return nil, err
	}
	return in.result(plugin, name, s[0], dst)
}

// encodeInput puts the input that encode appends into the instance's input buffer and returns
// its address and length. It encodes straight into the buffer in guest memory (the slice it hands
// encode is capped at the buffer's size, so a longer input is appended elsewhere and cannot
// overrun it): a batch is not encoded and then copied again, which for records or converter
// values is one pass less over every byte of the batch. An input that does not fit is written,
// growing the buffer (with headroom) for the next ones.
func (in *instance) encodeInput(ctx context.Context, plugin, op string, encode func([]byte) []byte) (uint32, uint32, error) {
	var b []byte
	if buf, ok := in.mem.Read(in.inPtr, in.inCap); ok && in.inPtr != 0 && len(buf) > 0 {
		if b = encode(buf[:0]); len(b) > 0 && &b[0] == &buf[0] {
			return in.inPtr, uint32(len(b)), nil
		}
	} else {
		b = encode(nil)
	}
	ptr, err := in.write(ctx, plugin, op, b)
	return ptr, uint32(len(b)), err
}

// observe reports a wc_call that reached the guest (invoke ran it, whether or not it trapped).
func (in *instance) observe(obs PluginCalls, op wire.Op, err error) {
	var te *TrapError
	trapped := errors.As(err, &te)
	if err != nil && !trapped {
		var ge *GuestError
		if !errors.As(err, &ge) {
			return // refused before the guest ran (a failed instance)
		}
	}
	mem := uint64(0)
	if trapped {
		mem = te.memBytes
	} else {
		mem = uint64(in.mem.Size())
	}
	obs.Call(op, in.last.took, in.last.fuel, mem, trapped)
}

// write copies data into the instance's input buffer, growing it first when needed, and returns
// its address. The buffer is allocated once and reused (sdk/ABI.md §2), so a steady stream of
// batches costs no allocation calls.
func (in *instance) write(ctx context.Context, plugin, op string, data []byte) (uint32, error) {
	if len(data) == 0 {
		return 0, nil
	}
	if len(data) > math.MaxInt32 {
		return 0, fmt.Errorf("%s %s: input of %d bytes is over the 2 GiB an ABI call can carry", who(plugin, in.m.base), op, len(data))
	}
	n := uint32(len(data))
	if n > in.inCap {
		if in.inPtr != 0 {
			in.stack[0], in.stack[1] = api.EncodeU32(in.inPtr), api.EncodeU32(in.inCap)
			if err := in.invoke(ctx, plugin, "wc_free", in.fnFree, in.stack[:]); err != nil {
				return 0, err
			}
			in.inPtr, in.inCap = 0, 0
		}
		// Leave headroom so that batches of varying size do not reallocate every time, an eighth:
		// the guest holds it for good; fall back to the exact size when it is short of memory.
		want := uint32(min((uint64(n)+uint64(n)/8+4095)&^4095, math.MaxInt32))
		ptr, err := in.alloc(ctx, plugin, op, want)
		if err == nil && ptr == 0 && want > n {
			want = n
			ptr, err = in.alloc(ctx, plugin, op, want)
		}
		if err != nil {
			return 0, err
		}
		if ptr == 0 {
			return 0, &GuestError{Plugin: plugin, Module: in.m.base, Op: op,
				Message: fmt.Sprintf("wc_alloc(%d) for the input returned 0: the guest is out of memory", n)}
		}
		in.inPtr, in.inCap = ptr, want
	}
	if !in.mem.Write(in.inPtr, data) {
		return 0, &GuestError{Plugin: plugin, Module: in.m.base, Op: op,
			Message: fmt.Sprintf("wc_alloc returned block %#x (+%d bytes) outside its %d-byte memory", in.inPtr, n, in.mem.Size())}
	}
	return in.inPtr, nil
}

func (in *instance) alloc(ctx context.Context, plugin, op string, size uint32) (uint32, error) {
	in.stack[0] = api.EncodeU32(size)
	if err := in.invoke(ctx, plugin, "wc_alloc", in.fnAlloc, in.stack[:]); err != nil {
		return 0, err
	}
	return api.DecodeU32(in.stack[0]), nil
}

// result reads a packed result (sdk/ABI.md §2) out of guest memory into dst's backing array (nil:
// a new one).
func (in *instance) result(plugin, op string, r uint64, dst []byte) ([]byte, error) {
	ptr, n, isErr, retriable := wire.UnpackResult(r)
	if ptr == 0 && n == 0 && !isErr {
		return nil, nil
	}
	b, ok := in.mem.Read(ptr, n)
	if !ok {
		return nil, &GuestError{Plugin: plugin, Module: in.m.base, Op: op,
			Message: fmt.Sprintf("returned a result buffer at %#x (+%d bytes) outside its %d-byte memory", ptr, n, in.mem.Size())}
	}
	if isErr {
		msg := string(b)
		if msg == "" {
			msg = "(the guest gave no message)"
		}
		return nil, &GuestError{Plugin: plugin, Module: in.m.base, Op: op, Message: msg, Retriable: retriable}
	}
	return append(dst[:0], b...), nil
}
