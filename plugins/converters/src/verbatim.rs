//! The payloads JsonConverter writes as they are, recognised in one pass over payload and schema
//! together: compact text whose structs have their fields in the schema's order, strings
//! without escapes, integers in range, nulls where the schema is optional without a default. That
//! is what the SDK and the transformations write, so it is nearly every record; for such a payload
//! the payload parser (conform) would find nothing to rewrite and no white space, at several times
//! the cost: it decodes each key, looks it up among the fields and keeps track of the fields seen.
//!
//! A value it does not recognise is read by the payload parser alone (a float, a map, escapes, a
//! struct with its fields in another order); a payload it cannot say is written as it is (white
//! space, a rewrite, an error) is left to the parser as a whole, which has the error texts.

use crate::conform::{self, Options, Work};
use crate::schema::{Logical, Schema, Type};
use wasmconnect::words::{has_at, plain_end};

/// Whether the payload parser would read `b`, of schema `s`, without a rewrite and without white
/// space, so that the converter writes it as it is. `false` says nothing about it: see
/// `conform::check_spacing`.
pub fn written_as_is(s: &Schema, b: &[u8], o: &Options, w: &mut Work) -> bool {
    value(s, b, 0, o, w) == Ok(b.len())
}

/// Not a payload written as it is, or not a valid one.
#[derive(Debug, PartialEq)]
struct No;

/// The end of the value of `s` at `i`, recognised here or read by the payload parser.
#[inline(always)]
fn value(s: &Schema, b: &[u8], i: usize, o: &Options, w: &mut Work) -> Result<usize, No> {
    match quick(s, b, i, o, w)? {
        Some(end) => Ok(end),
        // All of the payload: the parser that follows reads it.
        None if i == 0 => Err(No),
        None => conform::verbatim_end(s, b, i, o, w).ok_or(No),
    }
}

/// The end of the value of `s` at `i` if it is one of those recognised here; `None` if it is for
/// the payload parser to say. Inlined with `value` into each container, as a call costs a guest
/// as much as a loop step.
#[inline(always)]
fn quick(s: &Schema, b: &[u8], i: usize, o: &Options, w: &mut Work) -> Result<Option<usize>, No> {
    let c = match b.get(i) {
        Some(&c) => c,
        None => return Err(No),
    };
    if c == b'n' {
        let null = s.optional && s.default.is_none() && has_at(b, i, b"null");
        return Ok(if null { Some(i + 4) } else { None });
    }
    Ok(match s.typ {
        Type::String if c == b'"' => {
            let end = plain_end(b, i + 1);
            if b.get(end) == Some(&b'"') {
                Some(end + 1)
            } else {
                None
            }
        }
        Type::Struct if c == b'{' => return structure(s, b, i, o, w),
        Type::Array if c == b'[' => return array(s, b, i, o, w),
        Type::Boolean if has_at(b, i, b"true") => Some(i + 4),
        Type::Boolean if has_at(b, i, b"false") => Some(i + 5),
        Type::Int8 | Type::Int16 | Type::Int32 | Type::Int64 => integer(s, b, i),
        _ => None,
    })
}

/// A struct with its fields in the schema's order; an optional field without a default may be
/// absent (the parser reads it as a null, which it is).
fn structure(s: &Schema, b: &[u8], i: usize, o: &Options, w: &mut Work) -> Result<Option<usize>, No> {
    let mut at = i + 1; // past the '{'
    let mut first = true;
    for f in &s.fields {
        let key = if first { at } else { at + 1 };
        if (first || b.get(at) == Some(&b',')) && has_at(b, key, &f.key) {
            at = value(&f.schema, b, key + f.key.len(), o, w)?;
            first = false;
        } else if !(f.schema.optional && f.schema.default.is_none()) {
            return Ok(None);
        }
    }
    Ok(if b.get(at) == Some(&b'}') { Some(at + 1) } else { None })
}

fn array(s: &Schema, b: &[u8], i: usize, o: &Options, w: &mut Work) -> Result<Option<usize>, No> {
    let items = s.items.as_deref().expect("array schema with items");
    if b.get(i + 1) == Some(&b']') {
        return Ok(Some(i + 2));
    }
    let mut at = i + 1;
    loop {
        at = value(items, b, at, o, w)?;
        match b.get(at) {
            Some(b',') => at += 1,
            Some(b']') => return Ok(Some(at + 1)),
            _ => return Ok(None),
        }
    }
}

