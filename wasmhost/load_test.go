package wasmhost

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

func TestLoadListsPlugins(t *testing.T) {
	dir := pluginDir(t, map[string]string{
		"good.wasm":                  "good",
		"misc/misbehave.wasm":        "misbehave",
		"misc/deeper/duplicate.wasm": "duplicate", // two levels down: not on the plugin path
	})
	h, _ := newTestHost(t, Config{PluginPath: []string{dir}})
	if errs := h.LoadErrors(); len(errs) != 0 {
		t.Fatalf("load errors: %v", errs)
	}
	var got []string
	for _, p := range h.Plugins() {
		got = append(got, string(p.Kind)+" "+p.Class)
	}
	want := []string{
		"converter test.fixture.EchoConverter",
		"sink test.fixture.CountSinkConnector",
		"source test.fixture.SeqSourceConnector",
		"source test.misbehave.Clearer",
		"source test.misbehave.Flaky",
		"source test.misbehave.Hog",
		"source test.misbehave.Liar",
		"source test.misbehave.Quitter",
		"source test.misbehave.Spinner",
		"source test.misbehave.Trapper",
		"source test.misbehave.Wild",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("plugins:\n got %q\nwant %q", got, want)
	}
	seq := mustResolve(t, h, "SeqSource")
	if seq.Module != filepath.Join(dir, "good.wasm") || seq.Version != "0.1.0" ||
		!slices.Equal(seq.Aliases, []string{"SeqSourceConnector"}) || len(seq.Config) != 2 ||
		seq.Config[0].Name != "topic" || !seq.Config[0].Required || *seq.Config[1].DefaultValue != "2" {
		t.Fatalf("SeqSource = %+v", seq)
	}
	if m := mustResolve(t, h, "Trapper").Module; m != filepath.Join(dir, "misc", "misbehave.wasm") {
		t.Fatalf("Trapper module = %s", m)
	}
}

func TestResolve(t *testing.T) {
	h, _ := newTestHost(t, Config{})
	for _, tc := range []struct {
		name  string
		kind  wire.Kind
		class string
	}{
		{"test.fixture.SeqSourceConnector", wire.KindSource, "test.fixture.SeqSourceConnector"},
		{"SeqSource", wire.KindSource, "test.fixture.SeqSourceConnector"},
		{"SeqSourceConnector", wire.KindSource, "test.fixture.SeqSourceConnector"},
		{"Echo", wire.KindConverter, "test.fixture.EchoConverter"},
		{"CountSink", "", "test.fixture.CountSinkConnector"},
	} {
		p, err := h.Resolve(tc.name, tc.kind)
		if err != nil || p.Class != tc.class {
			t.Errorf("Resolve(%q, %q) = %s, %v; want %s", tc.name, tc.kind, p.Class, err, tc.class)
		}
	}

	_, err := h.Resolve("EchoConverter", wire.KindSink)
	var unknown *UnknownPluginError
	if !errors.As(err, &unknown) {
		t.Fatalf("wrong kind: %v", err)
	}
	want := `failed to find any sink plugin whose class, name or alias matches "EchoConverter", ` +
		`available sink plugins are: test.fixture.CountSinkConnector (name CountSink, version 0.1.0)`
	if err.Error() != want {
		t.Fatalf("error text:\n got %s\nwant %s", err, want)
	}
	_, err = h.Resolve("Nope", wire.KindSource)
	if err == nil || !strings.Contains(err.Error(), `matches "Nope", available source plugins are: test.fixture.SeqSourceConnector (name SeqSource, version 0.1.0), test.misbehave.Clearer (name Clearer, version 1), test.misbehave.Flaky`) {
		t.Fatalf("unknown source: %v", err)
	}
	_, err = h.Resolve("Nope", "predicate")
	if err == nil || !strings.Contains(err.Error(), "no predicate plugins are loaded") {
		t.Fatalf("no plugins of a kind: %v", err)
	}
}

func TestLoadErrorsDoNotStopOthers(t *testing.T) {
	a := pluginDir(t, map[string]string{
		"good.wasm":            "good",
		"garbage.wasm":         "garbage",
		"wrong_abi.wasm":       "wrong_abi",
		"missing_export.wasm":  "missing_export",
		"describe_error.wasm":  "describe_error",
		"bigmem/bigmem.wasm":   "bigmem",
		"bad_import.wasm":      "bad_import",
		"misc/misbehave.wasm":  "misbehave",
		"misc/notes.txt.wasm~": "garbage", // not *.wasm: ignored
	})
	b := pluginDir(t, map[string]string{"duplicate.wasm": "duplicate"})
	missing := filepath.Join(t.TempDir(), "nowhere")
	h, _ := newTestHost(t, Config{PluginPath: []string{a, b, missing}})

	want := map[string]string{
		filepath.Join(a, "garbage.wasm"):        `not a WebAssembly module: the file does not start with the \0asm magic number`,
		filepath.Join(a, "wrong_abi.wasm"):      "declares ABI version 2 (wc_abi_version); this host implements version 1",
		filepath.Join(a, "missing_export.wasm"): "not a wasmconnect ABI v1 module: missing export wc_call (i32, i32, i32, i32) -> i64",
		filepath.Join(a, "describe_error.wasm"): `module "describe_error.wasm" wc_describe failed: descriptor unavailable`,
		filepath.Join(a, "bigmem/bigmem.wasm"):  "min 200 pages (12 Mi) over limit of 128 pages (8 Mi) (the per-instance memory limit is 8 MiB)",
		filepath.Join(a, "bad_import.wasm"):     "imports env.abort, which the host does not provide",
		filepath.Join(b, "duplicate.wasm"):      "plugin class test.fixture.SeqSourceConnector is already provided by " + filepath.Join(a, "good.wasm"),
		missing:                                 "plugin directory: ",
	}
	got := map[string]string{}
	for _, e := range h.LoadErrors() {
		got[e.Path] = e.Error()
	}
	for path, reason := range want {
		msg, ok := got[path]
		if !ok {
			t.Errorf("%s: no load error; got %q", path, got)
			continue
		}
		if !strings.Contains(msg, reason) || !strings.Contains(msg, path) {
			t.Errorf("%s:\n got %s\nwant it to name the file and contain %q", path, msg, reason)
		}
		delete(got, path)
	}
	if len(got) != 0 {
		t.Errorf("unexpected load errors: %q", got)
	}
	if p := mustResolve(t, h, "test.fixture.SeqSourceConnector"); p.Version != "0.1.0" {
		t.Errorf("the first module keeps a duplicated class: got version %s", p.Version)
	}
	mustResolve(t, h, "Trapper")
	for _, e := range h.LoadErrors() {
		if e.Path == missing && !errors.Is(e, fs.ErrNotExist) {
			t.Errorf("LoadError should unwrap to fs.ErrNotExist: %v", e)
		}
	}
}

