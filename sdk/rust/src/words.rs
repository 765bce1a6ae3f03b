//! JSON text eight bytes at a time: finding where the plain part of a string ends, comparing
//! bytes, and writing a JSON string as Jackson (Kafka's JsonConverter) does. In a wasm guest every
//! loop iteration is paid for twice, once for the work and once for the CPU bound's fuel count, so
//! the per-record text work of the converters and transformations goes through these.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// Not zero if any of the 8 bytes of `w` is below 0x20, a '"' or a '\\': a byte that ends or
/// interrupts the plain text of a JSON string. A mask rather than a bool, so that two words can be
/// tested with one branch.
#[inline]
fn special(w: u64) -> u64 {
    let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let below_space = w.wrapping_sub(ONES * 0x20) & !w & HIGH;
    let quote = has_zero(w ^ (ONES * b'"' as u64));
    let backslash = has_zero(w ^ (ONES * b'\\' as u64));
    below_space | quote | backslash
}

/// Not zero for `special` bytes or a byte that is not ASCII: what `append_json_string` cannot
/// copy as it is.
#[inline]
fn needs_care(w: u64) -> u64 {
    special(w) | (w & HIGH)
}

#[inline]
fn word(b: &[u8], i: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[i..i + 8]);
    u64::from_le_bytes(w)
}

/// Whether `a` and `b` are equal, comparing 8 bytes per step (memcmp is a byte loop in a guest).
pub fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i + 8 <= a.len() {
        if word(a, i) != word(b, i) {
            return false;
        }
        i += 8;
    }
    a[i..] == b[i..]
}

/// The index of the first '"', '\\' or control character in `b` from `i` on (or `b.len()`).
#[inline]
pub fn plain_end(b: &[u8], mut i: usize) -> usize {
    // 16 bytes per iteration where it can, in one loop: in a guest each iteration, and each loop
    // entered, also pays the fuel check.
    loop {
        if i + 16 <= b.len() && special(word(b, i)) | special(word(b, i + 8)) == 0 {
            i += 16;
        } else if i + 8 <= b.len() && special(word(b, i)) == 0 {
            i += 8;
        } else {
            break;
        }
    }
    while i < b.len() && b[i] != b'"' && b[i] != b'\\' && b[i] >= 0x20 {
        i += 1;
    }
    i
}

