//go:build !wasip1

package plugins_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
	"github.com/wasmconnect/wasmconnect/wasmhost"
	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

// BenchmarkBuiltinLoad is what a worker start and its first FileStreamSource pay for the built-in
// file plugin (a Rust guest): loading the host (the descriptor: in the interpreter cold, from
// plugin.cache.dir warm) and opening a connector, which compiles and fuel-instruments the module
// cold and loads both from plugin.cache.dir warm. The README's compile figures come from here.
//
//	go test -run '^$' -bench BuiltinLoad ./plugins/
func BenchmarkBuiltinLoad(b *testing.B) {
	dir := fileModule(b)
	load := func(b *testing.B, cache string) {
		h, err := wasmhost.New(context.Background(), wasmhost.Config{PluginPath: []string{dir}, CacheDir: cache,
			Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatal(err)
		}
		if errs := h.LoadErrors(); len(errs) > 0 {
			b.Fatal(errs)
		}
		defer h.Close(context.Background())
		src, err := h.Resolve("FileStreamSource", wire.KindSource)
		if err != nil {
			b.Fatal(err)
		}
		s := h.NewSession(wasmhost.Env{Connector: "bench", Logger: slog.New(slog.DiscardHandler)})
		defer s.Close(context.Background())
		if _, err := s.Open(context.Background(), src, wire.RoleConnector, map[string]string{"file": "in.txt", "topic": "t"}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("cache=cold", func(b *testing.B) {
		for b.Loop() {
			load(b, filepath.Join(b.TempDir(), "cache"))
		}
	})
	b.Run("cache=warm", func(b *testing.B) {
		cache := b.TempDir()
		load(b, cache)
		for b.Loop() {
			load(b, cache)
		}
	})
}

// BenchmarkBuiltinCall is the fixed cost of one call into a built-in plugin with the default CPU
// bound (fuel): COMMIT on a FileStreamSource task, an operation with no payload, so the figure is
// the boundary and the guest's dispatch, which a batch spreads over its records.
//
//	go test -run '^$' -bench BuiltinCall ./plugins/
func BenchmarkBuiltinCall(b *testing.B) {
	ctx := context.Background()
	files := b.TempDir()
	sess, src := fileSourceSession(b, files, nil)
	task, err := sess.Open(ctx, src, wire.RoleTask, map[string]string{"file": filepath.Join(files, "in.txt"), "topic": "t"})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := task.Commit(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuiltinPoll is FileStreamSource reading a file of 100,000 lines of 100 bytes through the
// WebAssembly boundary with the default CPU bound, as a task polls it (batch.size 2000, Kafka's
// default): the guest's share of a source's records/s.
//
//	go test -run '^$' -bench BuiltinPoll ./plugins/
func BenchmarkBuiltinPoll(b *testing.B) {
	const lines = 100_000
	ctx := context.Background()
	files := b.TempDir()
	in := filepath.Join(files, "in.txt")
	line := strings.Repeat("x", 99) + "\n"
	if err := os.WriteFile(in, []byte(strings.Repeat(line, lines)), 0o644); err != nil {
		b.Fatal(err)
	}
	var fuel fuelSum
	sess, src := fileSourceSession(b, files, &fuel)
	b.SetBytes(int64(lines * len(line)))
	for b.Loop() {
		task, err := sess.Open(ctx, src, wire.RoleTask, map[string]string{"file": in, "topic": "t"})
		if err != nil {
			b.Fatal(err)
		}
		for n := 0; n < lines; {
			recs, err := task.Poll(ctx)
			if err != nil {
				b.Fatal(err)
			}
			n += len(recs)
		}
		if err := task.Close(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*lines), "ns/record")
	b.ReportMetric(float64(fuel.n)/float64(b.N*lines), "fuel/record")
}

// fuelSum adds up the fuel of every call of a session: unlike its time, the fuel a guest burns
// (about one unit per WebAssembly instruction run) does not depend on what else the machine runs, so
// fuel/record compares guest builds on a shared machine.
type fuelSum struct{ n uint64 }

func (f *fuelSum) Plugin(string, string) wasmhost.PluginCalls { return f }

func (f *fuelSum) Call(_ wire.Op, _ time.Duration, fuel, _ uint64, _ bool) { f.n += fuel }

// fileSourceSession loads the file plugin alone with files granted and the default CPU bound, and
// returns a session (telling calls, if not nil, what each call cost) and its FileStreamSource,
// closed when b ends.
func fileSourceSession(b *testing.B, files string, calls wasmhost.CallMetrics) (*wasmhost.Session, wasmhost.Plugin) {
	h, src := fileSourceHost(b, files)
	sess := h.NewSession(wasmhost.Env{Connector: "bench", Logger: slog.New(slog.DiscardHandler), Calls: calls})
	b.Cleanup(func() { sess.Close(context.Background()) })
	return sess, src
}

// fileSourceHost loads the file plugin alone with files granted and the default CPU bound, and
// returns the host and its FileStreamSource, closed when b ends.
func fileSourceHost(b *testing.B, files string) (*wasmhost.Host, wasmhost.Plugin) {
	ctx := context.Background()
	h, err := wasmhost.New(ctx, wasmhost.Config{PluginPath: []string{fileModule(b)}, FSAllow: []string{files},
		CacheDir: filepath.Join(files, "cache"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close(ctx) })
	if err := h.CompileAll(); err != nil { // the module compiles on first use: not in the timed loop
		b.Fatal(err)
	}
	src, err := h.Resolve("FileStreamSource", wire.KindSource)
	if err != nil {
		b.Fatal(err)
	}
	return h, src
}

// fileModule is a plugin directory holding file.wasm alone.
func fileModule(b *testing.B) string {
	return pluginbuild.DirOf(b, "plugins/file")
}

// BenchmarkBuiltinIdleTaskRSS is the resident memory an idle FileStreamSource task costs in the
// plugin host: 50 tasks, each with its own instance as a worker runs them, each having read its
// file once, then the RSS growth per task once the Go heap has returned what it freed.
//
//	go test -run '^$' -bench BuiltinIdleTaskRSS -benchtime 1x ./plugins/
func BenchmarkBuiltinIdleTaskRSS(b *testing.B) {
	const tasks = 50
	ctx := context.Background()
	files := b.TempDir()
	h, src := fileSourceHost(b, files)
	in := filepath.Join(files, "in.txt")
	if err := os.WriteFile(in, []byte(strings.Repeat(strings.Repeat("x", 99)+"\n", 1000)), 0o644); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		debug.FreeOSMemory()
		before := rss(b)
		var sessions []*wasmhost.Session
		for i := range tasks {
			sess := h.NewSession(wasmhost.Env{Connector: fmt.Sprintf("idle-%d", i), Logger: slog.New(slog.DiscardHandler)})
			sessions = append(sessions, sess)
			task, err := sess.Open(ctx, src, wire.RoleTask, map[string]string{"file": in, "topic": "t"})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := task.Poll(ctx); err != nil {
				b.Fatal(err)
			}
		}
		debug.FreeOSMemory()
		b.ReportMetric(float64(rss(b)-before)/tasks/1024, "rss-KiB/task")
		for _, s := range sessions {
			s.Close(ctx)
		}
	}
}

// rss is the process's resident set size in bytes (Linux).
func rss(b *testing.B) int64 {
	s, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status:", err)
	}
	for _, line := range strings.Split(string(s), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &kb)
			return kb << 10
		}
	}
	b.Skip("no VmRSS in /proc/self/status")
	return 0
}
