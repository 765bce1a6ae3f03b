//! JSON text a word (eight bytes) at a time, four words a step: finding where the plain part of
//! a string ends, comparing bytes, and writing a JSON string as Jackson (Kafka's JsonConverter)
//! does. In a wasm guest every loop iteration is paid for twice, once for the work and once for
//! the CPU bound's fuel count, so the per-record text work of the converters and transformations
//! goes through these.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// Not zero if any of the 8 bytes of `w` is below 0x20, a '"' or a '\\': a byte that ends or
/// interrupts the plain text of a JSON string. A mask rather than a bool, so that words can be
/// tested with one branch. Per byte, the high bit of (w - 0x20) & !w says w < 0x20, and that of
/// (x - 1) & !x says x == 0, for x = w ^ '"' and w ^ '\\'; those x have the high bits of `w` ('"'
/// and '\\' are below 0x80), so the three share one `!w & HIGH`.
#[inline]
fn special(w: u64) -> u64 {
    (w.wrapping_sub(ONES * 0x20) | (w ^ (ONES * b'"' as u64)).wrapping_sub(ONES) | (w ^ (ONES * b'\\' as u64)).wrapping_sub(ONES)) & !w & HIGH
}

/// Not zero for `special` bytes or a byte that is not ASCII: what `append_json_string` cannot
/// copy as it is. (`special(w) | w & HIGH`, which is this.)
#[inline]
fn needs_care(w: u64) -> u64 {
    (w.wrapping_sub(ONES * 0x20) | (w ^ (ONES * b'"' as u64)).wrapping_sub(ONES) | (w ^ (ONES * b'\\' as u64)).wrapping_sub(ONES) | w) & HIGH
}

/// Whether `c` is one of the bytes `special` marks.
#[inline]
fn is_special(c: u8) -> bool {
    c == b'"' || c == b'\\' || c < 0x20
}

#[inline]
fn word(b: &[u8], i: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[i..i + 8]);
    u64::from_le_bytes(w)
}

#[inline]
fn half(b: &[u8], i: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[i..i + 4]);
    u32::from_le_bytes(w)
}

/// The index in a word of the first byte a mask of `special` or `needs_care` marks: the lowest
/// set bit is exact (a borrow only carries a false mark upwards, from a byte marked rightly).
#[inline]
fn first_marked(mask: u64) -> usize {
    (mask.trailing_zeros() / 8) as usize
}

/// The index in 32 bytes of the first byte marked in the masks of its four words (one is not zero).
#[inline]
fn first_of4(m: [u64; 4]) -> usize {
    if m[0] != 0 {
        first_marked(m[0])
    } else if m[1] != 0 {
        8 + first_marked(m[1])
    } else if m[2] != 0 {
        16 + first_marked(m[2])
    } else {
        24 + first_marked(m[3])
    }
}

/// The masks `f` gives the four words of `b` from `i`.
#[inline]
fn masks4(b: &[u8], i: usize, f: fn(u64) -> u64) -> [u64; 4] {
    [f(word(b, i)), f(word(b, i + 8)), f(word(b, i + 16)), f(word(b, i + 24))]
}

/// Whether `a` and `b` are equal, comparing 64 bytes per step and the rest as up to eight words,
/// the last one overlapping (memcmp is a byte loop in a guest): a converter compares each record's
/// schema with the last one's, and a payload's keys with its schema's names. Inlined, as a call
/// costs a guest as much as a step.
#[inline(always)]
pub fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n < 8 {
        if n >= 4 {
            return half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4);
        }
        // 0 to 3 bytes: the first, middle and last cover them all.
        return n == 0 || (a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1]);
    }
    let x = |i: usize| word(a, i) ^ word(b, i);
    let mut i = 0;
    while i + 64 <= n {
        if x(i) | x(i + 8) | x(i + 16) | x(i + 24) | x(i + 32) | x(i + 40) | x(i + 48) | x(i + 56) != 0 {
            return false;
        }
        i += 64;
    }
    if i + 32 <= n {
        if x(i) | x(i + 8) | x(i + 16) | x(i + 24) != 0 {
            return false;
        }
        i += 32;
    }
    let left = n - i;
    let mut d = x(n - 8);
    if left > 8 {
        d |= x(i);
    }
    if left > 16 {
        d |= x(i + 8);
    }
    if left > 24 {
        d |= x(i + 16);
    }
    d == 0
}

