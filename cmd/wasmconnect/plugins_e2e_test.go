//go:build e2e

package main

// End-to-end tests of the plugin directory: what a worker does with files there that are not
// plugins it can run.

import (
	"bytes"
	"context"
	wasmbinary "encoding/binary" // binary is the binary under test
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/wasmconnect/wasmconnect/wasmhost"
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
	builtins := 0
	files, _ := filepath.Glob(filepath.Join(pluginDir, "*.wasm"))
	for _, f := range files {
		out, _, _ := runCLI(t, "plugin", "inspect", "--json", f)
		var info struct{ Plugins []any }
		if err := json.Unmarshal([]byte(out), &info); err != nil {
			t.Fatalf("plugin inspect --json %s: %v", f, err)
		}
		builtins += len(info.Plugins)
	}
	if len(plugins) != builtins {
		t.Errorf("/connector-plugins lists %d plugins, want the built-ins' %d: %v", len(plugins), builtins, plugins)
	}

	checkSkipped(t, w, dir, want)
}

// checkSkipped checks that w logged one "plugin module not loaded" line for each file of dir that
// want names, with the phrase want gives it, and no other.
func checkSkipped(t *testing.T, w *worker, dir string, want map[string]string) {
	t.Helper()
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

// descriptorSectionOf is a custom section wasmconnect.descriptor holding payload (sdk/ABI.md §3.1).
func descriptorSectionOf(payload []byte) []byte {
	name := append([]byte{byte(len(wasmhost.DescriptorSection))}, wasmhost.DescriptorSection...)
	sec := wasmbinary.AppendUvarint([]byte{0}, uint64(len(name)+len(payload)))
	return append(append(sec, name...), payload...)
}

// A module whose descriptor section is over the limit (sdk/ABI.md §3.1: a valid descriptor padded
// with whitespace to 2 MiB) and one with two sections: the worker starts without them, logging
// for each the file and what is wrong with its size, and lists the other modules' plugins only.
func TestWorkerSkipsBadDescriptorSections(t *testing.T) {
	wat2wasm, err := exec.LookPath("wat2wasm")
	if err != nil {
		pluginbuild.Missing(t, "wat2wasm", "apt-get install wabt")
	}
	dir := t.TempDir()
	copyPlugins(t, dir)
	plain, embedded := filepath.Join(t.TempDir(), "plain.wasm"), filepath.Join(t.TempDir(), "embedded.wasm")
	if out, err := exec.Command(wat2wasm, filepath.Join("..", "..", "wasmhost", "testdata", "good.wat"), "-o", plain).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm: %v\n%s", err, out)
	}
	if out, stderr, code := runCLI(t, "plugin", "embed", plain, "-o", embedded); code != 0 {
		t.Fatalf("plugin embed: exit %d: %s%s", code, out, stderr)
	}
	p, _ := os.ReadFile(plain)
	e, _ := os.ReadFile(embedded)
	section := e[len(p):] // embed appends the section
	desc := section[bytes.Index(section, []byte(wasmhost.DescriptorSection))+len(wasmhost.DescriptorSection):]
	padded := append(slices.Clone(desc), bytes.Repeat([]byte(" "), 2<<20)...)
	size := len(padded)
	for name, b := range map[string][]byte{
		"big.wasm":   append(slices.Clone(p), descriptorSectionOf(padded)...),
		"twice.wasm": append(slices.Clone(e), section...),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, addr := startBroker(t)
	w := startWorker(t, "worker", addr, map[string]string{"plugin.path": dir})
	vs := w.pluginVersions(t)
	if _, ok := vs["test.fixture.SeqSourceConnector"]; ok {
		t.Errorf("/connector-plugins lists a plugin of a refused module: %v", vs)
	}
	if _, ok := vs["org.apache.kafka.connect.file.FileStreamSourceConnector"]; !ok {
		t.Errorf("/connector-plugins lacks the built-ins beside the refused modules: %v", vs)
	}
	checkSkipped(t, w, dir, map[string]string{
		"big.wasm":   fmt.Sprintf("custom section wasmconnect.descriptor: %d bytes (2.0 MiB), over the limit of 1 MiB", size),
		"twice.wasm": "2 custom sections wasmconnect.descriptor",
	})
}

// installFile copies src to dst the way a deployment should replace a module: written beside it,
// then renamed over it.
func installFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		t.Fatal(err)
	}
}

// pluginVersions is GET /connector-plugins?connectorsOnly=false as class -> version.
func (w *worker) pluginVersions(t *testing.T) map[string]string {
	t.Helper()
	code, b := w.call(t, "GET", "/connector-plugins?connectorsOnly=false", nil)
	var ps []struct{ Class, Version string }
	if code != 200 || json.Unmarshal(b, &ps) != nil {
		return nil
	}
	out := map[string]string{}
	for _, p := range ps {
		out[p.Class] = p.Version
	}
	return out
}

