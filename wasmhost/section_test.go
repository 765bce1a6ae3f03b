package wasmhost

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, name+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// withSection is the fixture name with desc as its descriptor section.
func withSection(t testing.TB, name string, desc []byte) []byte {
	t.Helper()
	b, err := withDescriptorSection(fixture(t, name), desc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pluginFiles is a plugin directory holding the given module bytes by file name.
func pluginFiles(t testing.TB, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// goodDescriptor is what good.wasm's wc_describe returns, as EmbedDescriptor writes it.
func goodDescriptor(t testing.TB) []byte {
	t.Helper()
	b, err := EmbedDescriptor(context.Background(), fixture(t, "good"), Config{})
	if err != nil {
		t.Fatal(err)
	}
	desc, ok, _ := descriptorSection(b)
	if !ok {
		t.Fatal("EmbedDescriptor wrote no descriptor section")
	}
	return desc
}

// EmbedDescriptor writes what wc_describe returns; embedding again replaces the section rather than
// adding a second one, and the module's other sections are kept.
func TestEmbedDescriptor(t *testing.T) {
	ctx := context.Background()
	plain := fixture(t, "good")
	once, err := EmbedDescriptor(ctx, plain, Config{})
	if err != nil {
		t.Fatal(err)
	}
	desc, _, _ := descriptorSection(once)
	if !bytes.Contains(desc, []byte(`"class":"test.fixture.SeqSourceConnector"`)) {
		t.Errorf("section holds %q", desc)
	}
	if !bytes.HasPrefix(once, plain) {
		t.Error("the module's own sections changed")
	}
	twice, err := EmbedDescriptor(ctx, once, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(once, twice) {
		t.Errorf("embedding twice: %d bytes, once: %d", len(twice), len(once))
	}
	if _, err := EmbedDescriptor(ctx, fixture(t, "describe_error"), Config{}); err == nil || !strings.Contains(err.Error(), "descriptor unavailable") {
		t.Errorf("a module whose wc_describe fails: %v", err)
	}
}

// EmbedDescriptorFile rewrites a module in place keeping its mode and leaving nothing else in the
// directory, or writes another file leaving the input as it was; a module it cannot describe
// leaves both files untouched.
func TestEmbedDescriptorFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	in := filepath.Join(dir, "good.wasm")
	plain := fixture(t, "good")
	if err := os.WriteFile(in, plain, 0o640); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.wasm")
	if _, err := EmbedDescriptorFile(ctx, in, out, Config{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(in); !bytes.Equal(b, plain) {
		t.Error("-o changed the input file")
	}
	embedded, _ := os.ReadFile(out)
	if _, ok, _ := descriptorSection(embedded); !ok {
		t.Error("no descriptor section in the output file")
	}
	if _, err := EmbedDescriptorFile(ctx, in, in, Config{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(in); !bytes.Equal(b, embedded) {
		t.Error("in place: the file differs from the one written beside it")
	}
	if st, err := os.Stat(in); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("mode after embed: %v (%v), want 0640", st.Mode(), err)
	}

	bad := filepath.Join(dir, "bad.wasm")
	badBytes := fixture(t, "describe_error")
	if err := os.WriteFile(bad, badBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := EmbedDescriptorFile(ctx, bad, out, Config{}); err == nil {
		t.Error("a module whose wc_describe fails was embedded")
	}
	if b, _ := os.ReadFile(bad); !bytes.Equal(b, badBytes) {
		t.Error("a failed embed changed its input")
	}
	if b, _ := os.ReadFile(out); !bytes.Equal(b, embedded) {
		t.Error("a failed embed changed its output file")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("the directory holds %d entries, want the three modules alone", len(entries))
	}
}

// Embedding in place through a symbolic link (a plugin directory of links to a build's output)
// writes the file the link resolves to, atomically, and leaves the link as it was; so does -o OUT
// when OUT is a link. A link to nothing is refused, creating no file.
func TestEmbedDescriptorFileThroughSymlink(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	build, plugins := filepath.Join(root, "build"), filepath.Join(root, "plugins")
	for _, d := range []string{build, plugins} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	target := filepath.Join(build, "good.wasm")
	if err := os.WriteFile(target, fixture(t, "good"), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(plugins, "good.wasm")
	const rel = "../build/good.wasm"
	if err := os.Symlink(rel, link); err != nil {
		t.Fatal(err)
	}
	isLink := func(what string) {
		t.Helper()
		if got, err := os.Readlink(link); err != nil || got != rel {
			t.Errorf("%s: the link reads %q (%v), want it kept as %q", what, got, err, rel)
		}
	}
	written, err := EmbedDescriptorFile(ctx, link, link, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if written != target {
		t.Errorf("in place through a link: wrote %s, want %s", written, target)
	}
	isLink("in place")
	b, _ := os.ReadFile(target)
	if _, ok, _ := descriptorSection(b); !ok {
		t.Error("the link's target has no descriptor section")
	}
	if st, err := os.Stat(target); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("the target's mode after embed: %v (%v), want 0640", st.Mode(), err)
	}

	plain := filepath.Join(root, "plain.wasm")
	if err := os.WriteFile(plain, fixture(t, "good"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(target, nil, 0o640)
	if written, err := EmbedDescriptorFile(ctx, plain, link, Config{}); err != nil || written != target {
		t.Fatalf("-o a link: wrote %s, %v", written, err)
	}
	isLink("-o a link")
	if got, _ := os.ReadFile(target); !bytes.Equal(got, b) {
		t.Error("-o a link: the target does not hold the embedded module")
	}

	dangling := filepath.Join(plugins, "gone.wasm")
	if err := os.Symlink("../build/gone.wasm", dangling); err != nil {
		t.Fatal(err)
	}
	if _, err := EmbedDescriptorFile(ctx, plain, dangling, Config{}); err == nil || !strings.Contains(err.Error(), "symbolic link "+dangling) {
		t.Errorf("-o a dangling link: %v", err)
	}
	for dir, want := range map[string]int{build: 1, plugins: 2} {
		if entries, _ := os.ReadDir(dir); len(entries) != want {
			t.Errorf("%s holds %d entries, want %d: nothing but the modules and links", dir, len(entries), want)
		}
	}
}

// A module with a descriptor section is listed from it without being called: describe_error.wasm,
// whose wc_describe fails, loads with good.wasm's section. Its plugins are those of the section,
// listed before its compile (held back here) is done.
func TestDescriptorSectionIsNotCalled(t *testing.T) {
	dir := pluginFiles(t, map[string][]byte{"m.wasm": withSection(t, "describe_error", goodDescriptor(t))})
	release := make(chan struct{})
	cfg := Config{PluginPath: []string{dir}}
	cpu := newWatchedBound(cfg, func([]byte) error { <-release; return nil })
	h, _ := newTestHostBound(t, cfg, cpu)
	defer close(release)
	if errs := h.LoadErrors(); len(errs) > 0 {
		t.Fatalf("load errors: %v", errs)
	}
	if n := len(h.Plugins()); n != 3 {
		t.Errorf("%d plugins, want good.wasm's 3: %q", n, pluginNames(h.Plugins()))
	}
}

// A module described from its section runs as one described by calling: the compile finds its
// _initialize (good.wasm traps if it is not called first), and a restart takes the descriptor
// from the cache.
func TestDescriptorSectionModuleRuns(t *testing.T) {
	ctx := context.Background()
	b, err := EmbedDescriptor(ctx, fixture(t, "good"), Config{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{PluginPath: []string{pluginFiles(t, map[string][]byte{"good.wasm": b})}, CacheDir: t.TempDir()}
	for _, run := range []string{"cold", "warm"} {
		h, _ := newTestHost(t, cfg)
		s := h.NewSession(Env{Connector: "c1", Task: 0})
		task, err := s.Open(ctx, mustResolve(t, h, "SeqSource"), wire.RoleTask, map[string]string{"topic": "t"})
		if err != nil {
			t.Fatalf("%s: open: %v", run, err)
		}
		if recs, err := task.Poll(ctx); err != nil || len(recs) != 2 {
			t.Errorf("%s: poll: %d records, %v", run, len(recs), err)
		}
		s.Close(ctx)
		h.Close(ctx)
	}
}

// The shape of a module described from its section is checked when it compiles: one that lacks
// an export is listed at first, then dropped with the message a module refused at load gets.
func TestDescriptorSectionShapeCheckedAtCompile(t *testing.T) {
	dir := pluginFiles(t, map[string][]byte{"m.wasm": withSection(t, "missing_export", goodDescriptor(t))})
	h, _ := newTestHost(t, Config{PluginPath: []string{dir}})
	h.compiling.Wait()
	errs := h.LoadErrors()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "not a wasmconnect ABI v1 module: missing export wc_call") {
		t.Errorf("load errors: %v", errs)
	}
	if ps := h.Plugins(); len(ps) != 0 {
		t.Errorf("plugins of a module that failed its shape check: %q", pluginNames(ps))
	}
}

// A section whose descriptor is invalid refuses the module, naming the section.
func TestInvalidDescriptorSection(t *testing.T) {
	dir := pluginFiles(t, map[string][]byte{"m.wasm": withSection(t, "good", []byte(`{"abi":2,"plugins":[]}`))})
	h, _ := newTestHost(t, Config{PluginPath: []string{dir}})
	errs := h.LoadErrors()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "custom section wasmconnect.descriptor: descriptor declares abi 2") {
		t.Errorf("load errors: %v", errs)
	}
}

// A descriptor section over MaxDescriptorBytes (here a valid descriptor padded with whitespace,
// which JSON allows) and a module with two sections are refused at load with what is wrong and the
// size, while a section of exactly the limit loads; the module's other plugins are not listed.
// plugin embed, which replaces every section with one, mends the duplicate, and refuses to write a
// descriptor over the limit.
func TestDescriptorSectionLimits(t *testing.T) {
	desc := goodDescriptor(t)
	pad := func(n int) []byte { return append(slices.Clone(desc), bytes.Repeat([]byte(" "), n-len(desc))...) }
	plain := fixture(t, "good")
	twice := appendCustomSection(withSection(t, "good", desc), DescriptorSection, desc)
	for name, tc := range map[string]struct {
		wasm []byte
		want string // "" when the module loads
	}{
		"big.wasm":   {appendCustomSection(plain, DescriptorSection, pad(MaxDescriptorBytes+1)), "custom section wasmconnect.descriptor: 1048577 bytes (1.0 MiB), over the limit of 1 MiB"},
		"twice.wasm": {twice, "2 custom sections wasmconnect.descriptor (at bytes "},
		"limit.wasm": {appendCustomSection(plain, DescriptorSection, pad(MaxDescriptorBytes)), ""},
	} {
		path := filepath.Join(pluginFiles(t, map[string][]byte{name: tc.wasm}), name)
		h, _ := newTestHost(t, Config{PluginPath: []string{filepath.Dir(path)}, CacheDir: t.TempDir()})
		errs := h.LoadErrors()
		switch {
		case tc.want == "" && (len(errs) > 0 || len(h.Plugins()) != 3):
			t.Errorf("%s: load errors %v, plugins %q", name, errs, pluginNames(h.Plugins()))
		case tc.want != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), "plugin module "+path+": "+tc.want)):
			t.Errorf("%s: load errors %v, want one naming the module and saying %q", name, errs, tc.want)
		case tc.want != "" && len(h.Plugins()) > 0:
			t.Errorf("%s: plugins %q of a refused module", name, pluginNames(h.Plugins()))
		}
		if tc.want == "" {
			continue
		}
		steps, err := Check(context.Background(), path, Config{})
		if err != nil {
			t.Fatal(err)
		}
		if i := slices.IndexFunc(steps, func(s CheckStep) bool { return s.Name == "descriptor section" }); i < 0 || !strings.Contains(steps[i].Problem, tc.want) {
			t.Errorf("%s: plugin check does not say %q: %+v", name, tc.want, steps)
		}
	}
	mended, err := EmbedDescriptor(context.Background(), twice, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if got, ok, err := descriptorSection(mended); !ok || err != nil || !bytes.Equal(got, desc) {
		t.Errorf("embed of a module with two sections: %q, %v", got, err)
	}
	if _, err := withDescriptorSection(plain, pad(MaxDescriptorBytes+1)); err == nil || !strings.Contains(err.Error(), "over the limit of 1 MiB") {
		t.Errorf("embedding a descriptor over the limit: %v", err)
	}
}

// Inspect reports what the module's code does, not what its section says.
func TestInspectIgnoresTheSection(t *testing.T) {
	dir := pluginFiles(t, map[string][]byte{"m.wasm": withSection(t, "describe_error", goodDescriptor(t))})
	info, err := Inspect(context.Background(), filepath.Join(dir, "m.wasm"), Config{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(info.Problem, "descriptor unavailable") || len(info.Plugins) != 0 {
		t.Errorf("problem %q, plugins %q", info.Problem, pluginNames(info.Plugins))
	}
}

// Bytes whose sections do not parse have no descriptor section; the compiler refuses them.
func TestDescriptorSectionOfBrokenBytes(t *testing.T) {
	good := withSection(t, "good", []byte(`{}`))
	for _, b := range [][]byte{nil, []byte("\x00asm\x01\x00\x00\x00\x00\xff"), good[:len(good)-1]} {
		if _, ok, err := descriptorSection(b); ok || err != nil {
			t.Errorf("a section found in %q (%v)", b, err)
		}
	}
	if slices.Equal(good, fixture(t, "good")) {
		t.Error("no section was added")
	}
}

// Check compares a module's descriptor section with what its wc_describe returns.
func TestCheckComparesTheSection(t *testing.T) {
	other, err := withDescriptorSection(fixture(t, "misbehave"), goodDescriptor(t))
	if err != nil {
		t.Fatal(err)
	}
	embedded, err := EmbedDescriptor(context.Background(), fixture(t, "good"), Config{})
	if err != nil {
		t.Fatal(err)
	}
	dir := pluginFiles(t, map[string][]byte{"same.wasm": embedded, "other.wasm": other})
	for file, problem := range map[string]bool{"same.wasm": false, "other.wasm": true} {
		steps, err := Check(context.Background(), filepath.Join(dir, file), Config{})
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(steps, func(s CheckStep) bool { return s.Name == "descriptor section" })
		if i < 0 || (steps[i].Problem != "") != problem {
			t.Errorf("%s: steps %+v, want a descriptor section step with a problem: %v", file, steps, problem)
		}
	}
}