/// The length of the valid UTF-8 sequence at the start of `s`, or `None` if it starts with an
/// invalid byte (Go's utf8.DecodeRune returning RuneError, 1).
pub fn utf8_len(s: &[u8]) -> Option<usize> {
    let cont = |i: usize, lo: u8, hi: u8| s.get(i).map_or(false, |&c| c >= lo && c <= hi);
    let b0 = *s.first()?;
    match b0 {
        0x00..=0x7f => Some(1),
        0xc2..=0xdf if cont(1, 0x80, 0xbf) => Some(2),
        0xe0..=0xef => {
            let (lo, hi) = match b0 {
                0xe0 => (0xa0, 0xbf),
                0xed => (0x80, 0x9f),
                _ => (0x80, 0xbf),
            };
            if cont(1, lo, hi) && cont(2, 0x80, 0xbf) {
                Some(3)
            } else {
                None
            }
        }
        0xf0..=0xf4 => {
            let (lo, hi) = match b0 {
                0xf0 => (0x90, 0xbf),
                0xf4 => (0x80, 0x8f),
                _ => (0x80, 0xbf),
            };
            if cont(1, lo, hi) && cont(2, 0x80, 0xbf) && cont(3, 0x80, 0xbf) {
                Some(4)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// U+FFFD, what an invalid UTF-8 byte becomes once Java decodes the bytes to a String.
pub const REPLACEMENT: &[u8] = "\u{fffd}".as_bytes();

/// Appends `s` to `out` as a JSON string, byte for byte as Jackson (Kafka's JsonConverter) writes
/// it: only '"', '\\' and the control characters below U+0020 are escaped (\b \t \n \f \r short,
/// the others as \u00XX with upper-case hex); everything else is copied, and each invalid UTF-8
/// byte becomes U+FFFD. Eight bytes are checked per step, so plain text costs little more than a
/// copy.
pub fn append_json_string(out: &mut Vec<u8>, s: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    out.reserve(s.len() + 2);
    out.push(b'"');
    let mut start = 0; // s[start..i] is still to be copied
    let mut i = 0;
    while i < s.len() {
        // 16 bytes per iteration where it can: in a guest each iteration also pays the fuel check.
        if i + 16 <= s.len() && needs_care(word(s, i)) | needs_care(word(s, i + 8)) == 0 {
            i += 16;
            continue;
        }
        if i + 8 <= s.len() {
            if needs_care(word(s, i)) == 0 {
                i += 8;
                continue;
            }
        } else if s.len() >= 8 && needs_care(word(s, s.len() - 8)) == 0 {
            // The last few bytes, in the word that ends the string (it overlaps bytes already
            // looked at): a line of text rarely ends on a word.
            i = s.len();
            continue;
        }
        let c = s[i];
        if c >= 0x20 && c != b'"' && c != b'\\' && c < 0x80 {
            i += 1;
            continue;
        }
        if c >= 0x80 {
            if let Some(n) = utf8_len(&s[i..]) {
                i += n;
                continue;
            }
            out.extend_from_slice(&s[start..i]);
            out.extend_from_slice(REPLACEMENT);
            i += 1;
            start = i;
            continue;
        }
        out.extend_from_slice(&s[start..i]);
        match c {
            b'"' | b'\\' => out.extend_from_slice(&[b'\\', c]),
            0x08 => out.extend_from_slice(b"\\b"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            0x0c => out.extend_from_slice(b"\\f"),
            b'\r' => out.extend_from_slice(b"\\r"),
            _ => out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[(c >> 4) as usize], HEX[(c & 15) as usize]]),
        }
        i += 1;
        start = i;
    }
    out.extend_from_slice(&s[start..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings() {
        let mut out = Vec::new();
        append_json_string(&mut out, "a\"b\\c\n\t\x01</>\u{2028}é and a longer tail of text".as_bytes());
        assert_eq!(String::from_utf8(out).unwrap(), "\"a\\\"b\\\\c\\n\\t\\u0001</>\u{2028}é and a longer tail of text\"");
        let mut out = Vec::new();
        append_json_string(&mut out, b"abcdefgh\xe2\x82ijklmnop\xff");
        assert_eq!(String::from_utf8(out).unwrap(), "\"abcdefgh\u{fffd}\u{fffd}ijklmnop\u{fffd}\"");
    }

    /// A special byte anywhere in strings of every length around the word sizes, the last few
    /// bytes included, is escaped: what the word steps skip must be plain.
    #[test]
    fn json_strings_special_anywhere() {
        for len in 0..40 {
            for at in 0..len {
                for (c, esc) in [(b'"', &b"\\\""[..]), (b'\n', &b"\\n"[..]), (0xff, "\u{fffd}".as_bytes())] {
                    let mut s = vec![b'a'; len];
                    s[at] = c;
                    let mut want = b"\"".to_vec();
                    want.extend_from_slice(&s[..at]);
                    want.extend_from_slice(esc);
                    want.extend_from_slice(&s[at + 1..]);
                    want.push(b'"');
                    let mut out = Vec::new();
                    append_json_string(&mut out, &s);
                    assert_eq!(String::from_utf8_lossy(&out), String::from_utf8_lossy(&want), "len {} at {}", len, at);
                }
            }
        }
    }

    #[test]
    fn plain_ends_and_equality() {
        assert_eq!(plain_end(b"0123456789abcdef\"x", 0), 16);
        assert_eq!(plain_end(b"01\\3", 1), 2);
        assert!(same(b"0123456789abcdefg", b"0123456789abcdefg"));
        assert!(!same(b"0123456789abcdefg", b"0123456789abcdefh"));
        assert_eq!(utf8_len("é".as_bytes()), Some(2));
        assert_eq!(utf8_len(b"\xed\xa0\x80"), None); // a surrogate
    }
}
