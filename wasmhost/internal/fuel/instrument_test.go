package fuel

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

var (
	empty   = []byte{blockTypeEmpty}
	voidFn  = funcType(nil, nil)
	i32Fn   = funcType(nil, []byte{i32})
	i32i32  = funcType([]byte{i32}, []byte{i32})
	loopBr0 = cat(op(opLoop, empty), op(0x0c, u32(0)), op(opEnd)) // loop br 0 end
)

// spinModule is (func (export "spin") (loop (br 0))).
var spinModule = wasmModule(
	vecSec(secType, voidFn),
	vecSec(secFunction, u32(0)),
	vecSec(secExport, export("spin", externFunc, 0)),
	vecSec(secCode, body(nil, loopBr0)),
)

// kitchenSink uses function indices in every place a module can: calls,
// call_indirect through tables filled by all eight element segment
// encodings, ref.func in code and in a global, the start function, exports
// and the name section. It imports add1 and base from a module "env".
var kitchenSink = func() []byte {
	const tI32, tI32I32, tVoid = 0, 1, 2
	const (
		fAdd1   = iota // imported
		fAnswer        // the defined functions
		fIndirect
		fViaRefFunc
		fStart
		fGetG
		fLoopSum
		fBrTable
		fViaGlobalRef
		fPassive
		fExprSeg
		fTableTwo
		fRefIsNull
		fDeclared
		fSelfRef
	)
	names := []string{
		fAnswer: "answer", fIndirect: "indirect", fViaRefFunc: "viaRefFunc", fStart: "start",
		fGetG: "getg", fLoopSum: "loopsum", fBrTable: "brtable", fViaGlobalRef: "viaGlobalRef",
		fPassive: "passive", fExprSeg: "exprSeg", fTableTwo: "tableTwo", fRefIsNull: "refIsNull",
		fDeclared: "declared", fSelfRef: "selfRef",
	}
	types := []uint32{
		fAnswer: tI32, fIndirect: tI32, fViaRefFunc: tI32, fStart: tVoid, fGetG: tI32, fLoopSum: tI32I32,
		fBrTable: tI32I32, fViaGlobalRef: tI32, fPassive: tI32, fExprSeg: tI32, fTableTwo: tI32,
		fRefIsNull: tI32, fDeclared: tI32, fSelfRef: tI32,
	}
	callIndirect := func(typeIdx, table uint32) []byte { return op(0x11, u32(typeIdx), u32(table)) }
	localGet := func(i uint32) []byte { return op(opLocalGet, u32(i)) }
	localSet := func(i uint32) []byte { return op(0x21, u32(i)) }
	refFunc := func(f uint32) []byte { return op(opRefFunc, u32(f)) }
	bodies := [][]byte{
		fAnswer:     body(nil, i32c(41), op(opCall, u32(fAdd1))),
		fIndirect:   body(nil, i32c(0), callIndirect(tI32, 0)),
		fViaRefFunc: body(nil, i32c(1), refFunc(fAnswer), op(0x26, u32(0)), i32c(1), callIndirect(tI32, 0)),
		fStart:      body(nil, op(opGlobalGet, u32(0)), i32c(7), op(opI32Add), op(opGlobalSet, u32(1))),
		fGetG:       body(nil, op(opGlobalGet, u32(1))),
		fLoopSum: body([][2]byte{{1, i32}},
			op(opBlock, empty), op(opLoop, empty),
			localGet(0), op(0x45), op(0x0d, u32(1)), // br_if 1 when n == 0
			localGet(1), localGet(0), op(opI32Add), localSet(1),
			localGet(0), i32c(1), op(opI32Sub), localSet(0),
			op(0x0c, u32(0)), op(opEnd), op(opEnd),
			localGet(1)),
		fBrTable: body(nil,
			op(opBlock, empty), op(opBlock, empty), op(opBlock, empty),
			localGet(0), op(opBrTable, vec(u32(0), u32(1)), u32(2)), op(opEnd),
			i32c(10), op(0x0f), op(opEnd),
			i32c(20), op(0x0f), op(opEnd),
			i32c(30)),
		fViaGlobalRef: body(nil, i32c(2), op(opGlobalGet, u32(2)), op(0x26, u32(0)), i32c(2), callIndirect(tI32, 0)),
		fPassive: body(nil,
			i32c(3), i32c(0), i32c(1), op(opPrefixMisc, u32(0x0c), u32(1), u32(0)), // table.init elem 1 table 0
			op(opPrefixMisc, u32(0x0d), u32(1)), // elem.drop 1
			i32c(3), callIndirect(tI32, 0)),
		fExprSeg:   body(nil, i32c(10), i32c(4), callIndirect(tI32I32, 0)),
		fTableTwo:  body(nil, i32c(0), callIndirect(tI32, 1), i32c(1), callIndirect(tI32, 1), op(opI32Add)),
		fRefIsNull: body(nil, refFunc(fDeclared), op(0xd1)),
		fDeclared:  body(nil, i32c(13)),
		fSelfRef:   body(nil, refFunc(fSelfRef), op(0xd1), op(0x45)),
	}
	var funcs, codes, exports, funcNames [][]byte
	for f := fAnswer; f <= fSelfRef; f++ {
		funcs = append(funcs, u32(types[f]))
		codes = append(codes, bodies[f])
		exports = append(exports, export(names[f], externFunc, uint32(f)))
		funcNames = append(funcNames, cat(u32(uint32(f)), str(names[f])))
	}
	exports = append(exports, export("table", externTable, 0), export("g", externGlobal, 1))
	expr := func(instrs ...[]byte) []byte { return cat(cat(instrs...), []byte{opEnd}) }
	funcIdx := func(fs ...uint32) []byte {
		var items [][]byte
		for _, f := range fs {
			items = append(items, u32(f))
		}
		return vec(items...)
	}
	const funcref = 0x70
	nameSection := cat(
		sec(nameModule, str("kitchen")),
		sec(nameFunctions, vec(append([][]byte{cat(u32(fAdd1), str("add1"))}, funcNames...)...)),
		sec(nameLocals, vec(cat(u32(fLoopSum), vec(cat(u32(0), str("n")), cat(u32(1), str("acc")))))),
	)
	return wasmModule(
		vecSec(secType, i32Fn, i32i32, voidFn),
		vecSec(secImport,
			importFunc("env", "add1", tI32I32),
			cat(str("env"), str("base"), []byte{externGlobal, i32, 0})),
		vecSec(secFunction, funcs...),
		vecSec(secTable, []byte{funcref, 0, 5}, []byte{funcref, 0, 2}),
		vecSec(secGlobal,
			cat([]byte{i32, 1}, expr(i32c(0))),
			cat([]byte{funcref, 0}, expr(refFunc(fAnswer)))),
		vecSec(secExport, exports...),
		sec(secStart, u32(fStart)),
		vecSec(secElement,
			cat(u32(0), expr(i32c(0)), funcIdx(fAnswer)),
			cat(u32(1), []byte{0}, funcIdx(fGetG)),
			cat(u32(2), u32(1), expr(i32c(0)), []byte{0}, funcIdx(fAnswer)),
			cat(u32(3), []byte{0}, funcIdx(fDeclared)),
			cat(u32(4), expr(i32c(4)), vec(expr(refFunc(fLoopSum)))),
			cat(u32(5), []byte{funcref}, vec(expr(refFunc(fGetG)), expr(op(opRefNull, []byte{funcref})))),
			cat(u32(6), u32(1), expr(i32c(1)), []byte{funcref}, vec(expr(refFunc(fGetG)))),
			cat(u32(7), []byte{funcref}, vec(expr(refFunc(fSelfRef))))),
		vecSec(secCode, codes...),
		customSec("name", nameSection),
		customSec(".debug_info", []byte{1, 2, 3}),
		customSec("producers", []byte{0}),
	)
}()

