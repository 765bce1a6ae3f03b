package fuel

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// TestContextDeadlineWithoutMeter checks that an instance without a Meter
// still honours the deadline of the call's context.
func TestContextDeadlineWithoutMeter(t *testing.T) {
	r := newRuntime(t, runtimeConfig(api.CoreFeaturesV2))
	wasm, err := Instrument(spinModule, api.CoreFeaturesV2)
	if err != nil {
		t.Fatal(err)
	}
	mod, err := r.Instantiate(context.Background(), wasm)
	if err != nil {
		t.Fatal(err)
	}
	const timeout = 50 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	begin := time.Now()
	_, err = mod.ExportedFunction("spin").Call(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("spin returned %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(begin); d > timeout+slack {
		t.Errorf("stopped after %v", d)
	}
}

// TestStartFunctionBounded checks that a start function that spins is
// stopped by the deadline of the context passed to InstantiateModule.
func TestStartFunctionBounded(t *testing.T) {
	spinAtStart := wasmModule(
		vecSec(secType, voidFn),
		vecSec(secFunction, u32(0)),
		sec(secStart, u32(0)),
		vecSec(secCode, body(nil, loopBr0)),
	)
	r := newRuntime(t, runtimeConfig(api.CoreFeaturesV2))
	wasm, err := Instrument(spinAtStart, api.CoreFeaturesV2)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := r.Instantiate(ctx, wasm); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Instantiate returned %v, want context.DeadlineExceeded", err)
	}
}

