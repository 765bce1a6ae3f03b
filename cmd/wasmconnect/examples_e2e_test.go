//go:build e2e

package main

// The example plugins of examples/ (one per guest language) through a broker and a worker process,
// in one pipeline, and through wasmconnect plugin check.

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

// examplePlugins are the example modules, by the package that builds each.
var examplePlugins = []string{
	"examples/plugins/jsonlines",    // Rust source
	"examples/plugins/csv",          // C converter
	"examples/plugins/mask",         // AssemblyScript transformation
	"examples/plugins/haskey",       // WebAssembly text predicate
	"examples/plugins/fieldequals",  // Zig predicate
	"examples/transforms/uppercase", // C transformation on the bare ABI
}

const peopleSchema = `{"type":"struct","fields":[{"type":"int64","optional":true,"field":"id"},{"type":"string","optional":false,"field":"name"},` +
	`{"type":"string","optional":true,"field":"city"},{"type":"string","optional":true,"field":"ssn"}],"optional":false,"name":"com.example.Person"}`

// JSON lines become structs (Rust), keyed ones have their ssn masked (HasKey in WAT, MaskField in
// AssemblyScript), Parisians are dropped (Filter with FieldEquals in Zig), the values are written
// to Kafka as CSV (C); a sink reads the CSV lines as strings, upper-cases them (C on the bare ABI)
// and writes them to a file.
func TestExamplePluginsEndToEnd(t *testing.T) {
	examples, err := pluginbuild.Dir(examplePlugins...)
	if err != nil {
		if m := (*pluginbuild.ToolMissingError)(nil); errors.As(err, &m) {
			pluginbuild.Missing(t, m.What, m.Install)
		}
		t.Fatal(err)
	}
	mods, _ := filepath.Glob(filepath.Join(examples, "*.wasm"))
	if len(mods) != len(examplePlugins) {
		t.Fatalf("built %d example modules, want %d: %v", len(mods), len(examplePlugins), mods)
	}
	for _, m := range mods {
		out, stderr, code := runCLI(t, "plugin", "check", m)
		if code != 0 || !strings.Contains(out, "checks passed") {
			t.Errorf("plugin check %s: exit %d\n%s%s", filepath.Base(m), code, out, stderr)
		}
	}

	_, addr := startBroker(t)
	files := t.TempDir()
	in, out := filepath.Join(files, "people.jsonl"), filepath.Join(files, "people.csv")
	lines := []string{
		`{"id":1,"name":"ada","city":"london","ssn":"111"}`,
		`{"id":2,"name":"bob","city":"paris","ssn":"222"}`,
		`{"name":"cy","city":"berlin","ssn":"333"}`,
		`{"id":4,"name":"dee","city":"rome"}`,
	}
	if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := startWorker(t, "worker", addr, map[string]string{"plugin.path": pluginDir + "," + examples, "plugin.fs.allow": files})
	code, body := w.call(t, "GET", "/connector-plugins?connectorsOnly=false", nil)
	for _, class := range []string{"com.example.sources.JsonLinesSource", "com.example.converters.CsvConverter", "com.example.transforms.MaskField",
		"com.example.predicates.HasKey", "com.example.predicates.FieldEquals", "com.example.transforms.UppercaseValue"} {
		if code != 200 || !strings.Contains(string(body), `"`+class+`"`) {
			t.Errorf("/connector-plugins (%d) lacks %s: %s", code, class, body)
		}
	}
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "people-source", "config": map[string]string{
		"connector.class": "com.example.sources.JsonLinesSource", "file": in, "topic": "people",
		"value.schema": peopleSchema, "key.field": "id",
		"key.converter":   "org.apache.kafka.connect.storage.StringConverter",
		"value.converter": "com.example.converters.CsvConverter", "value.converter.fields": "id,name,city,ssn",
		"transforms":           "mask,drop",
		"transforms.mask.type": "com.example.transforms.MaskField", "transforms.mask.fields": "ssn", "transforms.mask.predicate": "keyed",
		"transforms.drop.type": "org.apache.kafka.connect.transforms.Filter", "transforms.drop.predicate": "paris",
		"predicates": "keyed,paris", "predicates.keyed.type": "com.example.predicates.HasKey",
		"predicates.paris.type": "com.example.predicates.FieldEquals", "predicates.paris.field": "city", "predicates.paris.value": "paris",
	}})
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "people-sink", "config": map[string]string{
		"connector.class": "FileStreamSink", "topics": "people", "file": out,
		"key.converter":   "org.apache.kafka.connect.storage.StringConverter",
		"value.converter": "org.apache.kafka.connect.storage.StringConverter",
		"transforms":      "up", "transforms.up.type": "com.example.transforms.UppercaseValue",
	}})

	want := []string{"1,ADA,LONDON,****", ",CY,BERLIN,333", "4,DEE,ROME,"}
	waitFor(t, 60*time.Second, "the people in the sink's file", func() bool { return countLines(out) >= len(want) })
	if got := readLines(t, out); !slices.Equal(got, want) {
		t.Errorf("the sink's file holds %q, want %q", got, want)
	}
	for _, name := range []string{"people-source", "people-sink"} {
		if s := w.mustStatus(t, name); len(s.Tasks) != 1 || s.Tasks[0].State != "RUNNING" {
			t.Errorf("%s: %+v", name, s)
		}
	}

	// What a client we did not write reads: CSV values keyed by id.
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		pluginbuild.Missing(t, "kcat", "apt-get install kcat")
	}
	raw, err := exec.Command(kcat, "-C", "-b", addr, "-t", "people", "-e", "-q", "-f", "%k|%s\n").Output()
	if err != nil {
		t.Fatalf("kcat: %v", err)
	}
	if got, want := strings.Split(strings.TrimSpace(string(raw)), "\n"), []string{"1|1,ada,london,****", "|,cy,berlin,333", "4|4,dee,rome,"}; !slices.Equal(got, want) {
		t.Errorf("kcat read %q, want %q", got, want)
	}

	// A line that does not fit the schema fails the source's task with the file, line and cause.
	f, err := os.OpenFile(in, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, `{"id":"five","name":"ed"}`)
	f.Close()
	s := w.waitTaskState(t, "people-source", "FAILED", 30*time.Second)
	if !strings.Contains(s.Tasks[0].Trace, in+" line 5 (byte") || !strings.Contains(s.Tasks[0].Trace, "INT64") {
		t.Errorf("the failed task's trace: %s", s.Tasks[0].Trace)
	}
}
