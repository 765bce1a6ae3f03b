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
	var c charges
	c.open(&p, w)
	w.walk(&r, &p, &c)
	return p.finish(), r.err
}

// charges weighs the checks of one function. A check is charged the longest
// path, in instructions, through the code it covers: the function's body
// outside its loops for the check at the entry, one iteration of a loop's
// body outside the loops nested in it for the check at its top. In structured
// WebAssembly the only backward branches go to loop headers, so the code a
// check covers runs as one forward path between two checks: the fuel burned
// is an upper bound of the instructions run, whatever the code. (Charging one
// unit per check instead let a loop whose body is 80,000 straight-line
// instructions run a quantum of fuel for 5 s instead of a millisecond, past
// its deadline and with the Go collector of the whole process waiting for
// it.) The longest path rather than the size: a loop around a large switch,
// as compilers write state machines, runs one arm per iteration.
//
// The path lengths are computed as the walker reads the code, forward: each
// region knows the longest path to the current instruction (cur, -1 where
// the code is unreachable), each open block the longest path of the branches
// to its end. A loop nested in a region costs that region nothing: its
// iterations are its own check's, and every way out of it (its end, or a
// branch to a label outside it) leaves with the cost it was entered with.
type charges struct {
	regions []region // the function's, then one per open loop
	labels  []label  // the open blocks, innermost last
}

// region is the code one check covers: where its weight goes in the output,
// the longest path to the current instruction, and the longest seen.
type region struct {
	at       int
	cur, max int64
}

// label is an open block, loop, if or try_table.
type label struct {
	op     byte
	region int   // the region it was opened in
	best   int64 // longest path of the branches to its end (-1: none)
	atIf   int64 // an if: the path when its condition is false
	// A try_table: the labels its catch clauses branch to.
	catches []uint32
}

const unreachable = -1

// open appends a check whose weight is filled in when its region ends.
func (c *charges) open(p *patch, w *rewriter) {
	var at int
	p.out, at = w.appendCheck(p.out)
	c.regions = append(c.regions, region{at: at})
}

// count charges an instruction to the innermost region.
func (c *charges) count() {
	r := &c.regions[len(c.regions)-1]
	if r.cur != unreachable {
		r.cur++
		r.max = max(r.max, r.cur)
	}
}

// close ends the innermost region and writes its weight.
func (c *charges) close(p *patch) {
	r := c.regions[len(c.regions)-1]
	c.regions = c.regions[:len(c.regions)-1]
	putWeight(p.out[r.at:r.at+weightBytes], uint64(r.max))
}

// block opens a block, if or try_table (loops: loop).
func (c *charges) block(op byte, catches []uint32) {
	in := len(c.regions) - 1
	l := label{op: op, region: in, best: unreachable, atIf: unreachable, catches: catches}
	if op == opIf {
		l.atIf = c.regions[in].cur
	}
	c.labels = append(c.labels, l)
}

// loop opens a loop, after its check has opened its region.
func (c *charges) loop() {
	c.labels = append(c.labels, label{op: opLoop, region: len(c.regions) - 2, best: unreachable, atIf: unreachable})
}

// branch records a branch to the label at depth; unconditional ends the path.
func (c *charges) branch(depth uint32, unconditional bool) {
	if int(depth) < len(c.labels) {
		c.arrive(&c.labels[len(c.labels)-1-int(depth)])
	} // else: a branch to the function's end, a return
	if unconditional {
		c.stop()
	}
}

// arrive adds a branch to l's end from the current instruction. A branch to a
// loop goes back to its top: a new iteration, which its check charges.
func (c *charges) arrive(l *label) {
	if l.op != opLoop {
		l.best = max(l.best, c.regions[l.region].cur)
	}
}

// stop marks the rest of the code, up to the next end or else, unreachable.
func (c *charges) stop() { c.regions[len(c.regions)-1].cur = unreachable }

// elseOp starts an if's else branch: the then branch goes to the end.
func (c *charges) elseOp() {
	if len(c.labels) == 0 {
		return // not valid code, which wazero rejects before the walk
	}
	l := &c.labels[len(c.labels)-1]
	r := &c.regions[len(c.regions)-1]
	l.best = max(l.best, r.cur)
	r.cur, l.atIf = l.atIf, unreachable
}

// end closes the innermost block, or the function when none is open.
func (c *charges) end(p *patch) {
	n := len(c.labels)
	if n == 0 {
		c.close(p)
		return
	}
	l := c.labels[n-1]
	c.labels = c.labels[:n-1]
	if l.op == opLoop {
		c.close(p) // its region's paths end here; the enclosing region goes on as it entered
		return
	}
	// An exception may come from anywhere in a try_table: its catch clauses
	// branch with at most the longest path of its region so far.
	for _, d := range l.catches {
		if int(d) < len(c.labels) {
			t := &c.labels[len(c.labels)-1-int(d)]
			if t.op != opLoop {
				from := c.regions[t.region].cur
				if t.region == l.region {
					from = c.regions[l.region].max
				}
				t.best = max(t.best, from)
			}
		}
	}
	r := &c.regions[len(c.regions)-1]
	r.cur = max(r.cur, l.best, l.atIf)
}

// branches says whether op branches to the label of its immediate, and
// whether it always does.
func branches(op byte) (branch, unconditional bool) {
	switch op {
	case opBr:
		return true, true
	case opBrIf, opBrOnNull, opBrOnNonNull:
		return true, false
	}
	return false, false
}