// envModule provides the imports of kitchenSink: add1 and the global base.
var envModule = wasmModule(
	vecSec(secType, i32i32),
	vecSec(secFunction, u32(0)),
	vecSec(secGlobal, cat([]byte{i32, 0}, i32c(100), []byte{opEnd})),
	vecSec(secExport, export("add1", externFunc, 0), export("base", externGlobal, 0)),
	vecSec(secCode, body(nil, op(opLocalGet, u32(0)), i32c(1), op(opI32Add))),
)

func TestInstrumentRenumbersFunctions(t *testing.T) {
	ctx := context.Background()
	r := newRuntime(t, runtimeConfig(api.CoreFeaturesV2).WithCustomSections(true))
	if _, err := r.InstantiateWithConfig(ctx, envModule, wazero.NewModuleConfig().WithName("env")); err != nil {
		t.Fatal(err)
	}
	plain := start(t, r, api.CoreFeaturesV2, kitchenSink, false)
	fueled := start(t, r, api.CoreFeaturesV2, kitchenSink, true)

	want := map[string]uint64{
		"answer": 42, "indirect": 42, "viaRefFunc": 42, "getg": 107, "brtable": 20, "viaGlobalRef": 42,
		"passive": 107, "exprSeg": 55, "tableTwo": 149, "refIsNull": 0, "declared": 13, "selfRef": 1,
		"loopsum": 55,
	}
	for name, w := range want {
		var args []uint64
		switch name {
		case "loopsum":
			args = []uint64{10}
		case "brtable":
			args = []uint64{1}
		}
		if got := plain.mustCall(t, name, args...); got != w {
			t.Errorf("plain %s = %d, want %d", name, got, w)
		}
		if got := fueled.mustCall(t, name, args...); got != w {
			t.Errorf("instrumented %s = %d, want %d", name, got, w)
		}
	}

	// The name section moved with the functions.
	for name, def := range fueled.mod.ExportedFunctionDefinitions() {
		if def.Name() != name {
			t.Errorf("export %q is named %q in the name section", name, def.Name())
		}
	}
	if got := fueled.mod.ExportedFunctionDefinitions()["loopsum"].ParamNames(); len(got) != 1 || got[0] != "n" {
		t.Errorf("loopsum's parameter names are %q, want [n]", got)
	}

	// DWARF is dropped, other custom sections are kept.
	out, err := Instrument(kitchenSink, api.CoreFeaturesV2)
	if err != nil {
		t.Fatal(err)
	}
	compiled, err := r.CompileModule(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	var customs []string
	for _, c := range compiled.CustomSections() {
		customs = append(customs, c.Name())
	}
	if got := strings.Join(customs, ","); got != "producers" {
		t.Errorf("custom sections after instrumenting: %s, want producers", got)
	}
}

// TestInstrumentRejectsInvalidOriginal checks the security property that
// motivates validating before rewriting: this module writes global 0, which
// does not exist, so it is invalid; the rewrite adds global 0 (the counter),
// after which the same code would be valid and could refill itself.
func TestInstrumentRejectsInvalidOriginal(t *testing.T) {
	cheat := wasmModule(
		vecSec(secType, voidFn),
		vecSec(secFunction, u32(0)),
		vecSec(secExport, export("cheat", externFunc, 0)),
		vecSec(secCode, body(nil, i64c(1<<62), op(opGlobalSet, u32(0)), loopBr0)),
	)
	_, err := Instrument(cheat, api.CoreFeaturesV2)
	if err == nil || !strings.Contains(err.Error(), "invalid module") {
		t.Fatalf("Instrument(cheat) = %v, want an invalid module error", err)
	}

	// Without the validation, the rewrite alone would yield a valid module.
	m, err := decodeModule(cheat)
	if err != nil {
		t.Fatal(err)
	}
	rewritten, err := m.instrument()
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(rewritten, api.CoreFeaturesV2); err != nil {
		t.Fatalf("the test is moot: the rewritten module is invalid too: %v", err)
	}
}

func TestInstrumentRejects(t *testing.T) {
	instrumented, err := Instrument(spinModule, api.CoreFeaturesV2)
	if err != nil {
		t.Fatal(err)
	}
	manyLocals := wasmModule(
		vecSec(secType, voidFn),
		vecSec(secFunction, u32(0)),
		vecSec(secCode, cat(u32(7), u32(1), u32(0xffffffff), []byte{i64, opEnd})),
	)
	legacyTry := wasmModule(
		vecSec(secType, voidFn),
		vecSec(secFunction, u32(0)),
		vecSec(secCode, body(nil, op(opLegacyTry, empty), op(opEnd))),
	)
	for _, c := range []struct {
		name, wasm, wantErr string
	}{
		{"empty", "", "magic"},
		{"instrumented twice", string(instrumented), "instrumented already"},
		{"export collision", string(wasmModule(
			vecSec(secGlobal, cat([]byte{i32, 0}, i32c(0), []byte{opEnd})),
			vecSec(secExport, export(ExportGlobal, externGlobal, 0)))), "already exports"},
		{"four billion locals", string(manyLocals), "locals"},
		{"four billion functions", string(wasmModule(sec(secFunction, u32(0xffffffff)))), "vector of"},
		{"legacy exception handling", string(legacyTry), "legacy exception handling"},
		{"truncated", string(spinModule[:len(spinModule)-3]), "unexpected end"},
		{"sections out of order", string(wasmModule(vecSec(secFunction), vecSec(secType))), "out of order"},
		{"function index out of range", string(wasmModule(
			vecSec(secType, voidFn),
			vecSec(secFunction, u32(0)),
			vecSec(secCode, body(nil, op(opCall, u32(1)))))), "out of range"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Instrument([]byte(c.wasm), api.CoreFeaturesV2)
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("Instrument = %v, want an error containing %q", err, c.wantErr)
			}
		})
	}
}

