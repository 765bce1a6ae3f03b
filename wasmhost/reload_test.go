package wasmhost

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// installFixture puts a fixture at path the way an operator should: written beside it, then
// renamed over it, so that nothing ever sees half a file.
func installFixture(t *testing.T, fixture, path string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, fixture+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// firstValue polls a SeqSource task once and returns its first record's value.
func firstValue(t *testing.T, o *Object) string {
	t.Helper()
	rs, err := o.Poll(context.Background())
	if err != nil || len(rs) == 0 {
		t.Fatalf("poll: %v records, %v", len(rs), err)
	}
	return string(rs[0].Value.Bytes)
}

func openSeq(t *testing.T, h *Host) *Object {
	t.Helper()
	s := h.NewSession(Env{Connector: "seq"})
	t.Cleanup(func() { s.Close(context.Background()) })
	o, err := s.Open(context.Background(), mustResolve(t, h, "SeqSource"), wire.RoleTask, map[string]string{"topic": "t"})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// Reload applies what changed on the plugin path: a replaced module's new version serves new
// sessions while a session opened before keeps the old one; an added module is listed; a removed
// one cannot be opened any more, and a task of it runs on; a broken file is reported once.
func TestReload(t *testing.T) {
	dir := pluginDir(t, map[string]string{"good.wasm": "good"})
	good := filepath.Join(dir, "good.wasm")
	h, _ := newTestHost(t, Config{PluginPath: []string{dir}})
	v1 := openSeq(t, h)
	if v := firstValue(t, v1); v != "value-0" {
		t.Fatalf("v1 record = %q", v)
	}
	if c := h.Reload(context.Background()); !c.Empty() {
		t.Fatalf("a reload with nothing changed: %+v", c)
	}

	installFixture(t, "good_v2", good)
	if c := h.Reload(context.Background()); !slices.Equal(c.Replaced, []string{good}) || len(c.Added)+len(c.Removed)+len(c.Failed) != 0 {
		t.Fatalf("changes after replacing good.wasm: %+v", c)
	}
	if v := mustResolve(t, h, "SeqSource").Version; v != "0.2.0" {
		t.Fatalf("SeqSource version after the replace = %s", v)
	}
	v2 := openSeq(t, h)
	if v := firstValue(t, v2); v != "VALUE-0" {
		t.Errorf("a session opened after the replace runs %q, want the new version's VALUE-0", v)
	}
	if v := firstValue(t, v1); v != "value-0" {
		t.Errorf("the session opened before the replace runs %q, want its own version's value-0", v)
	}

	misbehave := filepath.Join(dir, "misc", "misbehave.wasm")
	installFixture(t, "misbehave", misbehave)
	garbage := filepath.Join(dir, "garbage.wasm")
	installFixture(t, "garbage", garbage)
	c := h.Reload(context.Background())
	if !slices.Equal(c.Added, []string{misbehave}) || len(c.Failed) != 1 || c.Failed[0].Path != garbage {
		t.Fatalf("changes after adding two files: %+v", c)
	}
	mustResolve(t, h, "Trapper")
	if c := h.Reload(context.Background()); !c.Empty() {
		t.Errorf("the broken file is reported again: %+v", c)
	}

	if err := os.Remove(good); err != nil {
		t.Fatal(err)
	}
	if c := h.Reload(context.Background()); !slices.Equal(c.Removed, []string{good}) {
		t.Fatalf("changes after removing good.wasm: %+v", c)
	}
	if _, err := h.Resolve("SeqSource", wire.KindSource); err == nil {
		t.Fatal("SeqSource resolves after its module was removed")
	}
	if v := firstValue(t, v2); v != "VALUE-0" {
		t.Errorf("a task of the removed module polls %q, want VALUE-0", v)
	}
	if v := firstValue(t, v1); v != "value-0" {
		t.Errorf("a task of the removed module's old version polls %q, want value-0", v)
	}
}

// A new module takes no class from the module that provides it already, whatever their order on
// the path.
func TestReloadKeepsIncumbentClasses(t *testing.T) {
	dir := pluginDir(t, map[string]string{"z/good.wasm": "good"})
	h, _ := newTestHost(t, Config{PluginPath: []string{dir}})
	dup := filepath.Join(dir, "a", "duplicate.wasm")
	installFixture(t, "duplicate", dup)
	c := h.Reload(context.Background())
	if len(c.Failed) != 1 || c.Failed[0].Path != dup || !strings.Contains(c.Failed[0].Error(), "is already provided by "+filepath.Join(dir, "z", "good.wasm")) {
		t.Fatalf("changes: %+v", c)
	}
	if p := mustResolve(t, h, "SeqSource"); p.Version != "0.1.0" {
		t.Fatalf("SeqSource now from %s version %s", p.Module, p.Version)
	}
}

// Watch picks up a module renamed over another, a new plugin folder and a removal, without a call.
func TestWatch(t *testing.T) {
	dir := pluginDir(t, map[string]string{"good.wasm": "good"})
	h, _ := newTestHost(t, Config{PluginPath: []string{dir}})
	if err := h.Watch(); err != nil {
		t.Fatal(err)
	}
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; plugins %v, load errors %v", what, h.Plugins(), h.LoadErrors())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	resolves := func(name, version string) func() bool {
		return func() bool {
			p, err := h.Resolve(name, "")
			return err == nil && (version == "" || p.Version == version)
		}
	}
	start := time.Now()
	installFixture(t, "good_v2", filepath.Join(dir, "good.wasm"))
	waitUntil("SeqSource 0.2.0", resolves("SeqSource", "0.2.0"))
	t.Logf("replacement listed after %v", time.Since(start).Round(time.Millisecond))
	if v := firstValue(t, openSeq(t, h)); v != "VALUE-0" {
		t.Errorf("new session after the replace polls %q", v)
	}

	installFixture(t, "misbehave", filepath.Join(dir, "misc", "misbehave.wasm")) // a new folder
	waitUntil("Trapper from a new plugin folder", resolves("Trapper", ""))
	if err := os.Remove(filepath.Join(dir, "good.wasm")); err != nil {
		t.Fatal(err)
	}
	waitUntil("SeqSource to be gone", func() bool { return !resolves("SeqSource", "")() })
}
