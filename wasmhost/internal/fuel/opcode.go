package fuel

// Opcodes the rewriter reads or emits. The full instruction set is described
// by immediates below; only opcodes that need special handling have names.
const (
	opUnreachable        = 0x00
	opBlock              = 0x02
	opLoop               = 0x03
	opIf                 = 0x04
	opElse               = 0x05
	opLegacyTry          = 0x06
	opLegacyCatch        = 0x07
	opThrow              = 0x08
	opThrowRef           = 0x0a
	opLegacyRethrow      = 0x09
	opEnd                = 0x0b
	opBr                 = 0x0c
	opBrIf               = 0x0d
	opBrTable            = 0x0e
	opReturn             = 0x0f
	opCall               = 0x10
	opReturnCall         = 0x12
	opReturnCallIndirect = 0x13
	opReturnCallRef      = 0x15
	opBrOnNull           = 0xd5
	opBrOnNonNull        = 0xd6
	opLegacyDelegate     = 0x18
	opLegacyCatchAll     = 0x19
	opSelectT            = 0x1c
	opTryTable           = 0x1f
	opLocalGet           = 0x20
	opLocalTee           = 0x22
	opGlobalGet          = 0x23
	opGlobalSet          = 0x24
	opI32Const           = 0x41
	opI64Const           = 0x42
	opF32Const           = 0x43
	opF64Const           = 0x44
	opI64LtS             = 0x53
	opI64ShrU            = 0x88
	opI64ExtendI32U      = 0xad
	opI32Add             = 0x6a
	opI32Sub             = 0x6b
	opI32Mul             = 0x6c
	opI64Add             = 0x7c
	opI64Sub             = 0x7d
	opI64Mul             = 0x7e
	opRefNull            = 0xd0
	opRefFunc            = 0xd2
	opPrefixMisc         = 0xfc
	opPrefixVector       = 0xfd
	opPrefixAtomic       = 0xfe
	opVecV128Const       = 0x0c
	opVecI8x16Shuffle    = 0x0d
)

// Value and reference type bytes.
const (
	typeI32          = 0x7f
	typeI64          = 0x7e
	typeFunc         = 0x60
	typeRecGroup     = 0x4e
	refNullPrefix    = 0x63 // (ref null ht)
	refPrefix        = 0x64 // (ref ht)
	blockTypeRefNull = -29  // 0x63 read as s33
	blockTypeRef     = -28  // 0x64 read as s33
	blockTypeEmpty   = 0x40
)

// isValueType reports whether b is a one-byte value type accepted by wazero:
// i32, i64, f32, f64, v128, funcref, externref, exnref.
func isValueType(b byte) bool {
	switch b {
	case 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f, 0x69:
		return true
	}
	return false
}

// immediate classifies what follows an opcode in the code section.
type immediate uint8

const (
	immInvalid    immediate = iota // not an instruction wazero accepts
	immNone                        // no immediate
	immU32                         // one index or label (LEB128 u32)
	immU32x2                       // two indices, e.g. call_indirect typeidx tableidx
	immBlockType                   // block, loop, if
	immBrTable                     // vec(labelidx) labelidx
	immMemArg                      // memarg: align (+ memidx when bit 6 is set), offset
	immI32                         // s32
	immI64                         // s64
	immF32                         // 4 bytes
	immF64                         // 8 bytes
	immSelectT                     // vec(valtype)
	immRefNull                     // heap type as wazero reads it
	immTryTable                    // blocktype vec(catch)
	immMemArgLane                  // memarg, then a lane byte
	immLane                        // one lane byte
	immV128                        // 16 bytes
	immByte                        // one reserved byte (atomic.fence)
	immFuncIdx                     // a function index that moves when the import is added
	immLegacyEH                    // legacy exception handling: rejected like wazero does
)

