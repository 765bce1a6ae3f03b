package pluginbuild

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	code := m.Run()
	Cleanup()
	os.Exit(code)
}

func TestDir(t *testing.T) {
	dir, err := Dir("plugins/testdata/faulty")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 || entries[0].Name() != "faulty.wasm" {
		t.Fatalf("%s holds %v (%v), want faulty.wasm alone", dir, entries, err)
	}
	b, err := os.ReadFile(dir + "/faulty.wasm")
	if err != nil || !strings.HasPrefix(string(b), "\x00asm") {
		t.Fatalf("faulty.wasm is not a wasm module (%v)", err)
	}
	if again, err := Dir("./plugins/testdata/faulty/"); err != nil || again != dir {
		t.Errorf("the same package again: %s %v, want %s", again, err, dir)
	}
	if _, err := Dir("plugins/no-such-plugin"); err == nil || !strings.Contains(err.Error(), "building plugins/no-such-plugin") {
		t.Errorf("a package that does not exist: %v", err)
	}
}

// TestDirBuildsRustCrates builds the Rust file plugin (plugins/file, on sdk/rust) with rustc.
func TestDirBuildsRustCrates(t *testing.T) {
	dir := DirOf(t, "plugins/file")
	b, err := os.ReadFile(dir + "/file.wasm")
	if err != nil || !strings.HasPrefix(string(b), "\x00asm") {
		t.Fatalf("file.wasm is not a wasm module (%v)", err)
	}
}

// TestPruneCacheDropsOnlyUnusedModules: a module not built or used for a week goes, others stay.
func TestPruneCacheDropsOnlyUnusedModules(t *testing.T) {
	dir := t.TempDir()
	old, fresh := dir+"/old.wasm", dir+"/fresh.wasm"
	for _, p := range []string{old, fresh} {
		if err := os.WriteFile(p, []byte("\x00asm"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	week := time.Now().Add(-cacheMaxAge - time.Hour)
	if err := os.Chtimes(old, week, week); err != nil {
		t.Fatal(err)
	}
	pruneCache(dir)
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("the unused module is still there (%v)", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("the fresh module is gone: %v", err)
	}
}
