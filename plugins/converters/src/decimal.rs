//! Connect's Decimal: the unscaled value as big-endian two's-complement bytes (Java's
//! BigInteger.toByteArray) with the scale in the schema's "scale" parameter. JsonConverter writes
//! it as base64 of those bytes, or with decimal.format=NUMERIC as a plain number
//! (BigDecimal.toPlainString). Values are kept as decimal digits: they are read from and written
//! to text far more often than they are computed with.

/// The largest |scale| and the most digits a decimal may have here: enough for any real schema,
/// and a bound on what a hostile payload ("1e999999999") can make the converter allocate.
pub const MAX_SCALE: i32 = 1000;
const MAX_DIGITS: usize = 4000;

/// An unscaled decimal value: its sign and magnitude digits (no leading zeros; "0" for zero).
#[derive(Debug, PartialEq)]
pub struct Unscaled {
    neg: bool,
    digits: Vec<u8>,
}

impl Unscaled {
    /// The value of two's-complement big-endian bytes.
    pub fn from_bytes(b: &[u8]) -> Unscaled {
        let neg = b.first().map_or(false, |c| c & 0x80 != 0);
        let mut mag: Vec<u8> = b.to_vec();
        if neg {
            // -x = !x + 1
            for c in mag.iter_mut() {
                *c = !*c;
            }
            for c in mag.iter_mut().rev() {
                let (v, carry) = c.overflowing_add(1);
                *c = v;
                if !carry {
                    break;
                }
            }
        }
        Unscaled { neg, digits: to_decimal(mag) }
    }

    /// The unscaled value at `scale` of the JSON number `tok`; an error if the number has more
    /// fractional digits than the scale allows (Java's "Rounding necessary").
    pub fn from_number(tok: &[u8], scale: i32) -> Result<Unscaled, String> {
        let text = String::from_utf8_lossy(tok);
        let rounding = || format!("{} does not fit scale {} (rounding necessary)", text, scale);
        let (neg, rest) = match tok.split_first() {
            Some((b'-', r)) => (true, r),
            _ => (false, tok),
        };
        let (mantissa, exp) = match rest.iter().position(|&c| c == b'e' || c == b'E') {
            Some(i) => {
                let e = std::str::from_utf8(&rest[i + 1..]).ok().and_then(|s| s.trim_start_matches('+').parse::<i64>().ok());
                match e {
                    Some(e) if e.abs() <= (MAX_DIGITS as i64) * 2 => (&rest[..i], e),
                    _ => return Err(format!("{} is out of range for a Decimal", text)),
                }
            }
            None => (rest, 0),
        };
        let (int, frac) = match mantissa.iter().position(|&c| c == b'.') {
            Some(i) => (&mantissa[..i], &mantissa[i + 1..]),
            None => (mantissa, &b""[..]),
        };
        let mut digits: Vec<u8> = int.iter().chain(frac.iter()).copied().skip_while(|&c| c == b'0').collect();
        if digits.is_empty() {
            return Ok(Unscaled { neg: false, digits: vec![b'0'] });
        }
        let shift = exp - frac.len() as i64 + scale as i64;
        if shift >= 0 {
            if digits.len() + shift as usize > MAX_DIGITS {
                return Err(format!("{} is out of range for a Decimal", text));
            }
            digits.resize(digits.len() + shift as usize, b'0');
        } else {
            let cut = (-shift) as usize;
            if cut >= digits.len() || digits[digits.len() - cut..].iter().any(|&c| c != b'0') {
                return Err(rounding());
            }
            digits.truncate(digits.len() - cut);
        }
        Ok(Unscaled { neg, digits })
    }

    /// Appends the value as BigInteger.toByteArray does: the shortest big-endian two's complement.
    pub fn write_bytes(&self, out: &mut Vec<u8>) {
        let mut mag = from_decimal(&self.digits);
        if !self.neg {
            if mag.first().map_or(true, |c| c & 0x80 != 0) {
                out.push(0);
            }
            out.extend_from_slice(&mag);
            return;
        }
        // -x in n bytes is !(x - 1), with n the smallest length that leaves the sign bit set.
        for c in mag.iter_mut().rev() {
            let (v, borrow) = c.overflowing_sub(1);
            *c = v;
            if !borrow {
                break;
            }
        }
        let start = mag.iter().position(|&c| c != 0).unwrap_or(mag.len());
        let m = &mag[start..];
        if m.first().map_or(true, |c| c & 0x80 != 0) {
            out.push(0xff);
        }
        out.extend(m.iter().map(|c| !c));
    }