/// An integer without fraction or exponent, of at most 18 digits, in the range of `s`.
fn integer(s: &Schema, b: &[u8], i: usize) -> Option<usize> {
    let neg = b[i] == b'-';
    let start = i + neg as usize;
    let mut at = start;
    let mut n: i64 = 0;
    match b.get(at) {
        Some(b'0') => at += 1,
        Some(b'1'..=b'9') => {
            while let Some(&d @ b'0'..=b'9') = b.get(at) {
                if at - start == 18 {
                    return None;
                }
                n = n * 10 + (d - b'0') as i64;
                at += 1;
            }
        }
        _ => return None,
    }
    if matches!(b.get(at), Some(b'.' | b'e' | b'E' | b'0'..=b'9')) {
        return None;
    }
    let n = if neg { -n } else { n };
    let bits = s.typ.int_bits().unwrap_or(64);
    if bits < 64 && !(n >= -(1i64 << (bits - 1)) && n < 1i64 << (bits - 1)) {
        return None;
    }
    if s.logical == Logical::Time && !(0..=86_400_000).contains(&n) {
        return None;
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema;

    /// Every payload: recognised here exactly when the payload parser finds it valid, compact and
    /// not rewritten, but for a struct whose fields come in another order or with an absent field
    /// that has a default.
    #[test]
    fn agrees_with_the_parser() {
        let s = schema::parse(
            br#"{"type":"struct","fields":[{"type":"int8","field":"i"},{"type":"string","optional":true,"field":"s"},
            {"type":"array","items":{"type":"struct","fields":[{"type":"boolean","field":"b"}]},"optional":true,"field":"a"},
            {"type":"map","keys":{"type":"string"},"values":{"type":"int32"},"optional":true,"field":"m"},
            {"type":"double","optional":true,"default":1.5,"field":"f"},
            {"type":"int32","name":"org.apache.kafka.connect.data.Time","optional":true,"field":"t"},
            {"type":"struct","fields":[],"optional":true,"field":"e"},
            {"type":"string","optional":true,"field":"q\"k"}]}"#,
        )
        .unwrap()
        .unwrap();
        let payloads: &[&[u8]] = &[
            br#"{"i":1,"s":"x","a":[{"b":true},{"b":false}],"m":{"k":1},"f":2.5,"t":5,"e":{},"q\"k":"v"}"#,
            br#"{"i":-128,"s":null,"a":[],"m":null,"f":1e3,"t":0,"e":null,"q\"k":null}"#,
            br#"{"i":127,"s":"e\u00e9\n","a":null,"m":{},"f":-0.0,"t":86400000,"e":{},"q\"k":""}"#,
            br#"{"i":128,"s":"x","a":[],"m":{},"f":1,"t":1,"e":{},"q\"k":""}"#,
            br#"{"i":1.0,"s":"x","a":[],"m":{},"f":1,"t":1,"e":{},"q\"k":""}"#,
            br#"{"i":01,"s":"x","a":[],"m":{},"f":1,"t":1,"e":{},"q\"k":""}"#,
            br#"{"i":1,"s":"x","a":[],"m":{},"f":null,"t":1,"e":{},"q\"k":""}"#,
            br#"{"i":1,"s":"x","a":[],"m":{"k":1,"k":2},"f":1,"t":1,"e":{},"q\"k":""}"#,
            br#"{"i":1,"s":"x","a":[],"m":{},"f":1,"t":86400001,"e":{},"q\"k":""}"#,
            br#"{"i":1,"s":"x","a":[],"m":{},"f":1,"t":1,"e":{"z":1},"q\"k":""}"#,
            br#"{"i":1,"s":"x","a":[{"b":true,"c":1}],"m":{},"f":1,"t":1,"e":{},"q\"k":""}"#,
            br#"{"i":1,"s":"x","a":[],"m":{},"f":1,"t":1,"e":{},"q\"k":"","i":2}"#,
            br#"{"i":1,"s":"x","a":[],"m":{},"f":1,"t":1,"e":{},"q\"k":""} "#,
            br#"{"i":1,"s":"x","a":[],"m":{},"f":1,"t":1,"e":{},"q\"k":""}x"#,
            br#"{"i":1, "s":"x","a":[],"m":{},"f":1,"t":1,"e":{},"q\"k":""}"#,
            br#"{"i":1,"s":"x","a":[ ],"m":{},"f":1,"t":1,"e":{},"q\"k":""}"#,
            br#"{"i":1,"s":"x","a":[{"b":1}],"m":{},"f":1,"t":1,"e":{},"q\"k":""}"#,
            br#"{"i":1,"s":"x","a":[{"b":true},],"m":{},"f":1,"t":1,"e":{},"q\"k":""}"#,
            br#"{"i":1,"s":"x"#,
            br#"{"i":1,"s":"x","a":[],"m":{},"f":1,"t":1,"e":{},"q\"k":"","zz":1}"#,
            br#"{"i":1,"s":"x","a":[],"m":{},"f":1,"t":1,"e":{}}"#,
            br#"{"i":-,"s":"x","a":[],"m":{},"f":1,"t":1,"e":{},"q\"k":""}"#,
            br#"{"i":1234567890123456789012,"s":"x","a":[],"m":{},"f":1,"t":1,"e":{},"q\"k":""}"#,
            br#"{"i":1,"f":2.0}"#,
            br#"{"i":1,"a":[{"b":true}],"f":2.0,"q\"k":"x"}"#,
            br#"null"#,
            br#"{}"#,
            br#""#,
        ];
        for keep_nulls in [false, true] {
            let o = Options { root: "payload", keep_nulls, writing: true, numeric: false };
            let mut w = Work::default();
            for p in payloads {
                let plain = conform::check_spacing_parsed(&s, p, &o, &mut w).map(|c| !c.rewritten && !c.spaced).unwrap_or(false);
                assert_eq!(written_as_is(&s, p, &o, &mut w), plain, "{}", String::from_utf8_lossy(p));
            }
            // Fields in another order are for the parser, which writes them as they are.
            for p in [&br#"{"s":"x","i":1,"f":2.0}"#[..], br#"{"i":1,"a":[{"b":true}],"q\"k":"x","f":2.0}"#] {
                assert!(!written_as_is(&s, p, &o, &mut w));
                assert!(conform::check_spacing_parsed(&s, p, &o, &mut w).map(|c| !c.rewritten && !c.spaced).unwrap());
            }
        }
        for (typ, p, want) in [("int64", &b"-9223372036854775808"[..], false), ("int64", b"999999999999999999", true), ("int16", b"-32768", true), ("int16", b"32768", false), ("boolean", b"tru", false), ("string", b"\"a", false)] {
            let s = schema::parse(format!(r#"{{"type":"{}"}}"#, typ).as_bytes()).unwrap().unwrap();
            assert_eq!(written_as_is(&s, p, &Options::default(), &mut Work::default()), want, "{} {}", typ, String::from_utf8_lossy(p));
        }
    }
}
