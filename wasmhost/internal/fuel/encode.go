package fuel

import "fmt"

// rewriter re-encodes a decoded module with the fuel import, global, export
// and checks added. It parses every section it passes on, so that nothing
// reaches wazero's decoder with a count larger than its bytes.
type rewriter struct {
	*module
	refillType uint32 // the () -> () type appended for the import
	refillFunc uint32 // the import, appended after the other function imports
	fuelGlobal uint32 // the global, appended after the other globals
	// lengthGlobal holds the length of a bulk operation while it is charged
	// (appendLengthCharge), appended after the fuel global.
	lengthGlobal uint32
	locals       uint64 // declared locals seen so far, for maxLocalsPerModule
}

// requiredSections are created (empty) when the module has none, because
// the rewrite appends an entry to each of them.
var requiredSections = [...]byte{secType, secImport, secGlobal, secExport}

func (m *module) instrument() ([]byte, error) {
	w := &rewriter{
		module:     m,
		refillType: m.typeCount,
		refillFunc: m.importedFuncs,
		fuelGlobal: m.importedGlobals + m.definedGlobals,
	}
	w.lengthGlobal = w.fuelGlobal + 1
	out := make([]byte, 0, len(header)+len(m.sections)*8+w.sizeHint())
	out = append(out, header...)

	var done [len(sectionRank)]bool
	addMissing := func(beforeRank int) error {
		for _, id := range requiredSections {
			if !done[id] && sectionRank[id] < beforeRank {
				var err error
				if out, err = w.appendSection(out, section{id: id, content: []byte{0}}); err != nil {
					return err
				}
				done[id] = true
			}
		}
		return nil
	}
	for _, s := range m.sections {
		if s.id != secCustom {
			if err := addMissing(sectionRank[s.id]); err != nil {
				return nil, err
			}
			done[s.id] = true
		}
		var err error
		if out, err = w.appendSection(out, s); err != nil {
			return nil, err
		}
	}
	if err := addMissing(len(sectionRank)); err != nil {
		return nil, err
	}
	return out, nil
}

func (w *rewriter) sizeHint() int {
	n := 0
	for _, s := range w.sections {
		n += len(s.content) + len(s.name)
	}
	return n + n/8 + 256
}

// appendSection appends the rewritten section s to out.
func (w *rewriter) appendSection(out []byte, s section) ([]byte, error) {
	var content []byte
	var err error
	switch s.id {
	case secCustom:
		switch {
		case s.name == "name":
			content, err = w.names(s)
		case isOffsetBound(s.name):
			return out, nil // would describe the old code layout
		default:
			content = s.content
		}
		if err == nil {
			content = append(appendName(nil, s.name), content...)
		}
	case secType:
		content, err = w.types(s)
	case secImport:
		content, err = w.imports(s)
	case secFunction:
		content = s.content // decoded by decodeModule
	case secTable:
		content, err = w.tables(s)
	case secMemory:
		content, err = w.raw(s, func(r *reader) { r.limits() })
	case secTag:
		content, err = w.raw(s, func(r *reader) {
			if attr := r.byte(); attr != 0 {
				r.fail("invalid tag attribute %#x", attr)
			}
			r.u32()
		})
	case secGlobal:
		content, err = w.globals(s)
	case secExport:
		content, err = w.exports(s)
	case secStart:
		content, err = w.start(s)
	case secElement:
		content, err = w.elements(s)
	case secDataCount:
		r := reader{buf: s.content, base: s.offset}
		r.u32()
		r.expectEnd("data count section")
		content, err = s.content, r.err
	case secCode:
		content, err = w.code(s)
	case secData:
		content, err = w.data(s)
	}
	if err != nil {
		if s.id == secCustom {
			return nil, fmt.Errorf("custom section %q: %w", s.name, err)
		}
		return nil, fmt.Errorf("section %s: %w", sectionNames[s.id], err)
	}
	out = append(out, s.id)
	out = appendU32(out, uint32(len(content)))
	return append(out, content...), nil
}

// patch copies a section or function body to out, replacing ranges that
// hold moved function indices or that need a fuel check after them.
type patch struct {
	in   []byte
	out  []byte
	done int // in[:done] is already in out
}

