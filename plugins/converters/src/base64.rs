//! Standard base64 with padding (RFC 4648), as Java's Base64 and Go's base64.StdEncoding, which
//! JsonConverter writes bytes with.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Appends the base64 of `b` to `out`.
pub fn encode(out: &mut Vec<u8>, b: &[u8]) {
    out.reserve((b.len() + 2) / 3 * 4);
    let mut chunks = b.chunks_exact(3);
    for c in &mut chunks {
        let n = (c[0] as u32) << 16 | (c[1] as u32) << 8 | c[2] as u32;
        out.extend_from_slice(&[
            ALPHABET[(n >> 18) as usize],
            ALPHABET[(n >> 12 & 63) as usize],
            ALPHABET[(n >> 6 & 63) as usize],
            ALPHABET[(n & 63) as usize],
        ]);
    }
    match *chunks.remainder() {
        [a] => {
            let n = (a as u32) << 16;
            out.extend_from_slice(&[ALPHABET[(n >> 18) as usize], ALPHABET[(n >> 12 & 63) as usize], b'=', b'=']);
        }
        [a, b] => {
            let n = (a as u32) << 16 | (b as u32) << 8;
            out.extend_from_slice(&[ALPHABET[(n >> 18) as usize], ALPHABET[(n >> 12 & 63) as usize], ALPHABET[(n >> 6 & 63) as usize], b'=']);
        }
        _ => {}
    }
}

fn value(c: u8) -> Option<u32> {
    Some(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    } as u32)
}

/// Decodes padded base64 into `out` (cleared first), as Go's base64.StdEncoding does: line breaks
/// are ignored, anything else out of place is "illegal base64 data at input byte N".
pub fn decode(s: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    out.clear();
    let illegal = |i: usize| Err(format!("illegal base64 data at input byte {}", i));
    let mut quad = [0u32; 4];
    let mut n = 0; // characters in quad
    let mut qstart = 0; // where the quad started
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        if c == b'\n' || c == b'\r' {
            i += 1;
            continue;
        }
        if c == b'=' {
            // Padding: "xx==" or "xxx=", then only line breaks.
            if n < 2 {
                return illegal(i);
            }
            let need = 4 - n;
            let mut seen = 0;
            let mut j = i;
            while j < s.len() && seen < need {
                match s[j] {
                    b'\n' | b'\r' => {}
                    b'=' => seen += 1,
                    _ => return illegal(j),
                }
                j += 1;
            }
            if seen < need {
                return illegal(s.len());
            }
            while j < s.len() {
                if s[j] != b'\n' && s[j] != b'\r' {
                    return illegal(j);
                }
                j += 1;
            }
            let v = quad[0] << 18 | quad[1] << 12 | quad[2] << 6;
            out.push((v >> 16) as u8);
            if n == 3 {
                out.push((v >> 8) as u8);
            }
            return Ok(());
        }
        if n == 0 {
            qstart = i;
        }
        match value(c) {
            Some(v) => quad[n] = v,
            None => return illegal(i),
        }
        n += 1;
        if n == 4 {
            let v = quad[0] << 18 | quad[1] << 12 | quad[2] << 6 | quad[3];
            out.extend_from_slice(&[(v >> 16) as u8, (v >> 8) as u8, v as u8]);
            n = 0;
        }
        i += 1;
    }
    if n != 0 {
        return illegal(qstart);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        for b in [&b""[..], b"a", b"ab", b"abc", b"\x00\x01\x02\xff"] {
            let mut e = Vec::new();
            encode(&mut e, b);
            let mut d = Vec::new();
            decode(&e, &mut d).unwrap();
            assert_eq!(d, b);
        }
        let mut e = Vec::new();
        encode(&mut e, b"\x00\x01\x02\xff");
        assert_eq!(e, b"AAEC/w==");
        let mut d = Vec::new();
        assert_eq!(decode(b"!!", &mut d).unwrap_err(), "illegal base64 data at input byte 0");
        assert_eq!(decode(b"AA=A", &mut d).unwrap_err(), "illegal base64 data at input byte 3");
        assert_eq!(decode(b"AAAAAAA", &mut d).unwrap_err(), "illegal base64 data at input byte 4");
    }
}
