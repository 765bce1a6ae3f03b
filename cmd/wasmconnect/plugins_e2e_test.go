//go:build e2e

package main

// End-to-end tests of the plugin directory: what a worker does with files there that are not
// plugins it can run.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

// foreignModules writes into dir the broken and foreign files of plugins/testdata/foreign (the
// .wat compiled with wat2wasm) and a few that are not WebAssembly at all, and returns each file's
// name with a phrase its load error must contain.
func foreignModules(t *testing.T, dir string) map[string]string {
	t.Helper()
	wat2wasm, err := exec.LookPath("wat2wasm")
	if err != nil {
		pluginbuild.Missing(t, "wat2wasm", "apt-get install wabt")
	}
	want := map[string]string{
		"command.wasm":   "missing export wc_call",
		"trap_init.wasm": "_initialize trapped",
		"spin_init.wasm": "_initialize timed out",
		"text.wasm":      "not a WebAssembly module",
		"empty.wasm":     "not a WebAssembly module",
		"component.wasm": "invalid version header",
		"dangling.wasm":  "no such file or directory",
	}
	for _, name := range []string{"command", "trap_init", "spin_init"} {
		src := filepath.Join("..", "..", "plugins", "testdata", "foreign", name+".wat")
		if out, err := exec.Command(wat2wasm, src, "-o", filepath.Join(dir, name+".wasm")).CombinedOutput(); err != nil {
			t.Fatalf("wat2wasm %s: %v\n%s", src, err, out)
		}
	}
	for name, b := range map[string]string{
		"text.wasm":      "a plugin, honest\n",
		"empty.wasm":     "",
		"component.wasm": "\x00asm\x0d\x00\x01\x00", // a component-model binary's header
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("gone.wasm", filepath.Join(dir, "dangling.wasm")); err != nil {
		t.Fatal(err)
	}
	return want
}

// copyPlugins copies the built-in plugin modules into dir.
func copyPlugins(t *testing.T, dir string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(pluginDir, "*.wasm"))
	if len(files) == 0 {
		t.Fatalf("no plugins in %s", pluginDir)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A plugin directory with foreign and broken .wasm files beside the real plugins: the worker
// starts within seconds (a module that never finishes its _initialize does not hold it
// for plugin.call.timeout.ms), logs one line per skipped file naming it and the reason, and lists
// only the real plugins.
func TestWorkerSkipsForeignModules(t *testing.T) {
	dir := t.TempDir()
	copyPlugins(t, dir)
	want := foreignModules(t, dir)
	_, addr := startBroker(t)
	start := time.Now()
	w := startWorkerNoWait(t, "worker", addr, map[string]string{"plugin.path": dir, "plugin.call.timeout.ms": "60000"})
	waitFor(t, 30*time.Second, "the worker to be healthy", func() bool {
		code, _ := w.call(t, "GET", "/health", nil)
		return code == 200
	})
	t.Logf("healthy after %v", time.Since(start).Round(time.Millisecond))

	var plugins []struct{ Class, Type string }
	if err := json.Unmarshal(w.mustCall(t, 200, "GET", "/connector-plugins?connectorsOnly=false", nil), &plugins); err != nil {
		t.Fatal(err)
	}
	classes := map[string]bool{}
	for _, p := range plugins {
		classes[p.Class] = true
	}
	for _, c := range []string{"org.apache.kafka.connect.file.FileStreamSourceConnector", "org.apache.kafka.connect.json.JsonConverter",
		"org.apache.kafka.connect.transforms.InsertField$Value"} {
		if !classes[c] {
			t.Errorf("/connector-plugins lacks %s: %v", c, plugins)
		}
	}
	if len(plugins) != 34 {
		t.Errorf("/connector-plugins lists %d plugins, want the built-ins' 34: %v", len(plugins), plugins)
	}

	var skipped []string
	for _, line := range strings.Split(w.logText(), "\n") {
		if strings.Contains(line, "plugin module not loaded") {
			skipped = append(skipped, line)
		}
	}
	for name, reason := range want {
		var found []string
		for _, line := range skipped {
			if strings.Contains(line, filepath.Join(dir, name)) {
				found = append(found, line)
			}
		}
		switch {
		case len(found) != 1:
			t.Errorf("%s: %d log lines, want one naming it:\n%s", name, len(found), strings.Join(found, "\n"))
		case !strings.Contains(found[0], reason):
			t.Errorf("%s: the log line lacks the reason %q:\n%s", name, reason, found[0])
		}
	}
	if len(skipped) != len(want) {
		t.Errorf("%d skipped-module lines, want %d:\n%s", len(skipped), len(want), strings.Join(skipped, "\n"))
	}
}