// tailCallModule loops through return_call and return_call_indirect.
var tailCallModule = wasmModule(
	vecSec(secType, voidFn),
	vecSec(secFunction, u32(0), u32(0)),
	vecSec(secTable, []byte{0x70, 0, 1}),
	vecSec(secExport, export("spin", externFunc, 0)),
	vecSec(secElement, cat(u32(0), i32c(0), []byte{opEnd}, vec(u32(1)))),
	vecSec(secCode,
		body(nil, op(opReturnCall, u32(1))),          // 0 -> 1
		body(nil, i32c(0), op(0x13, u32(0), u32(0))), // 1 -> table[0] = 1
	),
)

// TestTailCallLoopStopped checks that recursion through return_call, which
// needs no loop opcode and never overflows the stack, is stopped by the
// check at function entry.
func TestTailCallLoopStopped(t *testing.T) {
	features := api.CoreFeaturesV2 | experimental.CoreFeaturesTailCall
	r := newRuntime(t, runtimeConfig(features))
	in := start(t, r, features, tailCallModule, true)
	begin := time.Now()
	in.meter.Start(begin.Add(50 * time.Millisecond))
	_, err := in.call(t, context.Background(), "spin")
	if !errors.Is(err, ErrCPUBudgetExceeded) {
		t.Fatalf("spin returned %v, want ErrCPUBudgetExceeded", err)
	}
	if d := time.Since(begin); d > 50*time.Millisecond+slack {
		t.Errorf("stopped after %v", d)
	}
}