// copyTo copies the input up to pos.
func (p *patch) copyTo(pos int) {
	p.out = append(p.out, p.in[p.done:pos]...)
	p.done = pos
}

func (p *patch) finish() []byte {
	p.copyTo(len(p.in))
	return p.out
}

// grow starts a vector section whose element count grows by one: the new
// count, then (after finish) the old elements. The caller appends the new
// element.
func grow(r *reader, p *patch) uint32 { return growBy(r, p, 1) }

// growBy is grow for k new elements.
func growBy(r *reader, p *patch, k uint32) uint32 {
	n := r.count()
	p.out = appendU32(p.out, n+k)
	p.done = r.pos
	return n
}

// funcIndex reads a function index and renumbers it: the added import
// takes index importedFuncs, so every defined function moves up by one.
func (w *rewriter) funcIndex(r *reader, p *patch) {
	start := r.pos
	idx := r.u32()
	if r.err != nil {
		return
	}
	moved, ok := w.newFuncIndex(idx)
	if !ok {
		r.fail("function index %d out of range (%d functions)", idx, w.importedFuncs+w.definedFuncs)
		return
	}
	if moved != idx {
		p.copyTo(start)
		p.out = appendU32(p.out, moved)
		p.done = r.pos
	}
}

// newFuncIndex returns the index that function idx has after the rewrite,
// or false if the module has no function idx.
func (w *rewriter) newFuncIndex(idx uint32) (uint32, bool) {
	switch {
	case idx < w.importedFuncs:
		return idx, true
	case idx-w.importedFuncs < w.definedFuncs:
		return idx + 1, true
	}
	return 0, false
}

// constExpr reads a constant expression up to its end, renumbering ref.func.
func (w *rewriter) constExpr(r *reader, p *patch) {
	for r.err == nil {
		switch op := r.byte(); op {
		case opEnd:
			return
		case opI32Const:
			r.signed(32)
		case opI64Const:
			r.signed(64)
		case opF32Const:
			r.bytes(4)
		case opF64Const:
			r.bytes(8)
		case opGlobalGet:
			r.u32()
		case opRefNull:
			r.refNullType()
		case opRefFunc:
			w.funcIndex(r, p)
		case opI32Add, opI32Sub, opI32Mul, opI64Add, opI64Sub, opI64Mul: // extended-const
		case opPrefixVector:
			if sub := r.byte(); sub != opVecV128Const && r.err == nil {
				r.fail("vector opcode %#x in a constant expression", sub)
			}
			r.bytes(16)
		default:
			if r.err == nil {
				r.fail("opcode %#x in a constant expression", op)
			}
		}
	}
}

// raw checks a vector section whose elements do not change.
func (w *rewriter) raw(s section, element func(r *reader)) ([]byte, error) {
	r := reader{buf: s.content, base: s.offset}
	for n := r.count(); n > 0 && r.err == nil; n-- {
		element(&r)
	}
	r.expectEnd("section")
	return s.content, r.err
}

func (w *rewriter) types(s section) ([]byte, error) {
	r := reader{buf: s.content, base: s.offset}
	p := patch{in: s.content}
	grow(&r, &p) // the entries were checked by decodeTypes
	return append(p.finish(), typeFunc, 0, 0), r.err
}

func (w *rewriter) imports(s section) ([]byte, error) {
	r := reader{buf: s.content, base: s.offset}
	p := patch{in: s.content}
	grow(&r, &p) // the entries were checked by decodeImports
	out := p.finish()
	out = appendName(out, ImportModule)
	out = appendName(out, ImportName)
	out = append(out, externFunc)
	return appendU32(out, w.refillType), r.err
}

func (w *rewriter) tables(s section) ([]byte, error) {
	r := reader{buf: s.content, base: s.offset}
	p := patch{in: s.content}
	for n := r.count(); n > 0 && r.err == nil; n-- {
		withInit := r.peek() == 0x40 // typed function references: table with an initializer
		if withInit {
			r.pos++
			if b := r.byte(); b != 0 && r.err == nil {
				r.fail("invalid table prefix 0x40 %#x", b)
			}
		}
		r.refType()
		r.limits()
		if withInit {
			w.constExpr(&r, &p)
		}
	}
	r.expectEnd("table section")
	return p.finish(), r.err
}

