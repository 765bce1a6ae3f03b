package conformance

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/sdk/go/connect"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
	"github.com/wasmconnect/wasmconnect/wasmhost"
	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

// BenchmarkSDKTable measures, per SDK, what choosing a guest language costs, on the SDKs'
// conformance modules (the same five plugins in each), through the worker's plugin host, in one run:
//
//   - module size;
//   - cold compile: a host on an empty compilation cache, until the module is compiled
//     (wasmhost.New + CompileAll: describing it in the interpreter, fuel instrumentation, wazero's
//     compiler);
//   - warm load: the same on the cache the cold compile filled, as a worker restart does;
//   - instantiate: a new session opening the transformation (instantiation, _initialize, OPEN);
//   - memory per instance: the Go heap in use, after a GC, with 20 sessions that each transformed
//     a batch, less before, per session (wazero holds linear memory on the Go heap);
//   - records/s: conformance.Transform (every JSON value read into the SDK's data model and written
//     back, a header added) over batches of 1000 records with a small struct value;
//
// next to the peer, the same round trip of the same records natively in Go (sdk/go/connect Decode
// and Encode, the header appended), as the ratio records/s / native records/s. Each figure is the
// median of 3 rounds. The table goes to the benchmark log and to build/sdk-table.md.
//
//	go test -run '^$' -bench BenchmarkSDKTable -benchtime 1x ./wasmhost/conformance/
func BenchmarkSDKTable(b *testing.B) {
	batch := benchBatch()
	native := median3(func() float64 { return nativeRecordsPerSecond(b, batch) })
	rows := []string{
		"| SDK | module | cold compile | warm load | instantiate | memory per instance | records/s | vs native Go |",
		"|---|---|---|---|---|---|---|---|",
	}
	for _, sdk := range SDKs {
		dir := pluginbuild.DirOf(b, sdk.Pkg)
		mods, _ := filepath.Glob(filepath.Join(dir, "*.wasm"))
		fi, err := os.Stat(mods[0])
		if err != nil {
			b.Fatal(err)
		}
		var cold, warm, inst, mem, rate []float64
		for round := 0; round < 3; round++ {
			cache := b.TempDir()
			c, _ := loadHost(b, dir, cache)
			w, h := loadHost(b, dir, cache)
			cold, warm = append(cold, c.Seconds()), append(warm, w.Seconds())
			i, m := instances(b, h, batch)
			inst, mem = append(inst, i.Seconds()), append(mem, m)
			rate = append(rate, recordsPerSecond(b, h, batch))
		}
		r := median(rate)
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %.0f | %.2f |", sdk.Name, kb(float64(fi.Size())),
			ms(median(cold)), ms(median(warm)), ms(median(inst)), kb(median(mem)), r, r/native))
	}
	rows = append(rows, fmt.Sprintf("\nNative Go (sdk/go/connect, no host): %.0f records/s. Medians of 3; %d CPUs, %s.", native, runtime.NumCPU(), runtime.Version()))
	table := strings.Join(rows, "\n")
	b.Log("\n" + table)
	if err := os.MkdirAll(filepath.Join("..", "..", "build"), 0o755); err == nil {
		os.WriteFile(filepath.Join("..", "..", "build", "sdk-table.md"), []byte(table+"\n"), 0o644)
	}
}

func benchBatch() []wire.Record {
	schema := []byte(`{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"},{"type":"string","optional":false,"field":"name"},{"type":"double","optional":true,"field":"score"}],"optional":false,"name":"bench.Row"}`)
	batch := make([]wire.Record, 1000)
	for i := range batch {
		batch[i] = wire.Record{Topic: "t", Partition: 0, Offset: int64(i), Timestamp: -1, Key: wire.String(fmt.Sprint(i)),
			Value: wire.JSON(schema, fmt.Appendf(nil, `{"id":%d,"name":"name-%d","score":%d.5}`, i, i, i))}
	}
	return batch
}

