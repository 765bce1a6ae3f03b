package sdk_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The SDK is a Go module of its own with no requirements, so that a plugin author's go get of it
// pulls nothing of the worker (wazero, franz-go, hcl).
func TestModuleHasNoDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "all").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -m all: %v\n%s", err, out)
	}
	if mods := strings.Fields(strings.TrimSpace(string(out))); len(mods) != 1 || mods[0] != "github.com/wasmconnect/wasmconnect/sdk/go" {
		t.Fatalf("the SDK's build list is %q, want the SDK module alone", mods)
	}
}