/// Whether `b` continues with `lit` from `i`.
#[inline]
pub fn has_at(b: &[u8], i: usize, lit: &[u8]) -> bool {
    b.len() >= i && b.len() - i >= lit.len() && same(&b[i..i + lit.len()], lit)
}

/// How many bytes of `b` from `i` on, 32 at a time, have none that `special` marks (or, with
/// `high`, that is not ASCII): a start the word loops below need not look at. In a guest built
/// with simd128, two 16-byte vectors a step, which wazero compiles to SSE or NEON; elsewhere
/// none (the word loops do all of it).
#[inline(always)]
fn plain_run(b: &[u8], i: usize, high: bool) -> usize {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        use core::arch::wasm32::*;
        let mut j = i;
        let (quote, backslash, space) = (u8x16_splat(b'"'), u8x16_splat(b'\\'), u8x16_splat(0x20));
        // Bytes below 0x20, and with `high` those from 0x80 on, are those whose v - 0x20
        // (wrapping) is at least `limit`.
        let limit = u8x16_splat(if high { 0x60 } else { 0xe0 });
        let marks = |v: v128| v128_or(u8x16_ge(u8x16_sub(v, space), limit), v128_or(u8x16_eq(v, quote), u8x16_eq(v, backslash)));
        while j + 32 <= b.len() {
            // SAFETY: j + 32 <= b.len(): both loads are within `b` (v128_load needs no alignment).
            let (lo, hi) = unsafe { (v128_load(b.as_ptr().add(j) as *const v128), v128_load(b.as_ptr().add(j + 16) as *const v128)) };
            let (m0, m1) = (marks(lo), marks(hi));
            if v128_any_true(v128_or(m0, m1)) {
                let m = u8x16_bitmask(m0) as u32 | (u8x16_bitmask(m1) as u32) << 16;
                return j + m.trailing_zeros() as usize - i;
            }
            j += 32;
        }
        j - i
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    {
        let _ = (b, i, high);
        0
    }
}

