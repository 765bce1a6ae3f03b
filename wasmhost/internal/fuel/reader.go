package fuel

import (
	"errors"
	"fmt"
)

var errEOF = errors.New("unexpected end")

// reader decodes the primitive encodings of the WebAssembly binary format
// from an in-memory buffer.
//
// Errors are sticky: after the first failure every read returns a zero value
// and r.err keeps the first error, so decoders check r.err once per item
// instead of after every read. Every loop driven by a decoded count must
// check r.err (or r.eof) so that it stops once the input is exhausted.
type reader struct {
	buf  []byte
	pos  int
	base int // offset of buf in the module, for error messages
	err  error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("offset %#x: "+format, append([]any{r.base + r.pos}, args...)...)
	}
}

// eof reports whether there is nothing left to read, also after an error.
func (r *reader) eof() bool { return r.err != nil || r.pos >= len(r.buf) }

func (r *reader) remaining() int { return len(r.buf) - r.pos }

func (r *reader) byte() byte {
	if r.err != nil {
		return 0
	}
	if r.pos >= len(r.buf) {
		r.fail("%v", errEOF)
		return 0
	}
	b := r.buf[r.pos]
	r.pos++
	return b
}

// bytes returns the next n bytes, aliasing the buffer.
func (r *reader) bytes(n uint32) []byte {
	if r.err != nil {
		return nil
	}
	if uint64(n) > uint64(r.remaining()) {
		r.fail("%v: need %d bytes, have %d", errEOF, n, r.remaining())
		return nil
	}
	b := r.buf[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return b
}

// u32 reads an unsigned LEB128 value of at most 32 bits.
func (r *reader) u32() uint32 {
	var v uint32
	for i := 0; i < 5; i++ {
		b := r.byte()
		if r.err != nil {
			return 0
		}
		if i == 4 && b&0xf0 != 0 {
			r.fail("u32 overflows 32 bits")
			return 0
		}
		v |= uint32(b&0x7f) << (7 * i)
		if b&0x80 == 0 {
			return v
		}
	}
	return v // unreachable: the fifth byte either fails or ends the value
}

// signed reads a signed LEB128 value of at most bits bits (32, 33 or 64),
// sign-extended to int64. It rejects encodings longer than ceil(bits/7)
// bytes, as wazero does for s32 and s64. (wazero ends an s33 after five bytes
// even if the fifth has the continuation bit; failing there instead keeps
// the walker from ever reading such bytes differently.)
func (r *reader) signed(bits int) int64 {
	maxLen := (bits + 6) / 7
	var v int64
	shift := 0
	for i := 0; i < maxLen; i++ {
		b := r.byte()
		if r.err != nil {
			return 0
		}
		v |= int64(b&0x7f) << shift
		shift += 7
		if b&0x80 == 0 {
			if shift < 64 && b&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
	}
	r.fail("s%d is longer than %d bytes", bits, maxLen)
	return 0
}

// count reads a vector length. A vector element takes at least one byte, so
// a count above the bytes left is malformed; checking it here keeps every
// later allocation sized by the input (wazero's decoder allocates from the
// declared count before reading the elements).
func (r *reader) count() uint32 {
	n := r.u32()
	if r.err == nil && uint64(n) > uint64(r.remaining()) {
		r.fail("vector of %d elements in %d bytes", n, r.remaining())
		return 0
	}
	return n
}

// name reads a length-prefixed UTF-8 name.
func (r *reader) name() string {
	n := r.u32()
	return string(r.bytes(n))
}

// expectEnd fails unless the whole buffer was consumed.
func (r *reader) expectEnd(what string) {
	if r.err == nil && r.pos != len(r.buf) {
		r.fail("%d trailing bytes in %s", len(r.buf)-r.pos, what)
	}
}

func appendU32(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func appendName(b []byte, s string) []byte {
	return append(appendU32(b, uint32(len(s))), s...)
}

// valueType reads a value type as wazero accepts it: one byte, or a
// reference type prefix (0x63 or 0x64) followed by an s33 heap type.
func (r *reader) valueType() {
	switch b := r.byte(); {
	case r.err != nil:
	case b == refNullPrefix || b == refPrefix:
		r.signed(33)
	case !isValueType(b):
		r.fail("invalid value type %#x", b)
	}
}

// refType reads the reference type of a table or element segment.
func (r *reader) refType() {
	switch b := r.byte(); b {
	case refNullPrefix, refPrefix:
		r.signed(33)
	case 0x70, 0x6f: // funcref, externref
	default:
		r.fail("invalid reference type %#x", b)
	}
}

// blockType reads the type of a block, loop, if or try_table: an s33 that is
// either a type index, 0x40 (empty) or a value type; a reference value type
// takes a second s33 for its heap type.
func (r *reader) blockType() {
	switch r.signed(33) {
	case blockTypeRefNull, blockTypeRef:
		r.signed(33)
	}
}

// refNullType reads the heap type of ref.null the way wazero does: funcref,
// externref and exnref are one byte, anything else is a type index (u32).
func (r *reader) refNullType() {
	switch r.peek() {
	case 0x70, 0x6f, 0x69:
		r.pos++
	default:
		r.u32()
	}
}

// limits reads the limits of a memory or table (flags 0 to 3: max present,
// shared).
func (r *reader) limits() {
	flags := r.byte()
	if flags > 3 {
		r.fail("unsupported limits flags %#x", flags)
		return
	}
	r.u32()
	if flags&1 != 0 {
		r.u32()
	}
}

// peek returns the next byte without consuming it.
func (r *reader) peek() byte {
	if r.err == nil && r.pos >= len(r.buf) {
		r.fail("%v", errEOF)
	}
	if r.err != nil {
		return 0
	}
	return r.buf[r.pos]
}
