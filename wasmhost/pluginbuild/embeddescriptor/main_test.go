package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/wasmconnect/wasmconnect/wasmhost"
	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

// embed rewrites the module in place: the section is there, the file keeps its mode, and nothing
// else is left in the directory.
func TestEmbed(t *testing.T) {
	wat2wasm, err := exec.LookPath("wat2wasm")
	if err != nil {
		pluginbuild.Missing(t, "wat2wasm", "apt-get install wabt")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "good.wasm")
	if b, err := exec.Command(wat2wasm, "../../testdata/good.wat", "-o", file).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm: %v\n%s", err, b)
	}
	if err := os.Chmod(file, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := embed(file); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(wasmhost.DescriptorSection)) || !bytes.Contains(b, []byte(`"class":"test.fixture.SeqSourceConnector"`)) {
		t.Error("no descriptor section in the rewritten file")
	}
	if st, err := os.Stat(file); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("mode after embed: %v (%v), want 0640", st.Mode(), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the directory holds %d entries, want the module alone", len(entries))
	}
}
