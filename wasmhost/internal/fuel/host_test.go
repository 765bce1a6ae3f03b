package fuel

import (
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
