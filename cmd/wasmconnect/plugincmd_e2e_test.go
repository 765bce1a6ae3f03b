//go:build e2e

package main

// End-to-end tests of wasmconnect plugin inspect, check, embed and new, on the built-in plugins and
// on broken and foreign modules.

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

// brokenModules is foreignModules plus trap_call.wasm, which loads but traps on every call.
func brokenModules(t *testing.T) (dir string, want map[string]string) {
	t.Helper()
	dir = t.TempDir()
	want = foreignModules(t, dir)
	wat2wasm, err := exec.LookPath("wat2wasm")
	if err != nil {
		pluginbuild.Missing(t, "wat2wasm", "apt-get install wabt")
	}
	src := filepath.Join("..", "..", "plugins", "testdata", "foreign", "trap_call.wat")
	if out, err := exec.Command(wat2wasm, src, "-o", filepath.Join(dir, "trap_call.wasm")).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm: %v\n%s", err, out)
	}
	return dir, want
}

func TestPluginInspect(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string
	}{
		{"file.wasm", []string{"abi      1", "source org.apache.kafka.connect.file.FileStreamSourceConnector", "name FileStreamSource, version 1.0.0",
			"config file: STRING", "config topic: STRING, no default, required", "imports  ", "wasi_snapshot_preview1.", "wc_call (i32, i32, i32, i32) -> i64"}},
		{"transforms.wasm", []string{"transformation org.apache.kafka.connect.transforms.InsertField$Value", "predicate org.apache.kafka.connect.transforms.predicates.HasHeaderKey",
			"converter org.apache.kafka.connect.json.JsonConverter", "config schemas.enable: BOOLEAN, default \"true\""}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			out, stderr, code := runCLI(t, "plugin", "inspect", filepath.Join(pluginDir, tc.file))
			if code != 0 {
				t.Fatalf("exit %d: %s\n%s", code, stderr, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
	out, _, code := runCLI(t, "plugin", "inspect", "--json", filepath.Join(pluginDir, "file.wasm"))
	var info struct {
		ABI     int
		Imports []string
		Plugins []struct{ Class, Kind, Version string }
	}
	if err := json.Unmarshal([]byte(out), &info); code != 0 || err != nil || info.ABI != 1 || len(info.Plugins) != 2 || len(info.Imports) == 0 {
		t.Errorf("--json: exit %d, %v, %+v", code, err, info)
	}

	dir, want := brokenModules(t)
	for name, reason := range want {
		out, stderr, code := runCLI(t, "plugin", "inspect", filepath.Join(dir, name))
		if code != 1 || !strings.Contains(out+stderr, reason) {
			t.Errorf("inspect %s: exit %d, want 1 and %q:\n%s%s", name, code, reason, out, stderr)
		}
	}
	out, _, code = runCLI(t, "plugin", "inspect", filepath.Join(dir, "command.wasm"))
	if !strings.Contains(out, "wasi_snapshot_preview1.proc_exit (i32)") || !strings.Contains(out, "_start ()") {
		t.Errorf("inspect of a WASI command lists its imports and exports anyway:\n%s", out)
	}
}

func TestPluginCheck(t *testing.T) {
	outs := map[string]string{}
	for _, file := range []string{"file.wasm", "transforms.wasm"} {
		t.Run(file, func(t *testing.T) {
			out, stderr, code := runCLI(t, "plugin", "check", filepath.Join(pluginDir, file))
			outs[file] = out
			if code != 0 || strings.Contains(out, "FAIL") || !strings.Contains(out, "checks passed") {
				t.Fatalf("exit %d: %s\n%s", code, stderr, out)
			}
			for _, w := range []string{"ok    load: ", "ok    descriptor", "ok    unknown op: error result", "ok    after errors"} {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
	for _, fw := range [][2]string{
		{"transforms.wasm", "ok    CONVERTER JsonConverter: FROM_CONNECT and TO_CONNECT round trip"},
		{"transforms.wasm", "ok    TRANSFORMATION InsertField$Value: TRANSFORM of 2 records"},
		{"file.wasm", "ok    SOURCE FileStreamSource: TASK_CONFIGS gave 1 task; its OPEN is refused cleanly"},
	} {
		if file, w := fw[0], fw[1]; !strings.Contains(outs[file], w) {
			t.Errorf("%s: output lacks %q:\n%s", file, w, outs[file])
		}
	}

	dir, want := brokenModules(t)
	want["command.wasm"] = "hint: build the module as a library (reactor)"
	want["component.wasm"] = "hint: this looks like a component-model binary"
	want["trap_call.wasm"] = "the module trapped (a panic or a WebAssembly fault) where it must return an error result"
	for name, reason := range want {
		out, stderr, code := runCLI(t, "plugin", "check", "--call-timeout", "2s", filepath.Join(dir, name))
		if name == "dangling.wasm" { // nothing to load: the command says so and stops
			if code != 1 || !strings.Contains(stderr, reason) {
				t.Errorf("check %s: exit %d, want 1 and %q:\n%s%s", name, code, reason, out, stderr)
			}
			continue
		}
		if code != 1 || !strings.Contains(out, "FAIL  ") || !strings.Contains(out, reason) || !strings.Contains(stderr, "problem(s)") {
			t.Errorf("check %s: exit %d, want 1, a FAIL line and %q:\n%s%s", name, code, reason, out, stderr)
		}
	}
	out, _, _ := runCLI(t, "plugin", "check", filepath.Join(dir, "trap_call.wasm"))
	for _, w := range []string{"FAIL  VALIDATE Trapping", "FAIL  unknown op: an unknown op must return an error result", "FAIL  SOURCE Trapping", "wasm error: unreachable"} {
		if !strings.Contains(out, w) {
			t.Errorf("check of a trapping module lacks %q:\n%s", w, out)
		}
	}
}

// sectionMatches is plugin check's line for a module whose descriptor section says what its
// wc_describe returns.
const sectionMatches = "ok    descriptor section: wasmconnect.descriptor says what wc_describe returns"

// plugin embed writes the descriptor section into a module without one, in place or to -o OUT (or
// through a symbolic link), and plugin check then finds it matching; a module it cannot describe is refused with the reason
// and left as it was, with nothing else written.
func TestPluginEmbed(t *testing.T) {
	wat2wasm, err := exec.LookPath("wat2wasm")
	if err != nil {
		pluginbuild.Missing(t, "wat2wasm", "apt-get install wabt")
	}
	dir := t.TempDir()
	plain := filepath.Join(dir, "good.wasm")
	if out, err := exec.Command(wat2wasm, filepath.Join("..", "..", "wasmhost", "testdata", "good.wat"), "-o", plain).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm: %v\n%s", err, out)
	}
	out, _, _ := runCLI(t, "plugin", "check", plain)
	if strings.Contains(out, "descriptor section") {
		t.Fatalf("plugin check of a module without the section reports one:\n%s", out)
	}
	before, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}

	copied := filepath.Join(dir, "copy.wasm")
	out, stderr, code := runCLI(t, "plugin", "embed", plain, "-o", copied)
	if code != 0 || !strings.Contains(out, copied+": wrote custom section wasmconnect.descriptor") {
		t.Fatalf("embed -o: exit %d: %s%s", code, out, stderr)
	}
	if b, _ := os.ReadFile(plain); !bytes.Equal(b, before) {
		t.Error("embed -o changed its input")
	}
	if out, _, _ := runCLI(t, "plugin", "check", copied); !strings.Contains(out, sectionMatches) {
		t.Errorf("plugin check of the -o output lacks %q:\n%s", sectionMatches, out)
	}
	if out, stderr, code := runCLI(t, "plugin", "embed", plain); code != 0 || !strings.Contains(out, plain+": wrote") {
		t.Fatalf("embed in place: exit %d: %s%s", code, out, stderr)
	}
	if out, _, _ := runCLI(t, "plugin", "check", plain); !strings.Contains(out, sectionMatches) {
		t.Errorf("plugin check after embed in place lacks %q:\n%s", sectionMatches, out)
	}

	// Through a symbolic link (a plugin directory of links to a build's output): the file the link
	// names is written and the link stays a link.
	link := filepath.Join(t.TempDir(), "linked.wasm")
	if err := os.Symlink(plain, link); err != nil {
		t.Fatal(err)
	}
	if out, stderr, code := runCLI(t, "plugin", "embed", link); code != 0 || !strings.Contains(out, link+" -> "+plain+": wrote") {
		t.Errorf("embed through a link: exit %d: %s%s", code, out, stderr)
	}
	if target, err := os.Readlink(link); err != nil || target != plain {
		t.Errorf("after embed the link reads %q (%v), want it kept", target, err)
	}

	broken, _ := brokenModules(t)
	modules, _ := os.ReadDir(broken)
	for name, reason := range map[string]string{
		"text.wasm":    "text.wasm: not a WebAssembly module (nothing was written)",
		"command.wasm": "command.wasm: not a wasmconnect ABI v1 module: missing export wc_abi_version",
	} {
		file := filepath.Join(broken, name)
		before, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{file}, {file, "-o", filepath.Join(broken, "out.wasm")}} {
			out, stderr, code := runCLI(t, append([]string{"plugin", "embed"}, args...)...)
			if code != 1 || !strings.Contains(stderr, reason) {
				t.Errorf("embed %v: exit %d, want 1 and %q:\n%s%s", args, code, reason, out, stderr)
			}
		}
		if b, _ := os.ReadFile(file); !bytes.Equal(b, before) {
			t.Errorf("a refused embed changed %s", name)
		}
	}
	if entries, _ := os.ReadDir(broken); len(entries) != len(modules) {
		t.Errorf("%d entries after refused embeds, want the %d modules alone", len(entries), len(modules))
	}
}

// plugin new writes a skeleton per language that builds, passes its own test and plugin check,
// and, in Go, depends on the SDK module alone.
func TestPluginNew(t *testing.T) {
	sdk, err := filepath.Abs(filepath.Join("..", "..", "sdk"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("make"); err != nil {
		pluginbuild.Missing(t, "make", "apt-get install make")
	}
	// The languages build side by side: each skeleton is its own directory and toolchain, and the
	// slowest (rust's optimized SDK library) then sets the time rather than the sum of all.
	for _, lang := range []string{"go", "rust", "c", "assemblyscript", "zig"} {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			skeletonTools(t, lang, sdk)
			dir := filepath.Join(t.TempDir(), "my-upper")
			out, stderr, code := runCLI(t, "plugin", "new", "--lang", lang, "--sdk", sdk, "--dir", dir, "my-upper")
			if code != 0 || !strings.Contains(out, "com.example.MyUpper") {
				t.Fatalf("plugin new: exit %d: %s%s", code, out, stderr)
			}
			if !hasTest(t, dir) {
				t.Errorf("the %s skeleton has no test of its own", lang)
			}
			// Both targets in one make, so that their independent steps (rust's native and wasm
			// SDK libraries, say) run at once.
			cmd := exec.Command("make", "-j2", "test", "my-upper.wasm", "WASMCONNECT="+binary)
			cmd.Dir = dir
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("make test my-upper.wasm: %v\n%s", err, b)
			}
			out, stderr, code = runCLI(t, "plugin", "check", filepath.Join(dir, "my-upper.wasm"))
			if code != 0 || !strings.Contains(out, "ok    TRANSFORMATION MyUpper: TRANSFORM of 2 records: 2 out") || !strings.Contains(out, sectionMatches) {
				t.Fatalf("plugin check of the skeleton: exit %d:\n%s%s", code, out, stderr)
			}
			if lang == "go" {
				cmd := exec.Command("go", "list", "-m", "all")
				cmd.Dir = dir
				b, err := cmd.Output()
				if mods := strings.Split(strings.TrimSpace(string(b)), "\n"); err != nil || len(mods) != 2 || !strings.HasPrefix(mods[1], "github.com/wasmconnect/wasmconnect/sdk/go ") {
					t.Errorf("the skeleton's build list is %q (%v), want itself and the SDK", mods, err)
				}
			}
		})
	}
	_, stderr, code := runCLI(t, "plugin", "new", "--lang", "cobol", "--sdk", sdk, "x")
	if code != 1 || !strings.Contains(stderr, `--lang "cobol": the languages with a template are assemblyscript, c, go, rust, zig`) {
		t.Errorf("an unknown language: exit %d: %s", code, stderr)
	}
	existing := t.TempDir()
	_, stderr, code = runCLI(t, "plugin", "new", "--lang", "go", "--sdk", sdk, "--dir", existing, "x")
	if code != 1 || !strings.Contains(stderr, "already exists") {
		t.Errorf("an existing directory: exit %d: %s", code, stderr)
	}
}

// skeletonTools fails the test (pluginbuild.Missing) when a tool the language's skeleton builds
// with is not installed.
func skeletonTools(t *testing.T, lang, sdk string) {
	t.Helper()
	switch lang {
	case "rust":
		if _, err := pluginbuild.Rustc(); err != nil {
			pluginbuild.Missing(t, "rustc for wasm32-wasi", pluginbuild.RustInstall)
		}
	case "c":
		for _, tool := range []string{"clang", "wasm-ld"} {
			if _, err := exec.LookPath(tool); err != nil {
				pluginbuild.Missing(t, tool, pluginbuild.CInstall)
			}
		}
	case "assemblyscript":
		if _, err := exec.LookPath("npm"); err != nil {
			pluginbuild.Missing(t, "npm", "apt-get install nodejs npm")
		}
	case "zig":
		if _, err := os.Stat(filepath.Join(sdk, "zig", "node_modules", "@ryoppippi", "zig-linux-x64", "zig")); err != nil {
			pluginbuild.Missing(t, "Zig 0.11", pluginbuild.ZigInstall)
		}
	}
}

// hasTest says whether a skeleton holds a test: a file named for tests, or Zig or Rust test blocks.
func hasTest(t *testing.T, dir string) bool {
	t.Helper()
	found := false
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		name := d.Name()
		b, _ := os.ReadFile(p)
		found = found || strings.Contains(name, "_test.") || strings.HasPrefix(name, "test.") ||
			strings.Contains(string(b), "\ntest \"") || strings.Contains(string(b), "#[test]")
		return nil
	})
	return found
}
