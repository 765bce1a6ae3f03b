package fuel

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero/api"

	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

// TestEveryLoopIsChecked disassembles instrumented modules with wasm2wat
// (Debian package wabt), an independent decoder, and checks that every
// function and every loop starts with the fuel check, charged what its region
// holds. It catches a walker that loses track of instruction boundaries and
// so misses a loop or undercharges one.
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
// with the check that appendCheck emits, and that each check charges at
// least the longest path through its region, as an independent computation
// finds it here: an explicit graph of the disassembled instructions, one a
// line, searched backward with memoization (the walker goes forward, once).
func checkWat(t *testing.T, wat []byte) (funcs, loops int) {
	var lines []string
	for s := bufio.NewScanner(bytes.NewReader(wat)); s.Scan(); {
		l, _, _ := strings.Cut(s.Text(), ";;")   // drop comments such as ";; label = @1"
		l = blockComment.ReplaceAllString(l, "") // and such as "br 0 (;@1;)"
		lines = append(lines, strings.TrimSpace(l))
	}
	var fuel, refill string
	// check reads the check at lines[at:] and returns its weight.
	check := func(at int) int {
		if at+10 > len(lines) {
			t.Fatalf("line %d: %q: no check follows", at, lines[at-1])
		}
		c := lines[at : at+10]
		if fuel == "" {
			fuel, refill = strings.TrimPrefix(c[0], "global.get "), strings.TrimPrefix(c[8], "call ")
		}
		weight, err := strconv.Atoi(strings.TrimPrefix(c[1], "i64.const "))
		want := []string{
			"global.get " + fuel, "i64.const " + strconv.Itoa(weight), "i64.sub", "global.set " + fuel,
			"global.get " + fuel, "i64.const 0", "i64.lt_s", "if", "call " + refill, "end",
		}
		for j := range want {
			if err != nil || strings.TrimRight(c[j], ")") != want[j] { // ")" closes the func
				t.Fatalf("line %d: %q is followed by %q, want the fuel check %q", at, lines[at-1], c, want)
			}
		}
		return weight
	}
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "(func ") || strings.Contains(lines[i], "(import") {
			continue
		}
		funcs++
		at := i + 1
		for at < len(lines) && strings.HasPrefix(lines[at], "(local") {
			at++
		}
		f := watFunc{weights: map[int]int{-1: check(at)}}
		for at += 10; at < len(lines) && !strings.HasPrefix(lines[at], "("); at++ {
			if n := lengthCharge(lines, at, fuel); n > 0 {
				at += n // not the module's own code: the charge of the bulk operation that follows
			} else if isBulk(lines[at]) {
				t.Fatalf("line %d: %q is not preceded by the charge of its length", at+1, lines[at])
			}
			f.ins = append(f.ins, watIns{text: strings.TrimRight(lines[at], ")"), line: at + 1})
			if op := f.ins[len(f.ins)-1].op(); op == "loop" {
				loops++
				f.weights[len(f.ins)-1] = check(at + 1)
				at += 10
			}
		}
		f.resolve(t)
		f.check(t, lines[i])
		i = at - 1
	}
	return funcs, loops
}

// isBulk says whether a line is an operation on a range of memory or table
// whose length is its last operand.
func isBulk(line string) bool {
	op, _, _ := strings.Cut(line, " ")
	switch op {
	case "memory.init", "memory.copy", "memory.fill", "table.init", "table.copy", "table.grow", "table.fill":
		return true
	}
	return false
}

// lengthCharge returns how many lines at lines[at:] are appendLengthCharge's
// charge of the bulk operation after them, or 0.
func lengthCharge(lines []string, at int, fuel string) int {
	if at+10 > len(lines) || !strings.HasPrefix(lines[at], "global.set ") || !isBulk(lines[at+9]) {
		return 0
	}
	length := strings.TrimPrefix(lines[at], "global.set ")
	want := []string{"global.set " + length, "global.get " + fuel, "global.get " + length, "i64.extend_i32_u",
		"i64.const 3", "i64.shr_u", "i64.sub", "global.set " + fuel, "global.get " + length}
	for i, w := range want {
		if lines[at+i] != w {
			return 0
		}
	}
	return len(want)
}

var blockComment = regexp.MustCompile(`\(;.*?;\)`)

// watFunc is one function of a disassembly: its instructions without the
// checks, and the weight of the check of each region (-1: the function's;
// else the index of the loop).
type watFunc struct {
	ins     []watIns
	weights map[int]int
}

type watIns struct {
	text    string
	line    int
	end     int   // a block, loop, if or try_table: the index of its end
	elseAt  int   // an if: the index of its else, or -1
	targets []int // a branch (and a try_table's catches): the index of each target block, -1 = the function
}

