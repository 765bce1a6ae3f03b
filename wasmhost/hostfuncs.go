package wasmhost

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// instantiateHostModule provides the "wasmconnect" imports of sdk/ABI.md §1 (the network ones are in
// net.go). They are registered once per runtime and find the calling instance (its logger, its
// offsets, its connections) in the call's context. A guest is linked only to the imports it names,
// so one that does not use the network is unaffected by its functions.
//
// Guest pointers are never trusted: every access is bounds-checked, and a bad one is recorded as a
// GuestError for the current call instead of panicking, which wazero would turn into a trap.
func instantiateHostModule(ctx context.Context, rt wazero.Runtime) error {
	_, err := exportNet(rt.NewHostModuleBuilder("wasmconnect").
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(hostLog), []api.ValueType{i32, i32, i32}, nil).
		WithParameterNames("level", "ptr", "len").
		Export("log").
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(hostOffsetGet), []api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}).
		WithParameterNames("part_ptr", "part_len", "out_ptr", "out_cap").
		WithResultNames("len").
		Export("offset_get")).
		Instantiate(ctx)
	return err
}

// LevelTrace is the slog level of the guest's trace level (0), below slog.LevelDebug.
const LevelTrace = slog.LevelDebug - 4

func guestLevel(l int32) slog.Level {
	switch {
	case l <= 0:
		return LevelTrace
	case l == 1:
		return slog.LevelDebug
	case l == 2:
		return slog.LevelInfo
	case l == 3:
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}

// hostLog is wasmconnect.log(level, ptr, len).
func hostLog(ctx context.Context, m api.Module, stack []uint64) {
	in, _ := ctx.Value(instanceKey{}).(*instance)
	if in == nil {
		return
	}
	level, ptr, n := api.DecodeI32(stack[0]), api.DecodeU32(stack[1]), api.DecodeU32(stack[2])
	b, ok := m.Memory().Read(ptr, n)
	if !ok {
		in.badPointer(m.Memory(), "log", ptr, n)
		return
	}
	msg := strings.TrimRight(string(b[:min(len(b), maxLogLine)]), "\r\n")
	if len(b) > maxLogLine {
		msg += fmt.Sprintf(" ... (%d more bytes)", len(b)-maxLogLine)
	}
	in.log.Log(ctx, guestLevel(level), msg)
}

// hostOffsetGet is wasmconnect.offset_get(part_ptr, part_len, out_ptr, out_cap) -> len.
func hostOffsetGet(ctx context.Context, m api.Module, stack []uint64) {
	in, _ := ctx.Value(instanceKey{}).(*instance)
	partPtr, partLen := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
	outPtr, outCap := api.DecodeU32(stack[2]), api.DecodeU32(stack[3])
	stack[0] = api.EncodeI32(-1)
	if in == nil {
		return
	}
	part, ok := m.Memory().Read(partPtr, partLen)
	if !ok {
		in.badPointer(m.Memory(), "offset_get (partition)", partPtr, partLen)
		return
	}
	if in.offsets == nil {
		return
	}
	off, found := in.offsets.Offset(append([]byte(nil), part...))
	if !found || len(off) > 1<<30 {
		return
	}
	if uint32(len(off)) <= outCap && !m.Memory().Write(outPtr, off) {
		in.badPointer(m.Memory(), "offset_get (output)", outPtr, outCap)
		return
	}
	stack[0] = api.EncodeI32(int32(len(off)))
}

func (in *instance) badPointer(mem api.Memory, what string, ptr, n uint32) {
	if in.hostErr == nil {
		in.hostErr = fmt.Errorf("passed %s a buffer at %#x (+%d bytes) outside its %d-byte memory", what, ptr, n, mem.Size())
	}
}
