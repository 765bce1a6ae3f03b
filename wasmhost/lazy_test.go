package wasmhost

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// watchedBound is the fuel bound with a hook in front of prepare, which runs once per module
// compile: the tests count, hold back or fail compiles with it.
type watchedBound struct {
	*fuelBound
	before func(wasm []byte) error

	mu       sync.Mutex
	prepared int
}

func newWatchedBound(cfg Config, before func([]byte) error) *watchedBound {
	return &watchedBound{fuelBound: newFuelBound(5*time.Second, cfg.CacheDir), before: before}
}

func (w *watchedBound) prepare(wasm []byte) ([]byte, error) {
	w.mu.Lock()
	w.prepared++
	w.mu.Unlock()
	if w.before != nil {
		if err := w.before(wasm); err != nil {
			return nil, err
		}
	}
	return w.fuelBound.prepare(wasm)
}

func (w *watchedBound) compiles() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.prepared
}

func pluginNames(ps []Plugin) []string {
	var out []string
	for _, p := range ps {
		out = append(out, string(p.Kind)+" "+p.Class)
	}
	return out
}

// A restarted host describes its modules from the cache and compiles none of them until a plugin
// of one is used, and then only that module.
func TestRestartCompilesOnlyWhatIsUsed(t *testing.T) {
	cfg := Config{PluginPath: []string{pluginDir(t, standardLayout)}, CacheDir: t.TempDir()}
	first, _ := newTestHost(t, cfg)
	want := pluginNames(first.Plugins())
	first.compiling.Wait() // the background compiles fill the caches
	first.Close(context.Background())

	cpu := newWatchedBound(cfg, nil)
	h, _ := newTestHostBound(t, cfg, cpu)
	if errs := h.LoadErrors(); len(errs) != 0 {
		t.Fatalf("load errors: %v", errs)
	}
	if got := pluginNames(h.Plugins()); !slices.Equal(got, want) {
		t.Fatalf("plugins from the cache:\n got %q\nwant %q", got, want)
	}
	if n := cpu.compiles(); n != 0 {
		t.Fatalf("the restarted host compiled %d modules before any was used, want 0", n)
	}
	ctx := context.Background()
	s := h.NewSession(Env{Connector: "c1", Task: 0})
	defer s.Close(ctx)
	task, err := s.Open(ctx, mustResolve(t, h, "SeqSource"), wire.RoleTask, map[string]string{"topic": "t", "batch.size": "3"})
	if err != nil {
		t.Fatal(err)
	}
	if recs, err := task.Poll(ctx); err != nil || len(recs) != 3 {
		t.Fatalf("poll after a deferred compile: %d records, %v", len(recs), err)
	}
	if n := cpu.compiles(); n != 1 {
		t.Fatalf("opening one plugin compiled %d modules, want 1", n)
	}
}