// single holds the immediates of the one-byte opcodes.
var single = func() (t [256]immediate) {
	for _, op := range []byte{
		0x00, 0x01, 0x05, 0x0a, 0x0b, 0x0f, 0x1a, 0x1b, 0xd1, 0xd4,
	} {
		t[op] = immNone
	}
	for op := 0x45; op <= 0xc4; op++ { // numeric instructions
		t[op] = immNone
	}
	for _, op := range []byte{
		0x08,       // throw tagidx
		0x0c, 0x0d, // br, br_if
		0x14, 0x15, // call_ref, return_call_ref typeidx
		0x20, 0x21, 0x22, 0x23, 0x24, // local.*, global.*
		0x25, 0x26, // table.get, table.set
		0x3f, 0x40, // memory.size, memory.grow (memory index)
		0xd5, 0xd6, // br_on_null, br_on_non_null
	} {
		t[op] = immU32
	}
	t[0x11] = immU32x2 // call_indirect
	t[0x13] = immU32x2 // return_call_indirect
	t[opBlock] = immBlockType
	t[opLoop] = immBlockType
	t[opIf] = immBlockType
	t[opBrTable] = immBrTable
	for op := 0x28; op <= 0x3e; op++ { // loads and stores
		t[op] = immMemArg
	}
	t[opI32Const] = immI32
	t[opI64Const] = immI64
	t[opF32Const] = immF32
	t[opF64Const] = immF64
	t[opSelectT] = immSelectT
	t[opRefNull] = immRefNull
	t[opTryTable] = immTryTable
	t[opCall] = immFuncIdx
	t[opReturnCall] = immFuncIdx
	t[opRefFunc] = immFuncIdx
	for _, op := range []byte{opLegacyTry, opLegacyCatch, opLegacyRethrow, opLegacyDelegate, opLegacyCatchAll} {
		t[op] = immLegacyEH
	}
	return t
}()

// misc holds the immediates of the 0xFC-prefixed instructions.
var misc = [...]immediate{
	0x00: immNone, 0x01: immNone, 0x02: immNone, 0x03: immNone, // i32.trunc_sat_*
	0x04: immNone, 0x05: immNone, 0x06: immNone, 0x07: immNone, // i64.trunc_sat_*
	0x08: immU32x2, // memory.init dataidx memidx
	0x09: immU32,   // data.drop dataidx
	0x0a: immU32x2, // memory.copy memidx memidx
	0x0b: immU32,   // memory.fill memidx
	0x0c: immU32x2, // table.init elemidx tableidx
	0x0d: immU32,   // elem.drop elemidx
	0x0e: immU32x2, // table.copy tableidx tableidx
	0x0f: immU32,   // table.grow
	0x10: immU32,   // table.size
	0x11: immU32,   // table.fill
}

// vector holds the immediates of the 0xFD-prefixed (SIMD) instructions.
//
// wazero reads the SIMD opcode as one byte, not as the LEB128 u32 of the
// spec. For opcodes below 0x80 both agree; for the others the spec's second
// byte is 0x01, which wazero then runs as a nop. Reading one byte here too
// keeps the walker on the same instruction boundaries as the validator in
// every case, including malformed encodings that wazero happens to accept.
var vector = func() (t [256]immediate) {
	for op := 0; op < 256; op++ {
		t[op] = immNone
	}
	for op := 0x00; op <= 0x0b; op++ { // v128.load*, v128.store
		t[op] = immMemArg
	}
	t[opVecV128Const] = immV128
	t[opVecI8x16Shuffle] = immV128
	for op := 0x15; op <= 0x22; op++ { // extract_lane, replace_lane
		t[op] = immLane
	}
	for op := 0x54; op <= 0x5b; op++ { // v128.load*_lane, v128.store*_lane
		t[op] = immMemArgLane
	}
	t[0x5c] = immMemArg // v128.load32_zero
	t[0x5d] = immMemArg // v128.load64_zero
	// Opcodes the SIMD proposal leaves unassigned.
	for _, op := range []byte{
		0x9a, 0xa2, 0xa5, 0xa6, 0xaf, 0xb0, 0xb2, 0xb3, 0xb4, 0xbb,
		0xc2, 0xc5, 0xc6, 0xcf, 0xd0, 0xd2, 0xd3, 0xd4, 0xe2, 0xee,
	} {
		t[op] = immInvalid
	}
	return t
}()

// atomic returns the immediates of a 0xFE-prefixed (threads) instruction,
// whose opcode wazero also reads as one byte.
func atomic(op byte) immediate {
	switch {
	case op <= 0x02 || (op >= 0x10 && op <= 0x4e):
		return immMemArg
	case op == 0x03: // atomic.fence
		return immByte
	}
	return immInvalid
}