func (w *rewriter) globals(s section) ([]byte, error) {
	r := reader{buf: s.content, base: s.offset}
	p := patch{in: s.content}
	for n := growBy(&r, &p, 2); n > 0 && r.err == nil; n-- {
		r.valueType()
		if mut := r.byte(); mut > 1 && r.err == nil {
			r.fail("invalid global mutability %#x", mut)
		}
		w.constExpr(&r, &p)
	}
	r.expectEnd("global section")
	// (global (mut i64) (i64.const 0)): the first check calls refill at once;
	// then (global (mut i32) (i32.const 0)), the length.
	return append(p.finish(), typeI64, 1, opI64Const, 0, opEnd, typeI32, 1, opI32Const, 0, opEnd), r.err
}

func (w *rewriter) exports(s section) ([]byte, error) {
	r := reader{buf: s.content, base: s.offset}
	p := patch{in: s.content}
	for n := grow(&r, &p); n > 0 && r.err == nil; n-- {
		if name := r.name(); name == ExportGlobal && r.err == nil {
			r.fail("module already exports %q", name)
		}
		switch kind := r.byte(); kind {
		case externFunc:
			w.funcIndex(&r, &p)
		case externTable, externMemory, externGlobal, externTag:
			r.u32()
		default:
			r.fail("invalid export kind %#x", kind)
		}
	}
	r.expectEnd("export section")
	out := appendName(p.finish(), ExportGlobal)
	out = append(out, externGlobal)
	return appendU32(out, w.fuelGlobal), r.err
}

func (w *rewriter) start(s section) ([]byte, error) {
	r := reader{buf: s.content, base: s.offset}
	p := patch{in: s.content}
	w.funcIndex(&r, &p)
	r.expectEnd("start section")
	return p.finish(), r.err
}

// elements rewrites the element section, in all eight segment encodings.
func (w *rewriter) elements(s section) ([]byte, error) {
	r := reader{buf: s.content, base: s.offset}
	p := patch{in: s.content}
	funcIndices := func() {
		for n := r.count(); n > 0 && r.err == nil; n-- {
			w.funcIndex(&r, &p)
		}
	}
	exprs := func() {
		for n := r.count(); n > 0 && r.err == nil; n-- {
			w.constExpr(&r, &p)
		}
	}
	elemKind := func() {
		if k := r.byte(); k != 0 && r.err == nil {
			r.fail("invalid element kind %#x", k)
		}
	}
	for n := r.count(); n > 0 && r.err == nil; n-- {
		switch flags := r.u32(); flags {
		case 0: // active, table 0, offset, vec(funcidx)
			w.constExpr(&r, &p)
			funcIndices()
		case 1, 3: // passive or declarative, elemkind, vec(funcidx)
			elemKind()
			funcIndices()
		case 2: // active, table, offset, elemkind, vec(funcidx)
			r.u32()
			w.constExpr(&r, &p)
			elemKind()
			funcIndices()
		case 4: // active, table 0, offset, vec(expr)
			w.constExpr(&r, &p)
			exprs()
		case 5, 7: // passive or declarative, reftype, vec(expr)
			r.refType()
			exprs()
		case 6: // active, table, offset, reftype, vec(expr)
			r.u32()
			w.constExpr(&r, &p)
			r.refType()
			exprs()
		default:
			r.fail("invalid element segment flags %#x", flags)
		}
	}
	r.expectEnd("element section")
	return p.finish(), r.err
}

func (w *rewriter) data(s section) ([]byte, error) {
	r := reader{buf: s.content, base: s.offset}
	p := patch{in: s.content}
	for n := r.count(); n > 0 && r.err == nil; n-- {
		switch flags := r.u32(); flags {
		case 0:
			w.constExpr(&r, &p)
		case 1:
		case 2:
			r.u32()
			w.constExpr(&r, &p)
		default:
			r.fail("invalid data segment flags %#x", flags)
		}
		r.bytes(r.u32())
	}
	r.expectEnd("data section")
	return p.finish(), r.err
}