// A module the host has not seen before is listed as soon as it is described, without waiting for
// its compile, which goes on in the background; an instance waits for it.
func TestNewModulesAreListedBeforeTheyCompile(t *testing.T) {
	cfg := Config{PluginPath: []string{pluginDir(t, standardLayout)}, CacheDir: t.TempDir()}
	release := make(chan struct{})
	cpu := newWatchedBound(cfg, func([]byte) error { <-release; return nil })
	done := make(chan *Host)
	go func() {
		h, _ := newTestHostBound(t, cfg, cpu)
		done <- h
	}()
	var h *Host
	select {
	case h = <-done:
	case <-time.After(30 * time.Second):
		close(release)
		t.Fatal("New waited for the modules to compile")
	}
	if n := len(h.Plugins()); n != 11 {
		t.Fatalf("%d plugins listed while compiling, want 11: %v", n, h.LoadErrors())
	}
	opened := make(chan error, 1)
	go func() {
		s := h.NewSession(Env{Connector: "c1", Task: 0})
		defer s.Close(context.Background())
		_, err := s.Open(context.Background(), mustResolve(t, h, "SeqSource"), wire.RoleTask, map[string]string{"topic": "t"})
		opened <- err
	}()
	select {
	case err := <-opened:
		t.Fatalf("an instance was created before its module compiled (err %v)", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	if err := <-opened; err != nil {
		t.Fatalf("open once compiled: %v", err)
	}
}

// A module that is described but then fails to compile is dropped from the catalogue, listed in
// LoadErrors and logged, as a module refused at start is; opening one of its plugins fails with
// the cause, and the other modules are unaffected.
func TestFailedBackgroundCompileDropsTheModule(t *testing.T) {
	dir := pluginDir(t, standardLayout)
	good := filepath.Join(dir, "good.wasm")
	cfg := Config{PluginPath: []string{dir}}
	seqBytes := func(wasm []byte) bool { return strings.Contains(string(wasm), "SeqSource") }
	release := make(chan struct{}) // the failing compile waits for the test to have resolved first
	cpu := newWatchedBound(cfg, func(wasm []byte) error {
		if seqBytes(wasm) {
			<-release
			return errors.New("refused by the test")
		}
		return nil
	})
	h, sink := newTestHostBound(t, cfg, cpu)
	seq := mustResolve(t, h, "SeqSource") // described, so listed at first
	close(release)
	h.compiling.Wait()

	if slices.ContainsFunc(h.Plugins(), func(p Plugin) bool { return p.Module == good }) {
		t.Errorf("plugins of a module that did not compile are still listed: %q", pluginNames(h.Plugins()))
	}
	errs := h.LoadErrors()
	if len(errs) != 1 || errs[0].Path != good || !strings.Contains(errs[0].Error(), "instrument: refused by the test") {
		t.Errorf("load errors: %v", errs)
	}
	if e := sink.find(t, "plugin module not loaded"); e["path"] != good {
		t.Errorf("log line: %v", e)
	}
	ctx := context.Background()
	s := h.NewSession(Env{Connector: "c1", Task: 0})
	defer s.Close(ctx)
	if _, err := s.Open(ctx, seq, wire.RoleTask, map[string]string{"topic": "t"}); err == nil || !strings.Contains(err.Error(), "refused by the test") {
		t.Errorf("open of a dropped module's plugin: %v", err)
	}
	if _, err := s.Open(ctx, mustResolve(t, h, "Trapper"), wire.RoleConnector, nil); err != nil {
		t.Errorf("the other module: %v", err)
	}
}

// "plugin modules compiled" is logged by a cold host once its background compiles are done, and
// by a restarted host whose modules all come from the cache too (modules 0, cached 2): benchmarks
// wait for the line before they measure, and waited forever on a warm cache.
func TestModulesCompiledLoggedCachedToo(t *testing.T) {
	cfg := Config{PluginPath: []string{pluginDir(t, standardLayout)}, CacheDir: t.TempDir()}
	first, sink := newTestHost(t, cfg)
	first.compiling.Wait()
	if e := sink.find(t, "plugin modules compiled"); e["modules"] != 2.0 || e["cached"] != 0.0 {
		t.Errorf("cold start: %v, want modules 2, cached 0", e)
	}
	first.Close(context.Background())

	h, sink := newTestHost(t, cfg)
	h.compiling.Wait()
	if e := sink.find(t, "plugin modules compiled"); e["modules"] != 0.0 || e["cached"] != 2.0 {
		t.Errorf("warm start: %v, want modules 0, cached 2", e)
	}
}

// CompileAll returns once every module is compiled, each compiled once.
func TestCompileAll(t *testing.T) {
	cfg := Config{PluginPath: []string{pluginDir(t, standardLayout)}, CacheDir: t.TempDir()}
	cpu := newWatchedBound(cfg, nil)
	h, _ := newTestHostBound(t, cfg, cpu)
	if err := h.CompileAll(); err != nil {
		t.Fatal(err)
	}
	for path, m := range h.modules {
		if m.compiled == nil {
			t.Errorf("%s is not compiled", path)
		}
	}
	if n := cpu.compiles(); n != 2 {
		t.Errorf("%d compiles for 2 modules", n)
	}
}

// With Config.CompileAfter, the background compiles wait until it is closed, while a module an
// instance needs compiles at once; a host closed before it is closed does not wait for it.
func TestCompileAfter(t *testing.T) {
	ctx := context.Background()
	gate := make(chan struct{})
	cfg := Config{PluginPath: []string{pluginDir(t, standardLayout)}, CompileAfter: gate}
	cpu := newWatchedBound(cfg, nil)
	h, sink := newTestHostBound(t, cfg, cpu)
	s := h.NewSession(Env{Connector: "c1", Task: 0})
	if _, err := s.Open(ctx, mustResolve(t, h, "SeqSource"), wire.RoleTask, map[string]string{"topic": "t"}); err != nil {
		t.Fatalf("open before the background compiles: %v", err)
	}
	s.Close(ctx)
	if n := cpu.compiles(); n != 1 {
		t.Errorf("%d compiles before CompileAfter was closed, want the one module opened", n)
	}
	close(gate)
	h.compiling.Wait()
	if e := sink.find(t, "plugin modules compiled"); e["modules"] != 2.0 || cpu.compiles() != 2 {
		t.Errorf("after CompileAfter was closed: %v, %d compiles", e, cpu.compiles())
	}

	held, _ := newTestHost(t, Config{PluginPath: []string{pluginDir(t, standardLayout)}, CompileAfter: make(chan struct{})})
	held.Close(ctx) // returns: the held-back compiles give up
}