// latestVersion reads topic from the start and returns the faulty.version header of its last
// record, and how many records it holds.
func latestVersion(t *testing.T, addr, topic string) (string, int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	var end int64
	ends.Each(func(o kadm.ListedOffset) { end += o.Offset })
	var last string
	n := 0
	for int64(n) < end {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records of %s", n, end, topic)
		}
		fs.EachRecord(func(r *kgo.Record) {
			n++
			for _, h := range r.Headers {
				if h.Key == "faulty.version" {
					last = string(h.Value)
				}
			}
		})
	}
	return last, n
}

// Hot reload with a worker process: a module added to plugin.path is listed without a restart; a
// module replaced there is listed with its new version, the running task keeps the old code until
// it is restarted and then runs the new; a removed module is no longer listed or usable, and the
// task still running it runs on.
func TestWorkerHotReload(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{filepath.Join(pluginDir, "file.wasm"), filepath.Join(pluginDir, "transforms.wasm"), filepath.Join(testPlugin, "faulty.wasm")} {
		installFile(t, f, filepath.Join(dir, filepath.Base(f)))
	}
	v2 := filepath.Join(t.TempDir(), "faulty.wasm")
	build := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s -w -X main.version=2.0.0", "-o", v2, "./plugins/testdata/faulty")
	build.Dir = filepath.Join("..", "..")
	build.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building faulty 2.0.0: %v\n%s", err, out)
	}
	_, addr := startBroker(t)
	w := startWorker(t, "worker", addr, map[string]string{"plugin.path": dir})
	const faulty, datagen = "wasmconnect.testing.FaultySource", "io.confluent.kafka.connect.datagen.DatagenConnector"
	if vs := w.pluginVersions(t); vs[faulty] != "1.0.0" || vs[datagen] != "" {
		t.Fatalf("plugins at start: %v", vs)
	}
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "hot", "config": map[string]string{
		"connector.class": faulty, "topic": "hot", "poll.interval.ms": "50",
		"value.converter": "org.apache.kafka.connect.storage.StringConverter"}})
	w.waitTaskState(t, "hot", "RUNNING", time.Minute)

	start := time.Now()
	installFile(t, filepath.Join(pluginDir, "datagen.wasm"), filepath.Join(dir, "datagen.wasm"))
	waitFor(t, 20*time.Second, "DatagenConnector to be listed", func() bool { return w.pluginVersions(t)[datagen] != "" })
	t.Logf("added module listed after %v", time.Since(start).Round(time.Millisecond))

	start = time.Now()
	installFile(t, v2, filepath.Join(dir, "faulty.wasm"))
	waitFor(t, 20*time.Second, "FaultySource 2.0.0 to be listed", func() bool { return w.pluginVersions(t)[faulty] == "2.0.0" })
	t.Logf("replaced module listed after %v", time.Since(start).Round(time.Millisecond))
	_, before := latestVersion(t, addr, "hot")
	waitFor(t, 20*time.Second, "more records from the running task", func() bool { _, n := latestVersion(t, addr, "hot"); return n > before+5 })
	if v, _ := latestVersion(t, addr, "hot"); v != "1.0.0" {
		t.Fatalf("the task running before the replace writes version %q, want it to keep 1.0.0", v)
	}
	t.Logf("old version checked at %v", time.Since(start).Round(time.Millisecond))
	w.mustCall(t, 204, "POST", "/connectors/hot/tasks/0/restart", nil)
	waitFor(t, 30*time.Second, "the restarted task to write version 2.0.0", func() bool { v, _ := latestVersion(t, addr, "hot"); return v == "2.0.0" })

	t.Logf("new version checked at %v", time.Since(start).Round(time.Millisecond))
	if err := os.Remove(filepath.Join(dir, "faulty.wasm")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "FaultySource to be gone", func() bool { vs := w.pluginVersions(t); return vs != nil && vs[faulty] == "" })
	_, before = latestVersion(t, addr, "hot")
	waitFor(t, 20*time.Second, "more records from the task of the removed module", func() bool { _, n := latestVersion(t, addr, "hot"); return n > before+5 })
	if s := w.mustStatus(t, "hot"); s.Tasks[0].State != "RUNNING" {
		t.Fatalf("the task of the removed module is %s: %s", s.Tasks[0].State, s.Tasks[0].Trace)
	}
	code, b := w.call(t, "POST", "/connectors", map[string]any{"name": "cold", "config": map[string]string{"connector.class": faulty, "topic": "cold"}})
	if code != 400 || !strings.Contains(string(b), "Failed to find any class that implements Connector and which name matches "+faulty) {
		t.Fatalf("a connector of the removed plugin: %d %s", code, b)
	}
	if log := w.logText(); strings.Contains(log, "panic") {
		t.Fatalf("the worker log has a panic")
	}
}