// A module that never returns from _initialize, and a link to a module that is gone, are reported
// like any other bad file, and the first does not hold New for the whole call timeout.
func TestLoadSkipsHangingAndDanglingModules(t *testing.T) {
	dir := pluginDir(t, map[string]string{"good.wasm": "good", "spin_init.wasm": "spin_init", "trap_init.wasm": "trap_init"})
	if err := os.Symlink("gone.wasm", filepath.Join(dir, "dangling.wasm")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("gone.wasm", filepath.Join(dir, "sub", "dangling.wasm")); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	h, _ := newTestHost(t, Config{PluginPath: []string{dir}, CallTimeout: time.Minute})
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("New took %v with a module that never returns from _initialize; want under 10s", took)
	}
	want := map[string]string{
		filepath.Join(dir, "spin_init.wasm"):    "_initialize timed out",
		filepath.Join(dir, "trap_init.wasm"):    "_initialize trapped: wasm error: unreachable",
		filepath.Join(dir, "dangling.wasm"):     "cannot read the file: no such file or directory",
		filepath.Join(dir, "sub/dangling.wasm"): "cannot read the file: no such file or directory",
	}
	got := map[string]string{}
	for _, e := range h.LoadErrors() {
		got[e.Path] = e.Error()
		if strings.HasSuffix(e.Path, "dangling.wasm") && !errors.Is(e, fs.ErrNotExist) {
			t.Errorf("%s: want fs.ErrNotExist, got %v", e.Path, e)
		}
	}
	for path, reason := range want {
		if !strings.Contains(got[path], reason) {
			t.Errorf("%s: load error %q, want it to contain %q", path, got[path], reason)
		}
	}
	if len(got) != len(want) {
		t.Errorf("load errors %q, want %d", got, len(want))
	}
	mustResolve(t, h, "SeqSource")
}

func TestCompilationCacheDir(t *testing.T) {
	cache := t.TempDir()
	dir := pluginDir(t, standardLayout)
	h, _ := newTestHost(t, Config{PluginPath: []string{dir}, CacheDir: cache})
	h.compiling.Wait()
	h.Close(context.Background())

	// The first host filled the three caches: wazero's compiled code, the fuel-instrumented modules
	// and the descriptors (once its background compiles were done).
	before := cacheFiles(t, cache)
	var fuelFiles, descriptors, compiled int
	for path := range before {
		switch {
		case strings.HasPrefix(path, fuelCacheDir+string(filepath.Separator)):
			fuelFiles++
		case strings.HasPrefix(path, "describe-v1"+string(filepath.Separator)):
			descriptors++
		default:
			compiled++
		}
	}
	if fuelFiles != 2 || descriptors != 2 || compiled < 2 {
		t.Fatalf("cache dir holds %d instrumented modules, %d descriptors and %d compiled modules, want one of each per module: %v",
			fuelFiles, descriptors, compiled, before)
	}
	// A second host (as a restarted process would) loads from the populated cache: it finds every
	// module there, so it writes nothing. A miss would instrument or compile again and rewrite an
	// entry.
	h2, _ := newTestHost(t, Config{PluginPath: []string{dir}, CacheDir: cache})
	if len(h2.LoadErrors()) != 0 || len(h2.Plugins()) != 11 {
		t.Fatalf("second load: %v, %d plugins", h2.LoadErrors(), len(h2.Plugins()))
	}
	for _, name := range []string{"SeqSource", "Trapper"} { // compile both, from the caches
		if _, err := h2.compiledModule(h2.modules[mustResolve(t, h2, name).Module]); err != nil {
			t.Fatal(err)
		}
	}
	after := cacheFiles(t, cache)
	if len(after) != len(before) {
		t.Fatalf("the second load changed the cache: %d entries before, %d after", len(before), len(after))
	}
	for path, fi := range before {
		if a, ok := after[path]; !ok || !os.SameFile(fi, a) || !a.ModTime().Equal(fi.ModTime()) || a.Size() != fi.Size() {
			t.Errorf("the second load rewrote cache entry %s: the module was compiled again", path)
		}
	}
}

// cacheFiles lists the regular files under dir by their path relative to it.
func cacheFiles(t *testing.T, dir string) map[string]fs.FileInfo {
	t.Helper()
	files := map[string]fs.FileInfo{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		files[rel] = fi
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestConfigErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := New(ctx, Config{FSAllow: []string{filepath.Join(t.TempDir(), "missing")}}); err == nil {
		t.Error("a missing FSAllow directory must be refused")
	}
	if _, err := New(ctx, Config{MemoryLimitBytes: 5 << 30}); err == nil {
		t.Error("a memory limit over 4 GiB must be refused")
	}
}
