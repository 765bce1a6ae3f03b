package fuel

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero/api"
)

// guest is a test module with the exports of testdata/cguest/guest.c:
// alloc, upper, fib, work, spin and boom.
type guest struct {
	name string
	wasm func(testing.TB) []byte
}

var guests = []guest{
	{"c", func(testing.TB) []byte { return cGuest }},
	{"c-simd", func(testing.TB) []byte { return cSIMDGuest }},
	{"go", buildGoGuest},
}

// TestGuestsComputeTheSame runs real C and Go guests with and without
// instrumentation and compares every result and the stack trace of a trap.
func TestGuestsComputeTheSame(t *testing.T) {
	for _, g := range guests {
		t.Run(g.name, func(t *testing.T) {
			wasm := g.wasm(t)
			r := newRuntime(t, runtimeConfig(api.CoreFeaturesV2))
			plain := start(t, r, api.CoreFeaturesV2, wasm, false)
			fueled := start(t, r, api.CoreFeaturesV2, wasm, true)

			input := []byte(strings.Repeat("Hello, fuel! abc-XYZ 0123 ", 4000))
			var out [2][]byte
			for i, in := range []*instance{plain, fueled} {
				ptr := uint32(in.mustCall(t, "alloc", uint64(len(input))))
				if !in.mod.Memory().Write(ptr, input) {
					t.Fatal("write out of range")
				}
				if got, want := in.mustCall(t, "upper", uint64(ptr), uint64(len(input))), lowercase(input); got != want {
					t.Fatalf("upper changed %d bytes, want %d", got, want)
				}
				out[i], _ = in.mod.Memory().Read(ptr, uint32(len(input)))
			}
			if want := strings.ToUpper(string(input)); string(out[0]) != want || string(out[1]) != want {
				t.Fatal("upper: output differs from strings.ToUpper")
			}
			for _, c := range []struct {
				fn  string
				arg uint64
			}{{"fib", 25}, {"work", 20000}} {
				if p, f := plain.mustCall(t, c.fn, c.arg), fueled.mustCall(t, c.fn, c.arg); p != f {
					t.Errorf("%s(%d) = %d plain, %d instrumented", c.fn, c.arg, p, f)
				}
			}

			// A trap reports the same wasm stack trace: the function names
			// followed their functions.
			_, perr := plain.call(t, context.Background(), "boom")
			fueled.meter.Start(time.Now().Add(time.Minute))
			_, ferr := fueled.call(t, context.Background(), "boom")
			if perr == nil || ferr == nil {
				t.Fatalf("boom returned %v plain, %v instrumented", perr, ferr)
			}
			if perr.Error() != ferr.Error() {
				t.Errorf("trap differs:\nplain:        %v\ninstrumented: %v", perr, ferr)
			}
		})
	}
}

// TestGuestsSpinStopped checks that an infinite loop (for {} in Go, for (;;)
// in C) stops soon after the meter's deadline with ErrCPUBudgetExceeded, and
// that the instance is closed after it.
func TestGuestsSpinStopped(t *testing.T) {
	for _, g := range append(guests, guest{"wat", func(testing.TB) []byte { return spinModule }}) {
		t.Run(g.name, func(t *testing.T) {
			r := newRuntime(t, runtimeConfig(api.CoreFeaturesV2))
			in := start(t, r, api.CoreFeaturesV2, g.wasm(t), true)
			const budget = 100 * time.Millisecond
			begin := time.Now()
			in.meter.Start(begin.Add(budget))
			_, err := in.call(t, context.Background(), "spin")
			elapsed := time.Since(begin)
			if !errors.Is(err, ErrCPUBudgetExceeded) {
				t.Fatalf("spin returned %v, want ErrCPUBudgetExceeded", err)
			}
			t.Logf("stopped after %v: %v", elapsed, firstLine(err))
			if elapsed < budget || elapsed > budget+slack {
				t.Errorf("stopped after %v, want %v + at most %v", elapsed, budget, slack)
			}
			if !in.mod.IsClosed() {
				t.Error("the instance is still open after the abort")
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			if _, err := in.call(t, ctx, "spin"); err == nil || errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("a call into the aborted instance returned %v, want a closed-module error", err)
			}
		})
	}
}

// slack is how late past its deadline a spinning guest may stop and still pass:
// the promise to users is "within 1 s". A refill comes every ~1 ms, so the
// stop is usually a few ms late; how late exactly is a benchmark's business
// (BenchmarkBuiltinSourceBound), not this test's, which would otherwise fail
// whenever a loaded machine deschedules the goroutine for a moment.
const slack = 900 * time.Millisecond

func lowercase(b []byte) (n uint64) {
	for _, c := range b {
		if 'a' <= c && c <= 'z' {
			n++
		}
	}
	return n
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// TestGCWhileGuestSpins checks that a stop-the-world GC does not wait for a
// spinning guest: the refill calls are points where the goroutine running
// the guest can stop.
func TestGCWhileGuestSpins(t *testing.T) {
	for _, g := range append(guests, guest{"wat", func(testing.TB) []byte { return spinModule }}) {
		t.Run(g.name, func(t *testing.T) {
			r := newRuntime(t, runtimeConfig(api.CoreFeaturesV2))
			in := start(t, r, api.CoreFeaturesV2, g.wasm(t), true)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error)
			in.meter.Start(time.Now().Add(time.Minute))
			go func() {
				_, err := in.call(t, ctx, "spin")
				done <- err
			}()
			time.Sleep(50 * time.Millisecond) // let it spin
			// Without the refills the first GC would wait for the deadline, a
			// minute away, so a bound of a second tells the two apart on a
			// machine busy with other work. Judge the median of a few.
			var took []time.Duration
			for i := 0; i < 5; i++ {
				begin := time.Now()
				runtime.GC()
				took = append(took, time.Since(begin))
			}
			slices.Sort(took)
			t.Logf("runtime.GC took %v while the guest spun", took)
			if median := took[len(took)/2]; median > time.Second {
				t.Errorf("runtime.GC took a median %v while the guest spun", median)
			}
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("spin returned %v, want context.Canceled", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("spin did not stop after cancel")
			}
		})
	}
}
