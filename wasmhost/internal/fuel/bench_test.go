package fuel

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// The benchmarks compare the three ways to run a guest: plain (no CPU
// bound), instrumented with a Meter, and plain under wazero's
// WithCloseOnContextDone(true) with a context deadline per call. Run them
// with
//
//	go test -run '^$' -bench . ./wasmhost/internal/fuel/

// BenchmarkUpper upper-cases 204,000 bytes in the guest per op, a byte at a
// time (plus copying them in): a loop-heavy call.
func BenchmarkUpper(b *testing.B) {
	input := []byte(strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit. 0123456789!", 3000))
	for _, g := range guests {
		for _, mode := range benchModes {
			b.Run(g.name+"/"+mode.name, func(b *testing.B) {
				in, call := mode.start(b, g.wasm(b))
				ptr := uint32(in.mustCall(b, "alloc", uint64(len(input))))
				upper := in.mod.ExportedFunction("upper")
				b.SetBytes(int64(len(input)))
				b.ResetTimer()
				for b.Loop() {
					in.mod.Memory().Write(ptr, input)
					if err := call(upper, uint64(ptr), uint64(len(input))); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkCall measures the cost of one call that does almost nothing:
// fib(1).
func BenchmarkCall(b *testing.B) {
	for _, g := range guests {
		for _, mode := range benchModes {
			b.Run(g.name+"/"+mode.name, func(b *testing.B) {
				in, call := mode.start(b, g.wasm(b))
				fib := in.mod.ExportedFunction("fib")
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					if err := call(fib, 1); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

type callFunc func(fn api.Function, params ...uint64) error

var benchModes = []struct {
	name  string
	start func(b *testing.B, wasm []byte) (*instance, callFunc)
}{
	{"plain", func(b *testing.B, wasm []byte) (*instance, callFunc) {
		in := start(b, newRuntime(b, wazero.NewRuntimeConfig()), api.CoreFeaturesV2, wasm, false)
		return in, func(fn api.Function, params ...uint64) error {
			_, err := fn.Call(context.Background(), params...)
			return err
		}
	}},
	{"fuel", func(b *testing.B, wasm []byte) (*instance, callFunc) {
		in := start(b, newRuntime(b, wazero.NewRuntimeConfig()), api.CoreFeaturesV2, wasm, true)
		return in, func(fn api.Function, params ...uint64) error {
			in.meter.Start(time.Now().Add(time.Second))
			_, err := fn.Call(context.Background(), params...)
			return err
		}
	}},
	{"closeOnContextDone", func(b *testing.B, wasm []byte) (*instance, callFunc) {
		in := start(b, newRuntime(b, wazero.NewRuntimeConfig().WithCloseOnContextDone(true)), api.CoreFeaturesV2, wasm, false)
		return in, func(fn api.Function, params ...uint64) error {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_, err := fn.Call(ctx, params...)
			return err
		}
	}},
}

// BenchmarkInstrument measures Instrument on the 2 MB Go guest: the rewrite
// alone, and with the validation by wazero that Instrument adds.
func BenchmarkInstrument(b *testing.B) {
	wasm := buildGoGuest(b)
	b.Run("rewrite", func(b *testing.B) {
		b.SetBytes(int64(len(wasm)))
		for b.Loop() {
			m, err := decodeModule(wasm)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := m.instrument(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("rewrite+validate", func(b *testing.B) {
		b.SetBytes(int64(len(wasm)))
		for b.Loop() {
			if _, err := Instrument(wasm, api.CoreFeaturesV2); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("compile", func(b *testing.B) {
		for b.Loop() {
			r := wazero.NewRuntime(context.Background())
			if _, err := r.CompileModule(context.Background(), wasm); err != nil {
				b.Fatal(err)
			}
			r.Close(context.Background())
		}
	})
}
