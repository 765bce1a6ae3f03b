package wasmhost

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Check reports each breach of the contract by name, and passes what keeps it.
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		fixture    string
		pass, fail []string // step names
		says       string   // a phrase of some problem
	}{
		{"misbehave", []string{"load", "descriptor", "VALIDATE Trapper", "after errors", "SOURCE Trapper"},
			[]string{"unknown op", "malformed OPEN", "OPEN of an unknown plugin", "POLL on an unknown handle"}, "the module answered with success"},
		{"trap_call", []string{"load", "descriptor"}, []string{"VALIDATE Trapping", "unknown op", "SOURCE Trapping"}, "wasm error: unreachable"},
		{"wrong_abi", nil, []string{"load"}, "declares ABI version 2"},
		{"command", nil, []string{"load"}, "hint: build the module as a library"},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			steps, err := Check(context.Background(), filepath.Join(fixtureDir, tc.fixture+".wasm"), Config{CallTimeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]CheckStep{}
			var all []string
			for _, s := range steps {
				got[s.Name] = s
				all = append(all, s.Name+": "+s.Detail+s.Problem)
			}
			for _, n := range tc.pass {
				if s, ok := got[n]; !ok || s.Problem != "" {
					t.Errorf("step %q should pass: %+v", n, s)
				}
			}
			found := false
			for _, n := range tc.fail {
				s, ok := got[n]
				if !ok || s.Problem == "" {
					t.Errorf("step %q should fail: %+v", n, s)
				}
				found = found || strings.Contains(s.Problem, tc.says)
			}
			if !found {
				t.Errorf("no problem says %q:\n%s", tc.says, strings.Join(all, "\n"))
			}
		})
	}
}
