// Package rust_test runs the Rust SDK's own unit tests (the #[test] functions of src/) natively, so
// that go test ./... covers them; the plugins built on the SDK are tested through the WebAssembly
// boundary in their own packages (plugins/file).
package rust_test

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

func TestRustSDKUnitTests(t *testing.T) {
	rustc, err := pluginbuild.Rustc()
	if err != nil {
		pluginbuild.Missing(t, "rustc", pluginbuild.RustInstall)
	}
	bin := filepath.Join(t.TempDir(), "sdk-tests")
	if out, err := exec.Command(rustc, "--edition", "2021", "--test", "--crate-name", "wasmconnect", "-o", bin, "src/lib.rs").CombinedOutput(); err != nil {
		t.Fatalf("building the tests: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("%s", out)
}
