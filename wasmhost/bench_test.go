package wasmhost

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/runtime/metrics"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

const benchBatch = 1000

// forEachBound runs fn as a sub-benchmark per CPU bound, with a session of a fresh host.
func forEachBound(b *testing.B, fn func(b *testing.B, h *Host, s *Session)) {
	for _, bound := range []struct {
		name string
		cpu  cpuBound
	}{{"bound=fuel", nil}, {"bound=deadline", deadlineBound{timeout: DefaultCallTimeout}}, {"bound=none", unbounded{}}} {
		b.Run(bound.name, func(b *testing.B) {
			h, _ := newTestHostBound(b, Config{}, bound.cpu)
			s := h.NewSession(Env{Connector: "bench", Task: 0, Logger: slog.New(slog.DiscardHandler)})
			b.Cleanup(func() { s.Close(context.Background()) })
			fn(b, h, s)
		})
	}
}

func reportRecords(b *testing.B) {
	b.ReportMetric(float64(b.N)*benchBatch/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkPoll: one POLL of 1000 records (~100 KB): the guest building the batch, the call, the
// copy out of guest memory and decoding into wire.Records.
func BenchmarkPoll(b *testing.B) {
	forEachBound(b, func(b *testing.B, h *Host, s *Session) {
		ctx := context.Background()
		task, err := s.Open(ctx, mustResolve(b, h, "SeqSource"), wire.RoleTask,
			map[string]string{"topic": "t", "batch.size": fmt.Sprint(benchBatch)})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			rs, err := task.Poll(ctx)
			if err != nil || len(rs) != benchBatch {
				b.Fatal(len(rs), err)
			}
		}
		reportRecords(b)
	})
}

// BenchmarkConvert: a batch of 1000 values of 100 bytes through the echo converter, both ways:
// encoding, the copy into the reused input buffer, the guest's loop, the copy out and decoding.
func BenchmarkConvert(b *testing.B) {
	payload := make([]byte, 100)
	data := make([]wire.TopicData, benchBatch)
	raw := make([]wire.TopicBytes, benchBatch)
	for i := range data {
		data[i] = wire.TopicData{Topic: "topic", Value: wire.Bytes(payload)}
		raw[i] = wire.TopicBytes{Topic: "topic", Bytes: payload}
	}
	forEachBound(b, func(b *testing.B, h *Host, s *Session) {
		ctx := context.Background()
		conv, err := s.Open(ctx, mustResolve(b, h, "Echo"), wire.RoleConverter, map[string]string{"converter.type": "value"})
		if err != nil {
			b.Fatal(err)
		}
		b.Run("FromConnect", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if out, err := conv.FromConnect(ctx, data); err != nil || len(out) != benchBatch {
					b.Fatal(len(out), err)
				}
			}
			reportRecords(b)
		})
		b.Run("ToConnect", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if out, err := conv.ToConnect(ctx, raw); err != nil || len(out) != benchBatch {
					b.Fatal(len(out), err)
				}
			}
			reportRecords(b)
		})
	})
}