// ends says whether op never goes on to the next instruction (br and br_table
// are branches).
func ends(op byte) bool {
	switch op {
	case opUnreachable, opReturn, opThrow, opThrowRef, opReturnCall, opReturnCallIndirect, opReturnCallRef:
		return true
	}
	return false
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
//
// The decrement's weight is written later (charges.close), as a fixed-width
// LEB128: it returns where those bytes are.
func (w *rewriter) appendCheck(b []byte) ([]byte, int) {
	b = appendU32(append(b, opGlobalGet), w.fuelGlobal)
	b = append(b, opI64Const)
	at := len(b)
	b = append(b, make([]byte, weightBytes)...)
	b = append(b, opI64Sub)
	b = appendU32(append(b, opGlobalSet), w.fuelGlobal)
	b = appendU32(append(b, opGlobalGet), w.fuelGlobal)
	b = append(b, opI64Const, 0, opI64LtS, opIf, blockTypeEmpty, opCall)
	b = appendU32(b, w.refillFunc)
	return append(b, opEnd), at
}

// bulk says whether the 0xfc instruction sub works on a range whose length
// is its last operand, an i32: memory.init, memory.copy, memory.fill,
// table.init, table.copy, table.grow and table.fill. One of them may take
// milliseconds; in a loop, charged like any instruction, a quantum of them
// would run for hours, with the Go collector of the whole process waiting.
func bulk(sub uint32) bool {
	switch sub {
	case 0x08, 0x0a, 0x0b, 0x0c, 0x0e, 0x10, 0x11:
		return true
	}
	return false
}

// bytesPerUnit is what a bulk operation gets for one unit of fuel: about the
// nanosecond a unit of other code costs, at memmove's speed.
const bytesPerUnit = 8

// appendLengthCharge appends, before a bulk operation, the charge of its
// length, which is on top of the stack and stays there:
//
//	global.set $length
//	global.get $fuel
//	global.get $length
//	i64.extend_i32_u
//	i64.const 3 ;; log2(bytesPerUnit)
//	i64.shr_u
//	i64.sub
//	global.set $fuel
//	global.get $length
//
// It does not check the counter: the next check (a loop's top, a function's
// entry) does, and refills or aborts. So a single operation runs whole, as
// long as the memory cap lets it, but a loop of them checks in every time.
func (w *rewriter) appendLengthCharge(b []byte) []byte {
	b = appendU32(append(b, opGlobalSet), w.lengthGlobal)
	b = appendU32(append(b, opGlobalGet), w.fuelGlobal)
	b = appendU32(append(b, opGlobalGet), w.lengthGlobal)
	b = append(b, opI64ExtendI32U, opI64Const, 3, opI64ShrU, opI64Sub)
	b = appendU32(append(b, opGlobalSet), w.fuelGlobal)
	return appendU32(append(b, opGlobalGet), w.lengthGlobal)
}

// weightBytes is the width of a check's weight: a signed LEB128 of five bytes holds up to 2^34-1,
// more instructions than a module of the largest size wazero accepts has.
const weightBytes = 5

// putWeight writes n as the signed LEB128 of weightBytes bytes in dst, padded with continuation
// bytes (valid LEB128, as the specification allows for an i64 immediate of up to ten bytes).
func putWeight(dst []byte, n uint64) {
	n = min(max(n, 1), 1<<34-1)
	for i := range weightBytes - 1 {
		dst[i] = byte(n&0x7f) | 0x80
		n >>= 7
	}
	dst[weightBytes-1] = byte(n) // below 0x40: the sign bit stays clear
}

// walk reads the instructions of a function body up to its final end,
// inserting a check after each loop header, charging each check for its
// region (charges), and renumbering function indices. It knows the
// immediates of every instruction wazero accepts, and reads them as wazero
// does, so the two agree on where each instruction starts.
func (w *rewriter) walk(r *reader, p *patch, c *charges) {
	for depth := 1; depth > 0; {
		if r.eof() {
			r.fail("function body ends inside a block")
			return
		}
		at := r.pos
		op := r.byte()
		c.count()
		switch op {
		case opPrefixMisc:
			if sub := r.u32(); int(sub) < len(misc) && misc[sub] != immInvalid {
				if bulk(sub) {
					p.copyTo(at)
					p.out = w.appendLengthCharge(p.out)
				}
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
				c.open(p, w)
				c.loop()
			} else {
				c.block(op, nil)
			}
		case immTryTable:
			r.blockType()
			var catches []uint32
			for n := r.count(); n > 0 && r.err == nil; n-- {
				switch kind := r.byte(); kind {
				case 0, 1: // catch, catch_ref: tag and label
					r.u32()
					catches = append(catches, r.u32())
				case 2, 3: // catch_all, catch_all_ref: label
					catches = append(catches, r.u32())
				default:
					r.fail("invalid catch kind %#x", kind)
				}
			}
			depth++
			c.block(op, catches)
		case immBrTable:
			for n := r.count(); n > 0 && r.err == nil; n-- {
				c.branch(r.u32(), false)
			}
			c.branch(r.u32(), true)
		case immFuncIdx:
			w.funcIndex(r, p)
		case immLegacyEH:
			r.fail("legacy exception handling instruction %#x is not supported (recompile with exnref: try_table)", op)
		case immInvalid:
			r.fail("invalid instruction %#x", op)
		default:
			if branch, unconditional := branches(op); branch && imm == immU32 {
				c.branch(r.u32(), unconditional)
				break
			}
			r.skip(imm)
		}
		switch {
		case op == opEnd:
			depth--
			if r.err == nil {
				c.end(p)
			}
		case op == opElse:
			c.elseOp()
		case ends(op):
			c.stop()
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
