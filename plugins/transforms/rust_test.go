package transforms_test

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

// TestRustUnitTests runs the crate's own unit tests (the #[test] functions of src/: the textual
// fast paths of InsertField and MaskField against their struct paths, the regular expression
// engine, the date patterns) natively, so that go test ./... covers them.
func TestRustUnitTests(t *testing.T) {
	rustc, err := pluginbuild.Rustc()
	if err != nil {
		pluginbuild.Missing(t, "rustc", pluginbuild.RustInstall)
	}
	dir := t.TempDir()
	sdk := filepath.Join(dir, "libwasmconnect.rlib")
	bin := filepath.Join(dir, "transforms-tests")
	for _, args := range [][]string{
		{"--edition", "2021", "--crate-type", "rlib", "--crate-name", "wasmconnect", "-o", sdk, "../../sdk/rust/src/lib.rs"},
		{"--edition", "2021", "--test", "--crate-name", "transforms", "--extern", "wasmconnect=" + sdk, "-o", bin, "src/lib.rs"},
	} {
		if out, err := exec.Command(rustc, args...).CombinedOutput(); err != nil {
			t.Fatalf("rustc %v: %v\n%s", args, err, out)
		}
	}
	out, err := exec.Command(bin).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("%s", out)
}
