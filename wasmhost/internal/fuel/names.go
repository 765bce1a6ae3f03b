package fuel

import "fmt"

// Subsections of the name section (see the extended name section proposal).
const (
	nameModule    = 0
	nameFunctions = 1 // function index -> name
	nameLocals    = 2 // function index -> local index -> name
	nameLabels    = 3 // function index -> label index -> name
	nameLast      = 11
)

// names rewrites the name section so that function names follow their
// functions to their new indices. wazero uses them in stack traces.
// Subsections keyed by function index are renumbered, the module name and
// the subsections keyed by other index spaces (which do not move) are kept,
// and unknown subsections are dropped. A malformed name section is an error,
// as it is for wazero.
func (w *rewriter) names(s section) ([]byte, error) {
	r := reader{buf: s.content, base: s.offset}
	var out []byte
	seen := map[byte]bool{}
	for !r.eof() {
		id := r.byte()
		size := r.u32()
		offset := r.pos
		sub := r.bytes(size)
		if r.err != nil {
			break
		}
		if seen[id] {
			return nil, fmt.Errorf("subsection %d repeated", id)
		}
		seen[id] = true
		sr := reader{buf: sub, base: s.offset + offset}
		var content []byte
		switch {
		case id == nameModule:
			sr.name()
			content = sub
		case id == nameFunctions:
			content = w.nameMap(&sr, true)
		case id == nameLocals || id == nameLabels:
			content = w.indirectNameMap(&sr)
		case id <= nameLast: // keyed by index spaces that do not move
			content = sub
			sr.pos = len(sub)
		default:
			continue
		}
		sr.expectEnd(fmt.Sprintf("name subsection %d", id))
		if sr.err != nil {
			return nil, fmt.Errorf("subsection %d: %w", id, sr.err)
		}
		out = append(out, id)
		out = appendU32(out, uint32(len(content)))
		out = append(out, content...)
	}
	return out, r.err
}

// nameMap reads a name map and returns it re-encoded. With funcKeys, its
// keys are function indices: they are renumbered, and entries for functions
// that do not exist are dropped.
func (w *rewriter) nameMap(r *reader, funcKeys bool) []byte {
	var entries []byte
	kept := uint32(0)
	for n := r.count(); n > 0 && r.err == nil; n-- {
		idx, name := r.u32(), r.name()
		if funcKeys {
			var ok bool
			if idx, ok = w.newFuncIndex(idx); !ok {
				continue
			}
		}
		entries = appendName(appendU32(entries, idx), name)
		kept++
	}
	return append(appendU32(nil, kept), entries...)
}

// indirectNameMap reads a map from function index to name map (local or
// label names) and returns it re-encoded with the function indices moved.
func (w *rewriter) indirectNameMap(r *reader) []byte {
	var entries []byte
	kept := uint32(0)
	for n := r.count(); n > 0 && r.err == nil; n-- {
		idx := r.u32()
		names := w.nameMap(r, false)
		if idx, ok := w.newFuncIndex(idx); ok {
			entries = append(appendU32(entries, idx), names...)
			kept++
		}
	}
	return append(appendU32(nil, kept), entries...)
}