    /// Appends the value at `scale` as a plain decimal number with `scale` fractional digits, as
    /// BigDecimal.toPlainString writes it.
    pub fn write_text(&self, scale: i32, out: &mut Vec<u8>) {
        let zero = self.digits == b"0";
        if self.neg && !zero {
            out.push(b'-');
        }
        if scale <= 0 {
            out.extend_from_slice(&self.digits);
            if !zero {
                out.resize(out.len() + (-scale) as usize, b'0');
            }
            return;
        }
        let scale = scale as usize;
        if self.digits.len() <= scale {
            out.push(b'0');
            out.push(b'.');
            out.resize(out.len() + scale - self.digits.len(), b'0');
            out.extend_from_slice(&self.digits);
        } else {
            let (int, frac) = self.digits.split_at(self.digits.len() - scale);
            out.extend_from_slice(int);
            out.push(b'.');
            out.extend_from_slice(frac);
        }
    }
}

/// Big-endian base-256 magnitude to decimal digits.
fn to_decimal(mut mag: Vec<u8>) -> Vec<u8> {
    let mut chunks: Vec<u32> = Vec::new(); // base 10^9, least significant first
    loop {
        let start = mag.iter().position(|&c| c != 0).unwrap_or(mag.len());
        mag.drain(..start);
        if mag.is_empty() {
            break;
        }
        let mut rem: u64 = 0;
        for c in mag.iter_mut() {
            let cur = rem << 8 | *c as u64;
            *c = (cur / 1_000_000_000) as u8;
            rem = cur % 1_000_000_000;
        }
        chunks.push(rem as u32);
    }
    if chunks.is_empty() {
        return vec![b'0'];
    }
    let mut s = chunks.last().unwrap().to_string();
    for c in chunks.iter().rev().skip(1) {
        s.push_str(&format!("{:09}", c));
    }
    s.into_bytes()
}

/// Decimal digits to a big-endian base-256 magnitude (no leading zeros; empty for zero).
fn from_decimal(digits: &[u8]) -> Vec<u8> {
    let mut mag: Vec<u8> = Vec::new(); // little-endian while building
    let mut chunk_start = 0;
    let first = digits.len() % 9;
    let mut bounds = Vec::new();
    if first > 0 {
        bounds.push(first);
    }
    let mut b = first;
    while b < digits.len() {
        b += 9;
        bounds.push(b);
    }
    for end in bounds {
        let part = &digits[chunk_start..end];
        let mul = 10u64.pow(part.len() as u32);
        let mut carry: u64 = part.iter().fold(0u64, |n, &c| n * 10 + (c - b'0') as u64);
        for c in mag.iter_mut() {
            let cur = *c as u64 * mul + carry;
            *c = cur as u8;
            carry = cur >> 8;
        }
        while carry > 0 {
            mag.push(carry as u8);
            carry >>= 8;
        }
        chunk_start = end;
    }
    while mag.last() == Some(&0) {
        mag.pop();
    }
    mag.reverse();
    mag
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(u: &Unscaled) -> Vec<u8> {
        let mut out = Vec::new();
        u.write_bytes(&mut out);
        out
    }

    fn text(u: &Unscaled, scale: i32) -> String {
        let mut out = Vec::new();
        u.write_text(scale, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn java_bytes() {
        for (n, b) in [
            ("0", &[0u8][..]),
            ("1", &[1]),
            ("127", &[0x7f]),
            ("128", &[0, 0x80]),
            ("-1", &[0xff]),
            ("-128", &[0x80]),
            ("-129", &[0xff, 0x7f]),
            ("-150", &[0xff, 0x6a]),
            ("12345", &[0x30, 0x39]),
            ("-256", &[0xff, 0x00]),
            ("123456789012345678901234567890", &[0x01, 0x8e, 0xe9, 0x0f, 0xf6, 0xc3, 0x73, 0xe0, 0xee, 0x4e, 0x3f, 0x0a, 0xd2]),
        ] {
            let u = Unscaled::from_number(n.as_bytes(), 0).unwrap();
            assert_eq!(bytes(&u), b, "{}", n);
            assert_eq!(Unscaled::from_bytes(b), u, "{}", n);
            assert_eq!(text(&u, 0), n);
        }
    }

    #[test]
    fn scales() {
        assert_eq!(text(&Unscaled::from_number(b"-1.5", 2).unwrap(), 2), "-1.50");
        assert_eq!(text(&Unscaled::from_bytes(&[0x30, 0x39]), 2), "123.45");
        assert_eq!(text(&Unscaled::from_bytes(&[5]), 3), "0.005");
        assert_eq!(text(&Unscaled::from_bytes(&[5]), -2), "500");
        assert_eq!(text(&Unscaled::from_number(b"1.5E2", 0).unwrap(), 0), "150");
        assert_eq!(text(&Unscaled::from_number(b"1200", -2).unwrap(), -2), "1200");
        assert_eq!(Unscaled::from_number(b"1.25", 1).unwrap_err(), "1.25 does not fit scale 1 (rounding necessary)");
        assert_eq!(Unscaled::from_number(b"1250e-3", 2).unwrap(), Unscaled { neg: false, digits: b"125".to_vec() });
        assert!(Unscaled::from_number(b"1e999999999", 0).is_err());
    }
}
