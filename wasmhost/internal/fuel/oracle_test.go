package fuel

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero/api"

	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

// TestEveryLoopIsChecked disassembles instrumented modules with wasm2wat
// (Debian package wabt), an independent decoder, and checks that every
// function and every loop starts with the fuel check. It catches a walker
// that loses track of instruction boundaries and so misses a loop.
func TestEveryLoopIsChecked(t *testing.T) {
	wasm2wat, err := exec.LookPath("wasm2wat")
	if err != nil {
		pluginbuild.Missing(t, "wasm2wat, for the independent disassembly check,", "apt-get install wabt")
	}
	modules := []guest{
		{"kitchen-sink", func(testing.TB) []byte { return kitchenSink }},
		{"spin", func(testing.TB) []byte { return spinModule }},
	}
	for _, g := range append(modules, guests...) {
		t.Run(g.name, func(t *testing.T) {
			out, err := Instrument(g.wasm(t), api.CoreFeaturesV2)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "m.wasm")
			if err := os.WriteFile(path, out, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(wasm2wat, "--no-check", path)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			wat, err := cmd.Output()
			if err != nil {
				t.Fatalf("wasm2wat: %v: %s", err, stderr.String())
			}
			funcs, loops := checkWat(t, wat)
			t.Logf("%d functions and %d loops, all checked", funcs, loops)
			if funcs == 0 {
				t.Fatal("no function found in the disassembly")
			}
		})
	}
}

// checkWat checks that each function body and loop body in the text starts
// with the check that appendCheck emits.
func checkWat(t *testing.T, wat []byte) (funcs, loops int) {
	var lines []string
	for s := bufio.NewScanner(bytes.NewReader(wat)); s.Scan(); {
		l, _, _ := strings.Cut(s.Text(), ";;") // drop comments such as ";; label = @1"
		lines = append(lines, strings.TrimSpace(l))
	}
	var fuel, refill string
	for i := 0; i < len(lines); i++ {
		var start int
		switch l := lines[i]; {
		case strings.HasPrefix(l, "(func ") && !strings.Contains(l, "(import"):
			funcs++
			start = i + 1
			for start < len(lines) && strings.HasPrefix(lines[start], "(local") {
				start++
			}
		case l == "loop" || strings.HasPrefix(l, "loop "):
			loops++
			start = i + 1
		default:
			continue
		}
		if start+10 > len(lines) {
			t.Fatalf("line %d: %q: no check follows", i+1, lines[i])
		}
		check := lines[start : start+10]
		if fuel == "" {
			fuel, refill = strings.TrimPrefix(check[0], "global.get "), strings.TrimPrefix(check[8], "call ")
		}
		want := []string{
			"global.get " + fuel, "i64.const 1", "i64.sub", "global.set " + fuel,
			"global.get " + fuel, "i64.const 0", "i64.lt_s", "if", "call " + refill, "end",
		}
		for j := range want {
			if strings.TrimRight(check[j], ")") != want[j] { // ")" closes the func
				t.Fatalf("line %d: %q is followed by %q, want the fuel check %q", i+1, lines[i], check, want)
			}
		}
	}
	return funcs, loops
}
