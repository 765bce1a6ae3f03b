package connect

import "unicode/utf8"

// AppendJSONString appends s to dst as a JSON string, byte for byte as Jackson writes it.
//
// Kafka Connect's JsonConverter and the records of Connect's internal topics are written with
// Jackson, and Java workers, tools and the offsets topic (keyed by the raw bytes) compare what we
// write with what Jackson would write. encoding/json differs from Jackson in its escaping: it
// escapes <, >, & (without SetEscapeHTML(false)), U+2028 and U+2029, and writes lowercase hex. So
// the host's stores, the JsonConverter plugin and this package's Encode all write strings here.
//
// Like Jackson, it escapes only '"', '\\' and the control characters below U+0020: \b \t \n \f \r
// in their short forms, the others as \u00XX with uppercase hex. Everything else, DEL and non-ASCII
// included, is written as is. Invalid UTF-8 becomes U+FFFD, as it would once Java decoded the bytes
// to a String.
func AppendJSONString[T string | []byte](dst []byte, s T) []byte {
	const hex = "0123456789ABCDEF"
	dst = append(dst, '"')
	start := 0 // s[start:i] is still to be copied as is
	for i := 0; i < len(s); {
		b := s[i]
		if b >= 0x20 && b != '"' && b != '\\' && b < utf8.RuneSelf {
			i++
			continue
		}
		if b >= utf8.RuneSelf {
			r, size := decodeRune(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
			i++
			start = i
			continue
		}
		dst = append(dst, s[start:i]...)
		switch b {
		case '"', '\\':
			dst = append(dst, '\\', b)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\r':
			dst = append(dst, '\\', 'r')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// decodeRune is utf8.DecodeRune for strings and byte slices alike, without converting either.
func decodeRune[T string | []byte](s T) (rune, int) {
	n := len(s)
	if n == 0 {
		return utf8.RuneError, 0
	}
	cont := func(i int, lo, hi byte) bool { return i < n && s[i] >= lo && s[i] <= hi }
	b0 := s[0]
	switch {
	case b0 < 0x80:
		return rune(b0), 1
	case b0 < 0xC2:
		return utf8.RuneError, 1
	case b0 < 0xE0:
		if !cont(1, 0x80, 0xBF) {
			return utf8.RuneError, 1
		}
		return rune(b0&0x1F)<<6 | rune(s[1]&0x3F), 2
	case b0 < 0xF0:
		lo, hi := byte(0x80), byte(0xBF)
		if b0 == 0xE0 {
			lo = 0xA0
		} else if b0 == 0xED {
			hi = 0x9F
		}
		if !cont(1, lo, hi) || !cont(2, 0x80, 0xBF) {
			return utf8.RuneError, 1
		}
		return rune(b0&0x0F)<<12 | rune(s[1]&0x3F)<<6 | rune(s[2]&0x3F), 3
	case b0 < 0xF5:
		lo, hi := byte(0x80), byte(0xBF)
		if b0 == 0xF0 {
			lo = 0x90
		} else if b0 == 0xF4 {
			hi = 0x8F
		}
		if !cont(1, lo, hi) || !cont(2, 0x80, 0xBF) || !cont(3, 0x80, 0xBF) {
			return utf8.RuneError, 1
		}
		return rune(b0&0x07)<<18 | rune(s[1]&0x3F)<<12 | rune(s[2]&0x3F)<<6 | rune(s[3]&0x3F), 4
	}
	return utf8.RuneError, 1
}
