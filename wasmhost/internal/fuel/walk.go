package fuel

import "fmt"

// code rewrites the code section: every function body gets a fuel check at
// its entry and at the top of every loop, and its function indices move.
func (w *rewriter) code(s section) ([]byte, error) {
	r := reader{buf: s.content, base: s.offset}
	n := r.count()
	if r.err == nil && n != w.definedFuncs {
		return nil, fmt.Errorf("%d function bodies for %d functions", n, w.definedFuncs)
	}
	out := appendU32(make([]byte, 0, len(s.content)+len(s.content)/8+64), n)
	var body []byte // reused for every function
	for i := uint32(0); i < n && r.err == nil; i++ {
		size := r.u32()
		offset := r.pos
		code := r.bytes(size)
		if r.err != nil {
			break
		}
		var err error
		if body, err = w.function(body[:0], code, s.offset+offset); err != nil {
			return nil, fmt.Errorf("function %d: %w", w.importedFuncs+i, err)
		}
		out = appendU32(out, uint32(len(body)))
		out = append(out, body...)
	}
	r.expectEnd("code section")
	return out, r.err
}

// function appends the instrumented body of one function to out.
func (w *rewriter) function(out, code []byte, offset int) ([]byte, error) {
	r := reader{buf: code, base: offset}
	var locals uint64
	for groups := r.count(); groups > 0 && r.err == nil; groups-- {
		locals += uint64(r.u32())
		r.valueType()
	}
	if r.err != nil {
		return nil, r.err
	}
	if locals > maxLocalsPerFunction {
		return nil, fmt.Errorf("%d locals, more than the limit of %d", locals, maxLocalsPerFunction)
	}
	if w.locals += locals; w.locals > maxLocalsPerModule {
		return nil, fmt.Errorf("more than %d locals in the module", maxLocalsPerModule)
	}
	p := patch{in: code, out: out}
	p.copyTo(r.pos)
	p.out = w.appendCheck(p.out)
	w.walk(&r, &p)
	return p.finish(), r.err
}

// appendCheck appends the fuel check:
//
//	global.get $fuel
//	i64.const 1
//	i64.sub
//	global.set $fuel
//	global.get $fuel
//	i64.const 0
//	i64.lt_s
//	if
//	  call $refill
//	end
//
// It leaves the operand stack as it found it, so it is valid at the start of
// any function or loop body whatever the block type, and it adds no label,
// so branch depths around it do not change. wazero's compiler keeps the
// global in a register between the set and the second get, so the check is
// one load, one store and a branch that is almost never taken.
func (w *rewriter) appendCheck(b []byte) []byte {
	b = appendU32(append(b, opGlobalGet), w.fuelGlobal)
	b = append(b, opI64Const, 1, opI64Sub)
	b = appendU32(append(b, opGlobalSet), w.fuelGlobal)
	b = appendU32(append(b, opGlobalGet), w.fuelGlobal)
	b = append(b, opI64Const, 0, opI64LtS, opIf, blockTypeEmpty, opCall)
	b = appendU32(b, w.refillFunc)
	return append(b, opEnd)
}

// walk reads the instructions of a function body up to its final end,
// inserting a check after each loop header and renumbering function indices.
// It knows the immediates of every instruction wazero accepts, and reads
// them as wazero does, so the two agree on where each instruction starts.
func (w *rewriter) walk(r *reader, p *patch) {
	for depth := 1; depth > 0; {
		if r.eof() {
			r.fail("function body ends inside a block")
			return
		}
		op := r.byte()
		switch op {
		case opPrefixMisc:
			if sub := r.u32(); int(sub) < len(misc) && misc[sub] != immInvalid {
				r.skip(misc[sub])
			} else {
				r.fail("invalid instruction 0xfc %#x", sub)
			}
			continue
		case opPrefixVector:
			sub := r.byte()
			switch imm := vector[sub]; imm {
			case immInvalid:
				r.fail("invalid instruction 0xfd %#x", sub)
			case immMemArgLane:
				r.memArg()
				r.byte()
			default:
				r.skip(imm)
			}
			continue
		case opPrefixAtomic:
			sub := r.byte()
			if imm := atomic(sub); imm != immInvalid {
				r.skip(imm)
			} else {
				r.fail("invalid instruction 0xfe %#x", sub)
			}
			continue
		}

		switch imm := single[op]; imm {
		case immBlockType:
			r.blockType()
			depth++
			if op == opLoop {
				p.copyTo(r.pos)
				p.out = w.appendCheck(p.out)
			}
		case immTryTable:
			r.blockType()
			for n := r.count(); n > 0 && r.err == nil; n-- {
				switch kind := r.byte(); kind {
				case 0, 1: // catch, catch_ref: tag and label
					r.u32()
					r.u32()
				case 2, 3: // catch_all, catch_all_ref: label
					r.u32()
				default:
					r.fail("invalid catch kind %#x", kind)
				}
			}
			depth++
		case immFuncIdx:
			w.funcIndex(r, p)
		case immLegacyEH:
			r.fail("legacy exception handling instruction %#x is not supported (recompile with exnref: try_table)", op)
		case immInvalid:
			r.fail("invalid instruction %#x", op)
		default:
			r.skip(imm)
		}
		if op == opEnd {
			depth--
		}
	}
	if r.err == nil && r.pos != len(r.buf) {
		r.fail("%d bytes after the end of the function", len(r.buf)-r.pos)
	}
}

// skip reads the immediates described by imm.
func (r *reader) skip(imm immediate) {
	switch imm {
	case immNone:
	case immU32:
		r.u32()
	case immU32x2:
		r.u32()
		r.u32()
	case immBlockType:
		r.blockType()
	case immBrTable:
		for n := r.count(); n > 0 && r.err == nil; n-- {
			r.u32()
		}
		r.u32()
	case immMemArg:
		r.memArg()
	case immI32:
		r.signed(32)
	case immI64:
		r.signed(64)
	case immF32:
		r.bytes(4)
	case immF64:
		r.bytes(8)
	case immV128:
		r.bytes(16)
	case immLane, immByte:
		r.byte()
	case immSelectT:
		for n := r.count(); n > 0 && r.err == nil; n-- {
			r.valueType()
		}
	case immRefNull:
		r.refNullType()
	default:
		r.fail("no immediate reader for kind %d", imm)
	}
}

// memArg reads a memarg: alignment, the memory index when bit 6 of the
// alignment is set (multi-memory), and the offset.
func (r *reader) memArg() {
	if align := r.u32(); align&0x40 != 0 {
		r.u32()
	}
	r.u32()
}