// BenchmarkCall: the fixed cost of one ABI call with no payload (COMMIT), which the batch size
// amortises. With the deadline bound it includes wazero's per-call goroutine and a timer.
func BenchmarkCall(b *testing.B) {
	forEachBound(b, func(b *testing.B, h *Host, s *Session) {
		ctx := context.Background()
		task, err := s.Open(ctx, mustResolve(b, h, "SeqSource"), wire.RoleTask, map[string]string{"topic": "t"})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if err := task.Commit(ctx, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkBuiltinSourceBound is the built-in FileStreamSource (a Go guest, built from
// plugins/file) reading 100,000 lines of 100 bytes through the boundary as a task polls it
// (batch.size 2000), with the fuel bound and with none: what the CPU bound costs on one plugin call
// (make bench measures it on the worker's whole pipeline).
//
//	go test -run '^$' -bench BuiltinSourceBound -count 3 ./wasmhost/
func BenchmarkBuiltinSourceBound(b *testing.B) {
	const lines = 100_000
	dir, err := pluginbuild.Dir("plugins/file")
	if err != nil {
		b.Fatal(err)
	}
	files := b.TempDir()
	in := filepath.Join(files, "in.txt")
	if err := os.WriteFile(in, []byte(strings.Repeat(strings.Repeat("x", 99)+"\n", lines)), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, bound := range []struct {
		name string
		cpu  cpuBound
	}{{"bound=fuel", nil}, {"bound=none", unbounded{}}} {
		b.Run(bound.name, func(b *testing.B) {
			ctx := context.Background()
			h, _ := newTestHostBound(b, Config{PluginPath: []string{dir}, FSAllow: []string{files}, MemoryLimitBytes: 256 << 20}, bound.cpu)
			src := mustResolve(b, h, "FileStreamSource")
			if _, err := h.compiledModule(h.modules[src.Module]); err != nil { // not the compile's time
				b.Fatal(err)
			}
			var read int
			for b.Loop() {
				s := h.NewSession(Env{Connector: "bench", Logger: slog.New(slog.DiscardHandler)})
				task, err := s.Open(ctx, src, wire.RoleTask, map[string]string{"file": in, "topic": "t", "batch.size": "2000"})
				if err != nil {
					b.Fatal(err)
				}
				for n := 0; n < lines; {
					rs, err := task.Poll(ctx)
					if err != nil {
						b.Fatal(err)
					}
					n += len(rs)
					read += len(rs)
				}
				s.Close(ctx)
			}
			b.ReportMetric(float64(read)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkCallMetrics is what observing calls (Env.Calls, the plugin call histograms, fuel, traps
// and memory of runtime/metrics) costs, under the fuel bound: two sessions, one observed, called in
// turn, so that both see the same machine (a shared machine's load changes faster than a benchmark
// runs). It reports records/s of a POLL of 1000 records and ns per COMMIT (no payload, the
// smallest call) for each.
func BenchmarkCallMetrics(b *testing.B) {
	h, _ := newTestHost(b, Config{})
	reg := metrics.New(metrics.Unregistered())
	b.Cleanup(reg.Close)
	ctx := context.Background()
	open := func(calls CallMetrics) *Object {
		s := h.NewSession(Env{Connector: "bench", Task: 0, Logger: slog.New(slog.DiscardHandler), Calls: calls})
		b.Cleanup(func() { s.Close(ctx) })
		task, err := s.Open(ctx, mustResolve(b, h, "SeqSource"), wire.RoleTask,
			map[string]string{"topic": "t", "batch.size": fmt.Sprint(benchBatch)})
		if err != nil {
			b.Fatal(err)
		}
		return task
	}
	tasks := [2]*Object{open(nil), open(benchCalls{reg.Task(connect.TaskID{Connector: "bench"}, connect.TypeSource)})}
	var poll, commit [2]time.Duration
	for b.Loop() {
		for i, task := range tasks {
			t0 := time.Now()
			if rs, err := task.Poll(ctx); err != nil || len(rs) != benchBatch {
				b.Fatal(len(rs), err)
			}
			t1 := time.Now()
			for range 10 {
				if err := task.Commit(ctx, nil); err != nil {
					b.Fatal(err)
				}
			}
			poll[i] += t1.Sub(t0)
			commit[i] += time.Since(t1)
		}
	}
	for i, name := range []string{"plain", "observed"} {
		b.ReportMetric(float64(b.N)*benchBatch/poll[i].Seconds(), "records/s-"+name)
		b.ReportMetric(float64(commit[i].Nanoseconds())/float64(b.N*10), "ns/commit-"+name)
	}
}

type benchCalls struct{ m *metrics.Task }

func (c benchCalls) Plugin(plugin, module string) PluginCalls { return c.m.Plugin(plugin, module) }
