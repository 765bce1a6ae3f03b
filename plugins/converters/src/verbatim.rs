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

use super::conform::{self, Options, Work};
use super::schema::{Logical, Schema, Type};
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
    use super::super::schema;

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

    /// A schema made up by `Gen`: its JSON and what the payloads made for it need to know.
    enum Spec {
        Int(u32, &'static str),
        Float,
        Bool,
        Str,
        Bytes,
        Array(Box<Spec>),
        Map(bool, Box<Spec>),
        Struct(Vec<(String, Spec)>),
    }

    /// Schemas and payloads from a xorshift generator, most of them near what verbatim accepts:
    /// limits of each integer type, escapes, nulls, absent, repeated, reordered and unknown
    /// fields, white space and stray bytes.
    struct Gen(u64);

    impl Gen {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
        fn one<'a>(&mut self, xs: &[&'a str]) -> &'a str {
            xs[self.below(xs.len())]
        }

        /// A schema's JSON and its spec.
        fn schema(&mut self, depth: usize) -> (String, Spec) {
            let k = if depth >= 3 { self.below(8) } else { self.below(12) };
            let mut extra = String::new();
            let (typ, spec, defaults): (&str, Spec, &[&str]) = match k {
                0 => ("int8", Spec::Int(8, ""), &["1", "-128"]),
                1 => ("int16", Spec::Int(16, ""), &["2"]),
                2 => ("int32", Spec::Int(32, ""), &["3"]),
                3 => ("int64", Spec::Int(64, ""), &["4"]),
                4 => match self.below(3) {
                    0 => ("int32", Spec::Int(32, "org.apache.kafka.connect.data.Time"), &["5"]),
                    1 => ("int32", Spec::Int(32, "org.apache.kafka.connect.data.Date"), &["6"]),
                    _ => ("int64", Spec::Int(64, "org.apache.kafka.connect.data.Timestamp"), &["7"]),
                },
                5 => (if self.below(2) == 0 { "float" } else { "double" }, Spec::Float, &["1.5"]),
                6 => ("boolean", Spec::Bool, &["true"]),
                7 => ("string", Spec::Str, &["\"d\""]),
                8 => ("bytes", Spec::Bytes, &["\"AQ==\""]),
                9 => {
                    let (items, spec) = self.schema(depth + 1);
                    extra = format!(r#","items":{}"#, items);
                    ("array", Spec::Array(Box::new(spec)), &["[]"])
                }
                10 => {
                    let string_keys = self.below(3) != 0;
                    let (values, spec) = self.schema(depth + 1);
                    extra = format!(r#","keys":{{"type":"{}"}},"values":{}"#, if string_keys { "string" } else { "int32" }, values);
                    ("map", Spec::Map(string_keys, Box::new(spec)), &[])
                }
                _ => {
                    let mut fields = Vec::new();
                    let mut json = Vec::new();
                    for f in 0..self.below(if depth == 0 { 11 } else { 5 }) {
                        let name = self.one(&["a", "b", "c\"q", "é", "d/e", "ab"]).to_string() + &f.to_string();
                        let (fs, spec) = self.schema(depth + 1);
                        let mut named = String::new();
                        append_json_string_to(&mut named, &name);
                        json.push(format!(r#"{},"field":{}}}"#, &fs[..fs.len() - 1], named));
                        fields.push((name, spec));
                    }
                    extra = format!(r#","fields":[{}]"#, json.join(","));
                    ("struct", Spec::Struct(fields), &[])
                }
            };
            if let Spec::Int(_, name) = spec {
                if !name.is_empty() {
                    extra += &format!(r#","name":"{}""#, name);
                }
            }
            if self.below(2) == 0 {
                extra += r#","optional":true"#;
            }
            if !defaults.is_empty() && self.below(3) == 0 {
                extra += &format!(r#","default":{}"#, self.one(defaults));
            }
            (format!(r#"{{"type":"{}"{}}}"#, typ, extra), spec)
        }

        /// Maybe white space.
        fn ws(&mut self, out: &mut String) {
            if self.below(40) == 0 {
                out.push_str(self.one(&[" ", "\n", "\t", "\r", "  "]));
            }
        }

        /// A payload for `s`, most often a valid one.
        fn payload(&mut self, s: &Spec, out: &mut String) {
            self.ws(out);
            if self.below(12) == 0 {
                out.push_str(self.one(&["null", "nul", "nullx", "true", "1", "\"x\"", "{}", "[]", "1.0"]));
                return;
            }
            match s {
                Spec::Int(bits, _) => {
                    let lim = 1i128 << (bits - 1);
                    let n: String = match self.below(6) {
                        0 => (lim - 1).to_string(),
                        1 => (-lim).to_string(),
                        2 => lim.to_string(),
                        3 => (-lim - 1).to_string(),
                        4 => self.one(&["0", "-0", "01", "-", "1.0", "1e2", "1E2", "2.5", "-0.0", "86400000", "86400001", "-1",
                            "999999999999999999", "1000000000000000000", "-999999999999999999", "12345678901234567890", "1e", "1.", "+1", "0x1", "00"]).to_string(),
                        _ => ((self.next() % 300) as i64 - 150).to_string(),
                    };
                    out.push_str(&n);
                }
                Spec::Float => out.push_str(self.one(&["1.5", "-0", "-0.0", "1e308", "1e309", "2", "1E-2", "0.1e+1", "-", "1.", "NaN", "3"])),
                Spec::Bool => out.push_str(self.one(&["true", "false", "tru", "falsey", "TRUE"])),
                Spec::Str | Spec::Bytes => {
                    out.push('"');
                    for _ in 0..self.below(4) {
                        out.push_str(self.one(&["abc", "AQ==", "\\\"", "\\\\", "\\u00e9", "\\ud800", "\\ud83d\\ude00", "é", "\u{2028}", "\\/", "/", "\t", "\u{1}", "\\x", "0123456789abcdefghijklmnopqrstuvwxyz"]));
                    }
                    if self.below(30) != 0 {
                        out.push('"');
                    }
                }
                Spec::Array(items) => {
                    out.push('[');
                    let n = self.below(4);
                    for k in 0..n {
                        if k > 0 {
                            out.push(',');
                        }
                        self.payload(items, out);
                        self.ws(out);
                    }
                    if n > 0 && self.below(30) == 0 {
                        out.push(',');
                    }
                    out.push(']');
                }
                Spec::Map(string_keys, values) => {
                    let n = self.below(4);
                    out.push(if *string_keys { '{' } else { '[' });
                    for k in 0..n {
                        if k > 0 {
                            out.push(',');
                        }
                        let key = self.one(&["k", "l", "k"]);
                        if *string_keys {
                            out.push_str(&format!(r#""{}":"#, key));
                        } else {
                            out.push_str(&format!("[{},", k % 2));
                        }
                        self.payload(values, out);
                        if !*string_keys {
                            out.push(']');
                        }
                    }
                    out.push(if *string_keys { '}' } else { ']' });
                }
                Spec::Struct(fields) => {
                    let mut order: Vec<usize> = (0..fields.len()).filter(|_| self.below(5) != 0).collect();
                    if self.below(10) == 0 && order.len() > 1 {
                        order.swap(0, 1);
                    }
                    if self.below(10) == 0 && !order.is_empty() {
                        order.push(order[0]);
                    }
                    out.push('{');
                    let mut first = true;
                    for i in order {
                        if !first {
                            out.push(',');
                        }
                        first = false;
                        self.ws(out);
                        append_json_string_to(out, &fields[i].0);
                        self.ws(out);
                        out.push(':');
                        self.payload(&fields[i].1, out);
                        self.ws(out);
                    }
                    if self.below(15) == 0 {
                        out.push_str(if first { r#""zz":1"# } else { r#","zz":[1,{"y":null}]"# });
                    }
                    out.push('}');
                }
            }
        }
    }

    fn append_json_string_to(out: &mut String, s: &str) {
        let mut b = Vec::new();
        wasmconnect::words::append_json_string(&mut b, s.as_bytes());
        out.push_str(std::str::from_utf8(&b).unwrap());
    }

    /// Generated schemas and payloads, and payloads with a byte changed: whatever verbatim takes
    /// as written as it is, the payload parser reads without a rewrite or white space.
    #[test]
    fn generated_payloads_agree_with_the_parser() {
        let mut g = Gen(0x9e37_79b9_7f4a_7c15);
        let mut w = Work::default();
        let mut accepted = 0;
        for _ in 0..3000 {
            let (json, spec) = g.schema(0);
            let s = match schema::parse(json.as_bytes()) {
                Ok(Some(s)) => s,
                other => panic!("{}: {:?}", json, other.err()),
            };
            for _ in 0..20 {
                let mut p = String::new();
                g.payload(&spec, &mut p);
                let mut p = p.into_bytes();
                match g.below(8) {
                    0 if !p.is_empty() => {
                        let at = g.below(p.len());
                        p[at] = *g.one(&["\"", "\\", ",", "}", "]", "\u{1}", "0", "n", ":"]).as_bytes().first().unwrap();
                    }
                    1 if !p.is_empty() => p.truncate(g.below(p.len())),
                    2 => p.extend_from_slice(g.one(&[" ", "x", "}", ",1", "\u{0}"]).as_bytes()),
                    3 if !p.is_empty() => {
                        let at = g.below(p.len());
                        p.insert(at, 0xff);
                    }
                    _ => {}
                }
                for (keep_nulls, numeric, writing) in [(false, false, true), (true, false, true), (false, true, false), (true, true, false)] {
                    let o = Options { root: "payload", keep_nulls, writing, numeric };
                    if written_as_is(&s, &p, &o, &mut w) {
                        accepted += 1;
                        let full = conform::check_spacing_parsed(&s, &p, &o, &mut w).map(|c| (c.rewritten, c.spaced));
                        assert_eq!(full, Ok((false, false)), "schema {} payload {} keep_nulls {}", json, String::from_utf8_lossy(&p), keep_nulls);
                    }
                }
            }
        }
        assert!(accepted > 10_000, "only {} accepted", accepted);
    }
}
