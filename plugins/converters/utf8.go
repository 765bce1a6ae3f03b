package main

import "unicode/utf8"

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
