package fuel

import (
	"context"
	"errors"
	"runtime"
	"runtime/metrics"
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

// BenchmarkGCHoldSpin is how long a guest call that never returns on its own holds a
// stop-the-world GC of the whole process: each op spins in a fresh instance until its 50 ms
// deadline aborts it, while another goroutine runs runtime.GC without pause, and the benchmark
// reports the longest time a GC waited for every goroutine to stop
// (/sched/pauses/stopping/gc:seconds, the upper bound of its histogram bucket) as max-stop-ms.
// Compiled guest code has no point where its goroutine can stop; the refill calls, about every
// DefaultQuantum units, are such points. "go-loop" is the machine's own share: the same GC loop
// while a Go loop spins for 50 ms and no guest runs. (Without fuel the GC would wait for the
// spin forever.)
//
//	go test -run '^$' -bench GCHoldSpin -benchtime 20x -count 3 ./wasmhost/internal/fuel/
func BenchmarkGCHoldSpin(b *testing.B) {
	const spin = 50 * time.Millisecond
	r := newRuntime(b, runtimeConfig(api.CoreFeaturesV2))
	for _, g := range append(guests, guest{"wat", func(testing.TB) []byte { return spinModule }}) {
		b.Run(g.name, func(b *testing.B) {
			wasm := g.wasm(b)
			start(b, r, api.CoreFeaturesV2, wasm, true) // compiles it, outside the measurement
			var in *instance
			whileCollecting(b, func() { in = start(b, r, api.CoreFeaturesV2, wasm, true) }, func() {
				in.meter.Start(time.Now().Add(spin))
				if _, err := in.call(b, context.Background(), "spin"); !errors.Is(err, ErrCPUBudgetExceeded) {
					b.Fatalf("spin returned %v, want ErrCPUBudgetExceeded", err)
				}
			})
		})
	}
	b.Run("go-loop", func(b *testing.B) {
		whileCollecting(b, func() {}, func() {
			for end := time.Now().Add(spin); time.Now().Before(end); {
			}
		})
	})
}

// whileCollecting runs setup and then fn, b.N times, while another goroutine runs runtime.GC
// without pause, and reports the longest time a stop-the-world GC waited for every goroutine to
// stop during an fn as max-stop-ms (setup's own non-preemptible work, such as an instance's
// memory initialisation, is not counted).
func whileCollecting(b *testing.B, setup, fn func()) {
	stop, collected := make(chan struct{}), make(chan struct{})
	var longest float64
	go func() {
		defer close(collected)
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	}()
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		setup()
		before := stoppingPauses()
		b.StartTimer()
		fn()
		longest = max(longest, longestNew(before, stoppingPauses()))
	}
	close(stop)
	<-collected
	b.ReportMetric(longest*1000, "max-stop-ms")
}

// stoppingPauses reads the process's histogram of the time stop-the-world GCs waited for every
// goroutine to stop.
func stoppingPauses() *metrics.Float64Histogram {
	s := []metrics.Sample{{Name: "/sched/pauses/stopping/gc:seconds"}}
	metrics.Read(s)
	return s[0].Value.Float64Histogram()
}

// longestNew is the upper bound, in seconds, of the highest bucket that counted a pause between
// two readings of one histogram (0: none did).
func longestNew(before, after *metrics.Float64Histogram) float64 {
	for i := len(after.Counts) - 1; i >= 0; i-- {
		if after.Counts[i] > before.Counts[i] {
			return after.Buckets[i+1]
		}
	}
	return 0
}