/// The index of the first '"', '\\' or control character in `b` from `i` on (or `b.len()`).
#[inline(always)]
pub fn plain_end(b: &[u8], mut i: usize) -> usize {
    i += plain_run(b, i, false);
    // 32 or 8 bytes per iteration, in one loop: in a guest each iteration, and each loop entered,
    // also pays the fuel check. The word that holds the end says where it is.
    loop {
        if i + 32 <= b.len() {
            let m = masks4(b, i, special);
            if m[0] | m[1] | m[2] | m[3] == 0 {
                i += 32;
                continue;
            }
            return i + first_of4(m);
        }
        if i + 8 > b.len() {
            break;
        }
        let m = special(word(b, i));
        if m != 0 {
            return i + first_marked(m);
        }
        i += 8;
    }
    // Fewer than 8 bytes left: the last word of `b` without its bytes before `i`. A byte before
    // `i` that `special` marks may mark the one after it too (a borrow), so the byte found is
    // looked at.
    if i < b.len() && b.len() >= 8 {
        let last = b.len() - 8;
        let m = special(word(b, last)) >> (8 * (i - last));
        if m == 0 {
            return b.len();
        }
        if is_special(b[i + first_marked(m)]) {
            return i + first_marked(m);
        }
    }
    while i < b.len() && !is_special(b[i]) {
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
    let mut i = plain_run(s, 0, true);
    while i < s.len() {
        // 32 or 8 bytes per iteration where it can: in a guest each iteration also pays the fuel
        // check. A word with a byte to care for says which; fewer than 8 bytes left are the last
        // word of `s` without its bytes before `i`, which may mark a plain byte (a borrow from a
        // byte before `i`): the byte itself is looked at below.
        if i + 32 <= s.len() {
            let m = masks4(s, i, needs_care);
            if m[0] | m[1] | m[2] | m[3] == 0 {
                i += 32;
                continue;
            }
            i += first_of4(m);
        } else if i + 8 <= s.len() {
            let m = needs_care(word(s, i));
            if m == 0 {
                i += 8;
                continue;
            }
            i += first_marked(m);
        } else if s.len() >= 8 {
            let last = s.len() - 8;
            let m = needs_care(word(s, last)) >> (8 * (i - last));
            if m == 0 {
                break;
            }
            i += first_marked(m);
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

    /// The word-at-a-time helpers against byte loops, for every length up to 80 and every place
    /// of a special byte, a non-ASCII one and a difference: the words' edges are where they go
    /// wrong.
    #[test]
    fn words_agree_with_bytes() {
        let naive_end = |b: &[u8], i: usize| (i..b.len()).find(|&k| b[k] == b'"' || b[k] == b'\\' || b[k] < 0x20).unwrap_or(b.len());
        for n in 0..80 {
            for at in 0..=n {
                // A special byte before one that a borrow from it marks too: '#', ' ', ']'.
                for mark in [&b"\""[..], b"\\", b"\n", b"\x01", "é".as_bytes(), b"\xff", b"!", b"\"#", b"\x1f ", b"\\]"] {
                    let mut b: Vec<u8> = (0..n).map(|k| b'a' + (k % 26) as u8).collect();
                    if at < n {
                        b.splice(at..at + 1, mark.iter().copied());
                    }
                    for from in 0..=b.len() {
                        assert_eq!(plain_end(&b, from), naive_end(&b, from), "{:?} from {}", b, from);
                    }
                    let mut want = Vec::new();
                    append_json_string_bytewise(&mut want, &b);
                    let mut got = Vec::new();
                    append_json_string(&mut got, &b);
                    assert_eq!(got, want, "{:?}", b);
                    let plain: Vec<u8> = (0..n).map(|k| b'a' + (k % 26) as u8).collect();
                    assert_eq!(same(&b, &plain), b == plain, "{:?}", b);
                    assert!(same(&b, &b.clone()));
                    assert!(has_at(&b, 0, &b[..at.min(b.len())]) && has_at(&b, at.min(b.len()), &b[at.min(b.len())..]));
                    assert!(!has_at(&b, 1, &b));
                }
            }
        }
    }

    /// As `words_agree_with_bytes`, for every length up to 200 (three of `same`'s 64-byte steps and
    /// a tail; six of the 32-byte ones), each kind of byte at every place, and starts at each byte
    /// of the first word and around the mark and the end.
    #[test]
    fn long_words_agree_with_bytes() {
        let naive_end = |b: &[u8], i: usize| (i..b.len()).find(|&k| is_special(b[k])).unwrap_or(b.len());
        for n in 0..=200usize {
            let plain: Vec<u8> = (0..n).map(|k| b'A' + (k % 58) as u8).filter(|&c| c != b'\\').collect();
            let n = plain.len();
            for at in 0..n {
                for &mark in &[b'"', b'\\', 0x00, 0x1f, 0x7f, 0x80, 0xc3, 0xff, b' '] {
                    let mut b = plain.clone();
                    b[at] = mark;
                    let froms = (0..8).chain(at.saturating_sub(1)..at + 2).chain(n.saturating_sub(9)..=n);
                    for from in froms.filter(|&f| f <= n) {
                        assert_eq!(plain_end(&b, from), naive_end(&b, from), "{:?} from {}", b, from);
                    }
                    let (mut got, mut want) = (Vec::new(), Vec::new());
                    append_json_string(&mut got, &b);
                    append_json_string_bytewise(&mut want, &b);
                    assert_eq!(got, want, "{:?}", b);
                    assert_eq!(same(&b, &plain), b == plain, "{:?}", b);
                    assert!(has_at(&b, at, &b[at..]) && !has_at(&b, at + 1, &b[at..]));
                }
            }
        }
    }

    /// Jackson's string writing a byte at a time, as `append_json_string` was first written.
    fn append_json_string_bytewise(out: &mut Vec<u8>, s: &[u8]) {
        out.push(b'"');
        let mut i = 0;
        while i < s.len() {
            let c = s[i];
            if c >= 0x80 {
                match utf8_len(&s[i..]) {
                    Some(n) => out.extend_from_slice(&s[i..i + n]),
                    None => out.extend_from_slice(REPLACEMENT),
                }
                i += utf8_len(&s[i..]).unwrap_or(1);
                continue;
            }
            match c {
                b'"' | b'\\' => out.extend_from_slice(&[b'\\', c]),
                0x08 => out.extend_from_slice(b"\\b"),
                b'\t' => out.extend_from_slice(b"\\t"),
                b'\n' => out.extend_from_slice(b"\\n"),
                0x0c => out.extend_from_slice(b"\\f"),
                b'\r' => out.extend_from_slice(b"\\r"),
                c if c < 0x20 => out.extend_from_slice(format!("\\u{:04X}", c).as_bytes()),
                c => out.push(c),
            }
            i += 1;
        }
        out.push(b'"');
    }
}