// loadHost starts a host on the module in dir with the compilation cache in cache and returns how
// long it took until the module was compiled.
func loadHost(b *testing.B, dir, cache string) (time.Duration, *wasmhost.Host) {
	b.Helper()
	ctx := context.Background()
	start := time.Now()
	h, err := wasmhost.New(ctx, wasmhost.Config{PluginPath: []string{dir}, CacheDir: cache, CallTimeout: 10 * time.Second,
		MemoryLimitBytes: 64 << 20, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err == nil {
		err = h.CompileAll()
	}
	took := time.Since(start)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close(ctx) })
	return took, h
}

// instances opens the transformation in 20 new sessions, each of which transforms the batch, and
// returns the median time to open one and the heap each holds.
func instances(b *testing.B, h *wasmhost.Host, batch []wire.Record) (time.Duration, float64) {
	b.Helper()
	ctx := context.Background()
	p, err := h.Resolve("conformance.Transform", wire.KindTransformation)
	if err != nil {
		b.Fatal(err)
	}
	const n = 20
	sessions := make([]*wasmhost.Session, n)
	opens := make([]float64, n)
	before := heapInUse()
	for i := range sessions {
		s := h.NewSession(wasmhost.Env{Connector: "bench", Task: i})
		start := time.Now()
		tr, err := s.Open(ctx, p, wire.RoleTransformation, nil)
		opens[i] = time.Since(start).Seconds()
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := tr.Transform(ctx, batch); err != nil {
			b.Fatal(err)
		}
		sessions[i] = s
	}
	per := float64(heapInUse()-before) / n
	for _, s := range sessions {
		s.Close(ctx)
	}
	return time.Duration(median(opens) * float64(time.Second)), per
}

func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

// recordsPerSecond transforms the batch for about a second through one session.
func recordsPerSecond(b *testing.B, h *wasmhost.Host, batch []wire.Record) float64 {
	b.Helper()
	ctx := context.Background()
	p, err := h.Resolve("conformance.Transform", wire.KindTransformation)
	if err != nil {
		b.Fatal(err)
	}
	s := h.NewSession(wasmhost.Env{Connector: "bench"})
	defer s.Close(ctx)
	tr, err := s.Open(ctx, p, wire.RoleTransformation, nil)
	if err != nil {
		b.Fatal(err)
	}
	tr.Transform(ctx, batch) // warm
	n, start := 0, time.Now()
	for time.Since(start) < time.Second {
		out, _, err := tr.Transform(ctx, batch)
		if err != nil || len(out) != len(batch) {
			b.Fatalf("%d outputs, %v", len(out), err)
		}
		n += len(batch)
	}
	return float64(n) / time.Since(start).Seconds()
}

// nativeRecordsPerSecond is the conformance transformation's work done natively in Go: each
// record's key and value read into the data model and written back, and a header appended.
func nativeRecordsPerSecond(b *testing.B, batch []wire.Record) float64 {
	b.Helper()
	roundTrip := func(d wire.Data) wire.Data {
		if d.Tag != wire.TagJSON {
			return d
		}
		s, v, err := connect.Decode(d)
		if err == nil {
			d, err = connect.Encode(s, v)
		}
		if err != nil {
			b.Fatal(err)
		}
		return d
	}
	out := make([]wire.Record, len(batch))
	n, start := 0, time.Now()
	for time.Since(start) < time.Second {
		for i, r := range batch {
			r.Key, r.Value = roundTrip(r.Key), roundTrip(r.Value)
			r.Headers = append(slices.Clip(r.Headers), wire.Header{Key: "seen", Value: wire.String("c")})
			out[i] = r
		}
		n += len(batch)
	}
	return float64(n) / time.Since(start).Seconds()
}

func median3(f func() float64) float64 { return median([]float64{f(), f(), f()}) }

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(sec float64) string {
	if sec < 0.001 {
		return fmt.Sprintf("%.0f µs", sec*1e6)
	}
	return fmt.Sprintf("%.1f ms", sec*1e3)
}

func kb(bytes float64) string {
	if bytes >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", bytes/(1<<20))
	}
	return fmt.Sprintf("%.0f KiB", bytes/1024)
}
