package fuel

import (
	"bytes"
	"context"
	_ "embed"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

// This file holds the test fixtures: small modules assembled in Go, the C
// guests built from testdata/cguest, and the Go guest built on demand from
// testdata/goguest.

var (
	//go:embed testdata/cguest/guest.wasm
	cGuest []byte
	//go:embed testdata/cguest/guest-simd.wasm
	cSIMDGuest []byte
)

var goGuest struct {
	once sync.Once
	wasm []byte
	err  error
}

// buildGoGuest builds testdata/goguest with GOOS=wasip1 GOARCH=wasm
// -buildmode=c-shared, once per test binary. The go command's build cache
// makes it fast after the first run.
func buildGoGuest(tb testing.TB) []byte {
	tb.Helper()
	goTool, err := exec.LookPath("go") // go test puts GOROOT/bin first in PATH
	if err != nil {
		pluginbuild.Missing(tb, "the go command", err.Error())
	}
	goGuest.once.Do(func() {
		dir, err := os.MkdirTemp("", "fuel-goguest")
		if err != nil {
			goGuest.err = err
			return
		}
		defer os.RemoveAll(dir)
		out := filepath.Join(dir, "goguest.wasm")
		cmd := exec.Command(goTool, "build", "-buildmode=c-shared", "-o", out, "./testdata/goguest")
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			goGuest.err = &buildError{err: err, stderr: stderr.String()}
			return
		}
		goGuest.wasm, goGuest.err = os.ReadFile(out)
	})
	if goGuest.err != nil {
		tb.Fatalf("building the Go guest: %v", goGuest.err)
	}
	return goGuest.wasm
}

type buildError struct {
	err    error
	stderr string
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.stderr }

// instance is one instantiated test guest.
type instance struct {
	mod   api.Module
	meter *Meter // nil unless instrumented
}

func (in *instance) call(tb testing.TB, ctx context.Context, name string, params ...uint64) ([]uint64, error) {
	tb.Helper()
	fn := in.mod.ExportedFunction(name)
	if fn == nil {
		tb.Fatalf("no export %q", name)
	}
	return fn.Call(ctx, params...)
}

// mustCall calls name and returns its first result.
func (in *instance) mustCall(tb testing.TB, name string, params ...uint64) uint64 {
	tb.Helper()
	if in.meter != nil {
		in.meter.Start(time.Now().Add(time.Minute))
	}
	res, err := in.call(tb, context.Background(), name, params...)
	if err != nil {
		tb.Fatalf("%s%v: %v", name, params, err)
	}
	if len(res) == 0 {
		return 0
	}
	return res[0]
}

// runtimeConfig is the configuration of the tests' runtimes: the compiler,
// the given features, no DWARF (instrumented modules have none, and stack
// traces are compared).
func runtimeConfig(features api.CoreFeatures) wazero.RuntimeConfig {
	return wazero.NewRuntimeConfig().WithCoreFeatures(features).WithDebugInfoEnabled(false)
}

// newRuntime returns a runtime with the fuel host module and WASI.
func newRuntime(tb testing.TB, cfg wazero.RuntimeConfig) wazero.Runtime {
	tb.Helper()
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, cfg)
	tb.Cleanup(func() { r.Close(ctx) })
	if _, err := Instantiate(ctx, r); err != nil {
		tb.Fatal(err)
	}
	wasi_snapshot_preview1.MustInstantiate(ctx, r)
	return r
}

// start instantiates wasm in r, instrumenting it first if instrument is set,
// and attaches a meter to instrumented instances.
func start(tb testing.TB, r wazero.Runtime, features api.CoreFeatures, wasm []byte, instrument bool) *instance {
	tb.Helper()
	ctx := context.Background()
	if instrument {
		var err error
		if wasm, err = Instrument(wasm, features); err != nil {
			tb.Fatal(err)
		}
	}
	compiled, err := r.CompileModule(ctx, wasm)
	if err != nil {
		tb.Fatal(err)
	}
	cfg := wazero.NewModuleConfig().WithName("")
	if _, ok := compiled.ExportedFunctions()["_initialize"]; ok {
		cfg = cfg.WithStartFunctions("_initialize")
	}
	ictx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	mod, err := r.InstantiateModule(ictx, compiled, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	in := &instance{mod: mod}
	tb.Cleanup(func() { mod.Close(ctx) })
	if instrument {
		if in.meter, err = NewMeter(mod); err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(in.meter.Close)
	}
	return in
}

// Helpers that assemble binary modules.

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func u32(v uint32) []byte { return appendU32(nil, v) }

func str(s string) []byte { return appendName(nil, s) }

// vec encodes a vector of already encoded items.
func vec(items ...[]byte) []byte { return cat(u32(uint32(len(items))), cat(items...)) }

func sec(id byte, content ...[]byte) []byte {
	c := cat(content...)
	return cat([]byte{id}, u32(uint32(len(c))), c)
}

// vecSec encodes a section holding a vector.
func vecSec(id byte, items ...[]byte) []byte { return sec(id, vec(items...)) }

func customSec(name string, content []byte) []byte { return sec(secCustom, str(name), content) }

func wasmModule(sections ...[]byte) []byte { return cat(header, cat(sections...)) }

func funcType(params, results []byte) []byte {
	return cat([]byte{typeFunc}, u32(uint32(len(params))), params, u32(uint32(len(results))), results)
}

// body encodes a function body: local groups as (count, type) pairs, then
// the instructions, to which the final end is added.
func body(locals [][2]byte, instrs ...[]byte) []byte {
	l := u32(uint32(len(locals)))
	for _, g := range locals {
		l = append(l, g[0], g[1])
	}
	return bodyWithLocals(l, instrs...)
}

// bodyWithLocals is body with the locals already encoded.
func bodyWithLocals(locals []byte, instrs ...[]byte) []byte {
	c := cat(locals, cat(instrs...), []byte{opEnd})
	return cat(u32(uint32(len(c))), c)
}

func export(name string, kind byte, idx uint32) []byte { return cat(str(name), []byte{kind}, u32(idx)) }

func importFunc(module, name string, typeIdx uint32) []byte {
	return cat(str(module), str(name), []byte{externFunc}, u32(typeIdx))
}

// op encodes an instruction: an opcode and its immediates.
func op(code byte, imm ...[]byte) []byte { return cat([]byte{code}, cat(imm...)) }

func i32c(v int32) []byte { return op(opI32Const, appendSigned(nil, int64(v))) }

func i64c(v int64) []byte { return op(opI64Const, appendSigned(nil, v)) }

func appendSigned(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

const (
	i32 = 0x7f
	i64 = 0x7e
)