// exceptionModule throws and catches, and spins inside a catch_all.
var exceptionModule = wasmModule(
	vecSec(secType, voidFn, i32Fn, funcType([]byte{i32}, nil)),
	vecSec(secFunction, u32(1), u32(0)),
	vecSec(secTag, cat([]byte{0}, u32(2))),
	vecSec(secExport, export("catch", externFunc, 0), export("spin", externFunc, 1)),
	vecSec(secCode,
		// block (result i32) try_table (catch 0 0) i32.const 42 throw 0 end unreachable end
		body(nil,
			op(opBlock, []byte{i32}), op(opTryTable, empty, vec(cat([]byte{0}, u32(0), u32(0)))),
			i32c(42), op(opThrow, u32(0)), op(opEnd), op(opUnreachable), op(opEnd)),
		// block try_table (catch_all 0) loop br 0 end end end
		body(nil,
			op(opBlock, empty), op(opTryTable, empty, vec(cat([]byte{2}, u32(0)))),
			loopBr0, op(opEnd), op(opEnd)),
	),
)

// TestExceptionHandling checks try_table and throw, and that a guest's
// catch_all does not catch the abort of its call.
func TestExceptionHandling(t *testing.T) {
	features := api.CoreFeaturesV2 | experimental.CoreFeaturesExceptionHandling
	r := newRuntime(t, runtimeConfig(features))
	in := start(t, r, features, exceptionModule, true)
	if got := in.mustCall(t, "catch"); got != 42 {
		t.Errorf("catch = %d, want 42", got)
	}
	in.meter.Start(time.Now().Add(20 * time.Millisecond))
	if _, err := in.call(t, context.Background(), "spin"); !errors.Is(err, ErrCPUBudgetExceeded) {
		t.Fatalf("spin returned %v, want ErrCPUBudgetExceeded", err)
	}
}