// TestCloseStopsGuest checks that closing an instance from another
// goroutine stops a call that spins in it.
func TestCloseStopsGuest(t *testing.T) {
	r := newRuntime(t, runtimeConfig(api.CoreFeaturesV2))
	in := start(t, r, api.CoreFeaturesV2, spinModule, true)
	in.meter.Start(time.Time{}) // no deadline
	done := make(chan error)
	go func() {
		_, err := in.call(t, context.Background(), "spin")
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	in.mod.Close(context.Background())
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "closed") {
			t.Errorf("spin returned %v, want a closed-module error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("spin did not stop after Close")
	}
}

// TestInterpreter checks that instrumented modules are bounded under
// wazero's interpreter too.
func TestInterpreter(t *testing.T) {
	r := newRuntime(t, wazero.NewRuntimeConfigInterpreter())
	in := start(t, r, api.CoreFeaturesV2, spinModule, true)
	in.meter.Start(time.Now().Add(20 * time.Millisecond))
	if _, err := in.call(t, context.Background(), "spin"); !errors.Is(err, ErrCPUBudgetExceeded) {
		t.Fatalf("spin returned %v, want ErrCPUBudgetExceeded", err)
	}
}

func TestNewMeter(t *testing.T) {
	ctx := context.Background()
	r := newRuntime(t, runtimeConfig(api.CoreFeaturesV2))
	plain, err := r.Instantiate(ctx, spinModule)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewMeter(plain); err == nil || !strings.Contains(err.Error(), "not instrumented") {
		t.Errorf("NewMeter(uninstrumented) = %v, want a not instrumented error", err)
	}

	in := start(t, r, api.CoreFeaturesV2, spinModule, true)
	if _, err := NewMeter(in.mod); err == nil || !strings.Contains(err.Error(), "already has a meter") {
		t.Errorf("second NewMeter = %v, want an already has a meter error", err)
	}
	in.meter.Close()
	m, err := NewMeter(in.mod)
	if err != nil {
		t.Fatalf("NewMeter after Close: %v", err)
	}
	m.Close()
}

// wideLoop is (func (export "wide") (param $k i32) (local $acc i32) (loop
// width x (acc = acc + 1), then k = k - 1, br_if 0 (k != 0))): a loop whose
// body is long straight-line code, as a hostile module would write to run a
// whole quantum of fuel, at one unit an iteration, for seconds.
func wideLoop(width int) []byte {
	add := cat(op(0x20, u32(1)), op(0x41, []byte{1}), op(0x6a), op(0x21, u32(1)))                    // local.get 1, i32.const 1, i32.add, local.set 1
	step := cat(op(0x20, u32(0)), op(0x41, []byte{1}), op(0x6b), op(0x22, u32(0)), op(0x0d, u32(0))) // k-1, local.tee 0, br_if 0
	return wasmModule(
		vecSec(secType, funcType([]byte{i32}, nil)),
		vecSec(secFunction, u32(0)),
		vecSec(secExport, export("wide", externFunc, 0)),
		vecSec(secCode, body([][2]byte{{1, i32}}, op(opLoop, empty), bytes.Repeat(add, width), step, op(opEnd))),
	)
}

// TestFuelChargesWhatALoopBodyHolds checks that an iteration burns as much
// fuel as its body has instructions, and that a loop of long iterations that
// never ends is stopped at its deadline: charged one unit an iteration, this
// one ran 100 times past a 20 ms deadline.
func TestFuelChargesWhatALoopBodyHolds(t *testing.T) {
	const width = 50_000
	r := newRuntime(t, runtimeConfig(api.CoreFeaturesV2))
	in := start(t, r, api.CoreFeaturesV2, wideLoop(width), true)
	wide := in.mod.ExportedFunction("wide")

	in.meter.Start(time.Time{})
	const iterations = 100
	if _, err := wide.Call(context.Background(), iterations); err != nil {
		t.Fatal(err)
	}
	if used, least := in.meter.Used(), uint64(iterations*4*width); used < least {
		t.Fatalf("%d iterations of %d instructions burned %d fuel, want at least %d", iterations, 4*width, used, least)
	}

	in.meter.Start(time.Now().Add(20 * time.Millisecond))
	begin := time.Now()
	_, err := wide.Call(context.Background(), 1<<31-1)
	if !errors.Is(err, ErrCPUBudgetExceeded) {
		t.Fatalf("an endless wide loop returned %v, want ErrCPUBudgetExceeded", err)
	}
	if d := time.Since(begin); d > 20*time.Millisecond+slack {
		t.Errorf("stopped after %v", d)
	}
}

// fillLoop is (memory 1024) (func (export "fill") (param $k i32) (loop
// (memory.fill 0 7 64 MiB) k = k - 1, br_if 0 (k != 0))).
func fillLoop() []byte {
	fill := cat(op(0x41, []byte{0}), op(0x41, []byte{7}), op(0x41, appendSigned(nil, 64<<20)), op(opPrefixMisc, u32(0x0b), []byte{0}))
	step := cat(op(0x20, u32(0)), op(0x41, []byte{1}), op(0x6b), op(0x22, u32(0)), op(0x0d, u32(0)))
	return wasmModule(
		vecSec(secType, funcType([]byte{i32}, nil)),
		vecSec(secFunction, u32(0)),
		vecSec(secMemory, cat([]byte{0}, u32(1024))),
		vecSec(secExport, export("fill", externFunc, 0)),
		vecSec(secCode, body(nil, op(opLoop, empty), fill, step, op(opEnd))),
	)
}

// TestFuelChargesBulkLength checks that memory.fill (and the other bulk
// operations) burn fuel by their length: charged like any instruction, a
// loop of 256 MiB fills ran for hours on one quantum, and since no check ran,
// the first stop-the-world phase of the Go collector hung the whole process.
func TestFuelChargesBulkLength(t *testing.T) {
	r := newRuntime(t, runtimeConfig(api.CoreFeaturesV2))
	in := start(t, r, api.CoreFeaturesV2, fillLoop(), true)
	in.meter.Start(time.Time{})
	const fills = 3
	if _, err := in.mod.ExportedFunction("fill").Call(context.Background(), fills); err != nil {
		t.Fatal(err)
	}
	if used, least := in.meter.Used(), uint64(fills*(64<<20)/bytesPerUnit); used < least {
		t.Fatalf("%d fills of 64 MiB burned %d fuel, want at least %d", fills, used, least)
	}
}
