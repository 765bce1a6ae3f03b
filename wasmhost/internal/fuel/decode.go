package fuel

import (
	"bytes"
	"fmt"
	"strings"
)

// Section ids of the binary format.
const (
	secCustom    = 0
	secType      = 1
	secImport    = 2
	secFunction  = 3
	secTable     = 4
	secMemory    = 5
	secGlobal    = 6
	secExport    = 7
	secStart     = 8
	secElement   = 9
	secCode      = 10
	secData      = 11
	secDataCount = 12
	secTag       = 13
)

// sectionRank orders the non-custom sections as the binary format requires.
var sectionRank = [...]int{
	secType: 1, secImport: 2, secFunction: 3, secTable: 4, secMemory: 5, secTag: 6, secGlobal: 7,
	secExport: 8, secStart: 9, secElement: 10, secDataCount: 11, secCode: 12, secData: 13,
}

var sectionNames = [...]string{
	"custom", "type", "import", "function", "table", "memory", "global",
	"export", "start", "element", "code", "data", "data count", "tag",
}

// Limits on locals. wazero materialises one 8-byte entry per declared local
// before validating anything, and five bytes can declare four billion of
// them, so a module has to pass these bounds before it reaches wazero.
// 50000 per function is the limit of the JS embedding API (and V8).
const (
	maxLocalsPerFunction = 50_000
	maxLocalsPerModule   = 1 << 22
)

var header = []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}

type section struct {
	id      byte
	name    string // custom sections only
	offset  int    // of content in the module
	content []byte // after the id and size; for custom sections, after the name
}

// module is the part of a decoded module that the rewrite needs before it
// walks the sections in order.
type module struct {
	sections []section

	typeCount       uint32 // types, counting each member of a rec group
	importedFuncs   uint32
	importedGlobals uint32
	definedFuncs    uint32
	definedGlobals  uint32
}

// decodeModule splits the module into sections and reads the type, import,
// function and global counts. The remaining sections are parsed while they
// are rewritten.
func decodeModule(wasm []byte) (*module, error) {
	if !bytes.HasPrefix(wasm, header) {
		return nil, fmt.Errorf("not a WebAssembly 1.0 binary module (bad magic or version)")
	}
	m := &module{}
	r := reader{buf: wasm, pos: len(header)}
	lastRank := 0
	for !r.eof() {
		id := r.byte()
		size := r.u32()
		offset := r.pos
		content := r.bytes(size)
		if r.err != nil {
			return nil, fmt.Errorf("section header: %w", r.err)
		}
		s := section{id: id, offset: offset, content: content}
		if id == secCustom {
			cr := reader{buf: content, base: offset}
			s.name = cr.name()
			if cr.err != nil {
				return nil, fmt.Errorf("custom section name: %w", cr.err)
			}
			s.content, s.offset = content[cr.pos:], offset+cr.pos
			m.sections = append(m.sections, s)
			continue
		}
		if int(id) >= len(sectionRank) {
			return nil, fmt.Errorf("offset %#x: invalid section id %d", offset, id)
		}
		if sectionRank[id] <= lastRank {
			return nil, fmt.Errorf("offset %#x: section %s is out of order or repeated", offset, sectionNames[id])
		}
		lastRank = sectionRank[id]
		m.sections = append(m.sections, s)
	}

	for _, s := range m.sections {
		var err error
		switch s.id {
		case secType:
			err = m.decodeTypes(s)
		case secImport:
			err = m.decodeImports(s)
		case secFunction:
			err = m.decodeFunctions(s)
		case secGlobal:
			r := reader{buf: s.content, base: s.offset}
			m.definedGlobals = r.count()
			err = r.err
		}
		if err != nil {
			return nil, fmt.Errorf("section %s: %w", sectionNames[s.id], err)
		}
	}
	return m, nil
}

func (m *module) decodeTypes(s section) error {
	r := reader{buf: s.content, base: s.offset}
	n := r.count()
	for i := uint32(0); i < n && r.err == nil; i++ {
		members := uint32(1)
		if r.peek() == typeRecGroup {
			r.pos++
			members = r.count()
		}
		for j := uint32(0); j < members && r.err == nil; j++ {
			if form := r.byte(); form != typeFunc && r.err == nil {
				r.fail("unsupported type form %#x", form)
			}
			for params := r.count(); params > 0 && r.err == nil; params-- {
				r.valueType()
			}
			for results := r.count(); results > 0 && r.err == nil; results-- {
				r.valueType()
			}
			m.typeCount++
		}
	}
	r.expectEnd("type section")
	return r.err
}

func (m *module) decodeImports(s section) error {
	r := reader{buf: s.content, base: s.offset}
	n := r.count()
	for i := uint32(0); i < n && r.err == nil; i++ {
		module, name := r.name(), r.name()
		if module == ImportModule && r.err == nil {
			return fmt.Errorf("module already imports %s.%s: it is instrumented already or uses a reserved name", module, name)
		}
		switch kind := r.byte(); kind {
		case externFunc:
			r.u32()
			m.importedFuncs++
		case externTable:
			if r.peek() == 0x40 {
				r.fail("import %s.%s: a table import cannot have an initializer", module, name)
			}
			r.refType()
			r.limits()
		case externMemory:
			r.limits()
		case externGlobal:
			r.valueType()
			r.byte()
			m.importedGlobals++
		case externTag:
			r.byte()
			r.u32()
		default:
			r.fail("import %s.%s: invalid kind %#x", module, name, kind)
		}
	}
	r.expectEnd("import section")
	return r.err
}

func (m *module) decodeFunctions(s section) error {
	r := reader{buf: s.content, base: s.offset}
	m.definedFuncs = r.count()
	for i := uint32(0); i < m.definedFuncs && r.err == nil; i++ {
		if t := r.u32(); t >= m.typeCount && r.err == nil {
			r.fail("function %d has type %d of %d", i, t, m.typeCount)
		}
	}
	r.expectEnd("function section")
	return r.err
}

// Kinds of imports and exports.
const (
	externFunc   = 0
	externTable  = 1
	externMemory = 2
	externGlobal = 3
	externTag    = 4
)

// isOffsetBound reports whether a custom section describes code by byte
// offsets (DWARF, relocations, linking metadata), which the rewrite moves.
func isOffsetBound(name string) bool {
	return strings.HasPrefix(name, ".debug_") || strings.HasPrefix(name, "reloc.") ||
		name == "linking" || name == "sourceMappingURL" || name == "external_debug_info"
}