func (in watIns) op() string { op, _, _ := strings.Cut(in.text, " "); return op }

// vector says whether the instruction is a SIMD one, which the walker may
// count twice (wazero reads a two-byte sub-opcode as an opcode and a nop).
func (in watIns) vector() bool {
	op := in.op()
	return strings.HasPrefix(op, "v128") || strings.Contains(op, "x16.") || strings.Contains(op, "x8.") || strings.Contains(op, "x4.") || strings.Contains(op, "x2.")
}

// resolve matches blocks with their ends and branches with their targets.
func (f *watFunc) resolve(t *testing.T) {
	var open []int
	label := func(depth string) int {
		d, err := strconv.Atoi(depth)
		if err != nil {
			t.Fatalf("label %q: %v", depth, err)
		}
		if d == len(open) {
			return -1
		}
		return open[len(open)-1-d]
	}
	for i := range f.ins {
		in := &f.ins[i]
		fields := strings.Fields(in.text)
		switch in.op() {
		case "block", "loop", "if":
			in.elseAt = -1
			open = append(open, i)
		case "try_table":
			for _, c := range strings.Split(in.text, "(")[1:] {
				if cf := strings.Fields(strings.TrimRight(c, ") ")); len(cf) > 1 && strings.HasPrefix(cf[0], "catch") {
					in.targets = append(in.targets, label(cf[len(cf)-1]))
				}
			}
			open = append(open, i)
		case "else":
			f.ins[open[len(open)-1]].elseAt = i
		case "end":
			f.ins[open[len(open)-1]].end = i
			open = open[:len(open)-1]
		case "br", "br_if", "br_table", "br_on_null", "br_on_non_null":
			for _, d := range fields[1:] {
				in.targets = append(in.targets, label(d))
			}
		}
	}
}

// check compares each check's weight with the longest path of its region.
func (f *watFunc) check(t *testing.T, name string) {
	for start, weight := range f.weights {
		first, last := 0, len(f.ins) // the function: its end is the one after the last line
		if start >= 0 {
			first, last = start+1, f.ins[start].end
		}
		memo := map[int]int{}
		var longest func(i int) int
		longest = func(i int) int {
			if i > last || (i == last && start >= 0 && i > f.ins[start].end) {
				return 0
			}
			if i == len(f.ins) {
				return 1 // the function's own end
			}
			if v, ok := memo[i]; ok {
				return v
			}
			memo[i] = 0 // a cycle here would be a bug of this oracle; 0 keeps it finite
			best := 0
			for _, n := range f.next(i, start) {
				best = max(best, longest(n))
			}
			memo[i] = 1 + best
			return memo[i]
		}
		path := longest(first)
		vectors := 0
		for i := first; i <= min(last, len(f.ins)-1); i++ {
			if f.ins[i].vector() {
				vectors++
			}
		}
		line := 0
		if start >= 0 {
			line = f.ins[start].line
		}
		if weight < path || weight > path+vectors+1 {
			t.Fatalf("%s: the check of the region at line %d charges %d, its longest path has %d instructions (%d vector ones)", name, line, weight, path, vectors)
		}
	}
}

// next returns where control may go after instruction i, in the region of the
// loop at index region (-1: the function): a nested loop is one step, to
// each of its ways out; a branch back to a loop's top ends the path.
func (f *watFunc) next(i, region int) []int {
	in := f.ins[i]
	after := func(target int) []int {
		if target < 0 || f.ins[target].op() == "loop" {
			return nil // returns, or starts a new iteration
		}
		return []int{f.ins[target].end + 1}
	}
	var out []int
	switch op := in.op(); op {
	case "loop":
		if i == region {
			return []int{i + 1}
		}
		out = append(out, in.end+1)
		for j := i + 1; j < in.end; j++ {
			for _, t := range f.ins[j].targets {
				if t < i {
					out = append(out, after(t)...)
				}
			}
		}
		return out
	case "br", "br_table":
		for _, t := range in.targets {
			out = append(out, after(t)...)
		}
		return out
	case "br_if", "br_on_null", "br_on_non_null":
		return append(after(in.targets[0]), i+1)
	case "if":
		if in.elseAt >= 0 {
			return []int{i + 1, in.elseAt + 1}
		}
		return []int{i + 1, in.end + 1}
	case "else":
		for j := i - 1; j >= 0; j-- {
			if f.ins[j].op() == "if" && f.ins[j].elseAt == i {
				return []int{f.ins[j].end + 1}
			}
		}
		return nil
	case "try_table":
		for _, t := range in.targets {
			out = append(out, after(t)...)
		}
		return append(out, i+1)
	case "return", "unreachable", "throw", "throw_ref", "return_call", "return_call_indirect", "return_call_ref":
		return nil
	}
	return []int{i + 1}
}