// allFeatures are the core features whose instructions the walker knows.
const allFeatures = api.CoreFeaturesV2 | experimental.CoreFeaturesThreads | experimental.CoreFeaturesTailCall |
	experimental.CoreFeaturesExtendedConst | experimental.CoreFeaturesExceptionHandling |
	experimental.CoreFeaturesTypedFunctionReferences

var coverageExports = []string{"simd", "misc", "atomics", "control", "funcref", "tail"}

// coverageModule has one function per group of prefixed instructions and
// unusual immediates, each returning an i32 that depends on what it ran.
var coverageModule = func() []byte {
	memarg := func(align, offset uint32) []byte { return cat(u32(align), u32(offset)) }
	vec128 := func(sub byte, imm ...[]byte) []byte { return op(opPrefixVector, []byte{sub}, cat(imm...)) }
	miscOp := func(sub uint32, imm ...[]byte) []byte { return op(opPrefixMisc, u32(sub), cat(imm...)) }
	atomicOp := func(sub byte, imm ...[]byte) []byte { return op(opPrefixAtomic, []byte{sub}, cat(imm...)) }
	lanes := bytes.Repeat([]byte{3}, 16)
	const (
		tI32, tPair = 0, 4
		fRef        = 6
	)
	bodies := [][]byte{
		// v128.const, v128.store, load32_zero, i8x16.shuffle, load8_lane,
		// replace_lane, i16x8.abs in the spec's encoding (0xfd 0x80 0x01,
		// which wazero reads as 0xfd 0x80 then nop) and extract_lane.
		body(nil,
			i32c(0), vec128(opVecV128Const, bytes.Repeat([]byte{0xfe}, 16)), vec128(0x0b, memarg(4, 0)),
			i32c(16),
			i32c(0), vec128(0x5c, memarg(2, 0)),
			vec128(opVecV128Const, lanes), vec128(opVecI8x16Shuffle, lanes),
			vec128(0x54, memarg(0, 0), []byte{1}),
			i32c(7), vec128(0x17, []byte{2}),
			vec128(0x80, []byte{0x01}),
			vec128(0x1b, []byte{0})),
		// trunc_sat, memory.fill/copy/init, data.drop, table.grow/fill/size.
		body(nil,
			op(opF32Const, []byte{0, 0, 0x80, 0x7f}), miscOp(0x00),
			i32c(32), i32c(9), i32c(8), miscOp(0x0b, u32(0)),
			i32c(48), i32c(32), i32c(8), miscOp(0x0a, u32(0), u32(0)),
			i32c(64), i32c(0), i32c(4), miscOp(0x08, u32(0), u32(0)),
			miscOp(0x09, u32(0)),
			op(opRefNull, []byte{0x70}), i32c(2), miscOp(0x0f, u32(0)), op(0x1a),
			i32c(0), op(opRefNull, []byte{0x70}), i32c(1), miscOp(0x11, u32(0)),
			miscOp(0x10, u32(0)), op(opI32Add),
			i32c(52), op(0x28, memarg(2, 0)), op(opI32Add),
			i32c(64), op(0x28, memarg(2, 0)), op(opI32Add)),
		// atomic.fence, i32.atomic.rmw.add, memory.atomic.notify, i32.atomic.load.
		body(nil,
			atomicOp(0x03, []byte{0}),
			i32c(128), i32c(5), atomicOp(0x1e, memarg(2, 0)),
			i32c(128), i32c(0), atomicOp(0x00, memarg(2, 0)), op(opI32Add),
			i32c(128), atomicOp(0x10, memarg(2, 0)), op(opI32Add)),
		// A block typed by a type index with two results, typed select,
		// memory.size and memory.grow, and a loop continued by br_table.
		body([][2]byte{{1, i32}},
			op(opBlock, u32(tPair)), i32c(1), op(opI64Const, []byte{2}), op(opEnd),
			op(0xa7), op(opI32Add),
			i32c(5), i32c(1), op(opSelectT, vec([]byte{i32})),
			op(0x3f, []byte{0}), op(opI32Add),
			i32c(0), op(0x40, []byte{0}), op(opI32Add),
			op(opBlock, empty), op(opLoop, empty),
			op(opLocalGet, u32(0)), i32c(1), op(opI32Add), op(opLocalTee, u32(0)),
			i32c(3), op(0x48), op(opBrTable, vec(u32(1)), u32(0)),
			op(opEnd), op(opEnd),
			op(opLocalGet, u32(0)), op(opI32Add)),
		// A (ref null $t) local, table.get from a table with an initializer,
		// ref.as_non_null, call_ref, ref.null $t and br_on_null.
		bodyWithLocals(cat(u32(1), u32(1), []byte{refNullPrefix}, u32(tI32)),
			i32c(0), op(0x25, u32(1)), op(0xd4), op(0x14, u32(tI32)),
			op(opBlock, empty), op(opRefNull, u32(tI32)), op(0xd5, u32(0)), op(0x1a), op(opEnd)),
		// return_call.
		body(nil, op(opReturnCall, u32(fRef))),
		// The function in the table initializer.
		body(nil, i32c(77)),
	}
	var funcs, exports [][]byte
	for i := range bodies {
		funcs = append(funcs, u32(tI32))
		if i < len(coverageExports) {
			exports = append(exports, export(coverageExports[i], externFunc, uint32(i)))
		}
	}
	return wasmModule(
		vecSec(secType, i32Fn, i32i32, voidFn, funcType(nil, []byte{i64}), funcType(nil, []byte{i32, i64})),
		vecSec(secFunction, funcs...),
		vecSec(secTable,
			[]byte{0x70, 0, 1},
			cat([]byte{0x40, 0, refNullPrefix}, u32(tI32), []byte{0, 1}, op(opRefFunc, u32(fRef)), []byte{opEnd})),
		vecSec(secMemory, []byte{3, 1, 1}), // shared, min 1, max 1
		vecSec(secExport, exports...),
		vecSec(secElement, cat(u32(3), []byte{0}, vec(u32(fRef)))),
		sec(secDataCount, u32(1)),
		vecSec(secCode, bodies...),
		vecSec(secData, cat(u32(1), u32(4), []byte{1, 2, 3, 4})),
	)
}()

// TestInstructionCoverage runs coverageModule with and without
// instrumentation.
func TestInstructionCoverage(t *testing.T) {
	r := newRuntime(t, runtimeConfig(allFeatures))
	plain := start(t, r, allFeatures, coverageModule, false)
	fueled := start(t, r, allFeatures, coverageModule, true)
	for _, name := range coverageExports {
		p, f := plain.mustCall(t, name), fueled.mustCall(t, name)
		t.Logf("%s = %d", name, p)
		if p != f {
			t.Errorf("%s = %d plain, %d instrumented", name, p, f)
		}
	}
}
