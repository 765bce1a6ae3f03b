//! A small JSON reader and writer for the JSON parts of the ABI: open and validate requests,
//! descriptors, task configs, source partitions and offsets. It writes compact JSON with sorted
//! object keys and escapes as Go's encoding/json does, so that a source partition is the same bytes
//! whichever SDK wrote it (sdk/ABI.md §5.2).

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// A JSON value. Integers that fit an i64 are `Int`; other numbers are `Float`.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    String(String),
    Array(Vec<Value>),
    Object(BTreeMap<String, Value>),
}

impl Value {
    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The integer, if this is an integer (or a float with an integral value, as a JSON reader that
    /// knows only doubles would have written it).
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::Int(n) => Some(n),
            Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.2e18 => Some(f as i64),
            _ => None,
        }
    }

    /// The object, if this is one.
    pub fn as_object(&self) -> Option<&BTreeMap<String, Value>> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The member `key` of an object; `None` for a missing key or a non-object.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_object().and_then(|m| m.get(key))
    }

    /// The compact JSON text of the value.
    pub fn to_json(&self) -> String {
        let mut s = String::new();
        self.write(&mut s);
        s
    }

    /// Appends the compact JSON text of the value to `out`.
    pub fn write(&self, out: &mut String) {
        match self {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Int(n) => {
                let _ = write!(out, "{}", n);
            }
            Value::Float(f) => {
                if f.is_finite() {
                    let _ = write!(out, "{}", f);
                } else {
                    out.push_str("null");
                }
            }
            Value::String(s) => write_string(out, s),
            Value::Array(a) => {
                out.push('[');
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.write(out);
                }
                out.push(']');
            }
            Value::Object(m) => {
                out.push('{');
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_string(out, k);
                    out.push(':');
                    v.write(out);
                }
                out.push('}');
            }
        }
    }
}

impl Default for Value {
    fn default() -> Value {
        Value::Null
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_string())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}

impl From<i64> for Value {
    fn from(n: i64) -> Value {
        Value::Int(n)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

/// Builds an object from key-value pairs: `json::object([("position", 4711.into())])`.
pub fn object<const N: usize>(pairs: [(&str, Value); N]) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// Appends `s` as a JSON string, escaped as Go's encoding/json escapes it (`<`, `>`, `&`, U+2028
/// and U+2029 as \u escapes too).
pub fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Parses one JSON value; anything but white space after it is an error.
pub fn parse(b: &[u8]) -> Result<Value, String> {
    let mut p = Parser { b, i: 0, depth: 0 };
    let v = p.value()?;
    p.ws();
    if p.i != b.len() {
        return Err(p.err("after top-level value"));
    }
    Ok(v)
}

/// Parses a JSON string literal (with its quotes) into its text.
pub fn parse_string(b: &[u8]) -> Result<String, String> {
    match parse(b)? {
        Value::String(s) => Ok(s),
        _ => Err("not a JSON string".to_string()),
    }
}

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
    depth: usize,
}

/// Nesting deeper than this is refused: the ABI's JSON is shallow, and a module's stack is small.
const MAX_DEPTH: usize = 100;

impl<'a> Parser<'a> {
    fn err(&self, what: &str) -> String {
        match self.b.get(self.i) {
            Some(&c) => format!("invalid character {:?} {} at offset {}", c as char, what, self.i),
            None => format!("unexpected end of JSON input {}", what),
        }
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    fn lit(&mut self, s: &str, v: Value) -> Result<Value, String> {
        if self.b[self.i..].starts_with(s.as_bytes()) {
            self.i += s.len();
            Ok(v)
        } else {
            Err(self.err("in literal"))
        }
    }

    fn value(&mut self) -> Result<Value, String> {
        self.ws();
        match self.b.get(self.i) {
            None => Err(self.err("looking for beginning of value")),
            Some(b'n') => self.lit("null", Value::Null),
            Some(b't') => self.lit("true", Value::Bool(true)),
            Some(b'f') => self.lit("false", Value::Bool(false)),
            Some(b'"') => Ok(Value::String(self.string()?)),
            Some(b'[') => {
                self.nest()?;
                self.i += 1;
                let mut a = Vec::new();
                self.ws();
                if self.b.get(self.i) == Some(&b']') {
                    self.i += 1;
                } else {
                    loop {
                        a.push(self.value()?);
                        self.ws();
                        match self.b.get(self.i) {
                            Some(b',') => self.i += 1,
                            Some(b']') => {
                                self.i += 1;
                                break;
                            }
                            _ => return Err(self.err("after array element")),
                        }
                    }
                }
                self.depth -= 1;
                Ok(Value::Array(a))
            }
            Some(b'{') => {
                self.nest()?;
                self.i += 1;
                let mut m = BTreeMap::new();
                self.ws();
                if self.b.get(self.i) == Some(&b'}') {
                    self.i += 1;
                } else {
                    loop {
                        self.ws();
                        if self.b.get(self.i) != Some(&b'"') {
                            return Err(self.err("looking for beginning of object key string"));
                        }
                        let k = self.string()?;
                        self.ws();
                        if self.b.get(self.i) != Some(&b':') {
                            return Err(self.err("after object key"));
                        }
                        self.i += 1;
                        let v = self.value()?;
                        m.insert(k, v);
                        self.ws();
                        match self.b.get(self.i) {
                            Some(b',') => self.i += 1,
                            Some(b'}') => {
                                self.i += 1;
                                break;
                            }
                            _ => return Err(self.err("after object key:value pair")),
                        }
                    }
                }
                self.depth -= 1;
                Ok(Value::Object(m))
            }
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.err("looking for beginning of value")),
        }
    }

    fn nest(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err("exceeded max depth".to_string());
        }
        Ok(())
    }

    fn number(&mut self) -> Result<Value, String> {
        let start = self.i;
        let mut float = false;
        while let Some(&c) = self.b.get(self.i) {
            match c {
                b'0'..=b'9' | b'-' | b'+' => {}
                b'.' | b'e' | b'E' => float = true,
                _ => break,
            }
            self.i += 1;
        }
        let s = std::str::from_utf8(&self.b[start..self.i]).unwrap_or("");
        if !float {
            if let Ok(n) = s.parse::<i64>() {
                return Ok(Value::Int(n));
            }
        }
        s.parse::<f64>().map(Value::Float).map_err(|_| format!("invalid number {:?} at offset {}", s, start))
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let h = self.b.get(self.i..self.i + 4).ok_or_else(|| self.err("in \\u escape"))?;
        let s = std::str::from_utf8(h).map_err(|_| self.err("in \\u escape"))?;
        let v = u32::from_str_radix(s, 16).map_err(|_| self.err("in \\u escape"))?;
        self.i += 4;
        Ok(v)
    }

    fn string(&mut self) -> Result<String, String> {
        self.i += 1; // the opening quote
        let mut out = Vec::new();
        loop {
            let start = self.i;
            while let Some(&c) = self.b.get(self.i) {
                if c == b'"' || c == b'\\' || c < 0x20 {
                    break;
                }
                self.i += 1;
            }
            out.extend_from_slice(&self.b[start..self.i]);
            match self.b.get(self.i) {
                None => return Err(self.err("in string literal")),
                Some(b'"') => {
                    self.i += 1;
                    // Invalid UTF-8 becomes U+FFFD, as with Go's encoding/json.
                    return Ok(String::from_utf8_lossy(&out).into_owned());
                }
                Some(b'\\') => {
                    self.i += 1;
                    let c = *self.b.get(self.i).ok_or_else(|| self.err("in string escape code"))?;
                    self.i += 1;
                    let ch = match c {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let mut u = self.hex4()?;
                            if (0xd800..0xdc00).contains(&u) && self.b[self.i..].starts_with(b"\\u") {
                                let save = self.i;
                                self.i += 2;
                                let lo = self.hex4()?;
                                if (0xdc00..0xe000).contains(&lo) {
                                    u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
                                } else {
                                    self.i = save;
                                }
                            }
                            char::from_u32(u).unwrap_or('\u{fffd}')
                        }
                        _ => {
                            self.i -= 1;
                            return Err(self.err("in string escape code"));
                        }
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                Some(_) => return Err(self.err("in string literal")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let v = parse(br#" {"b":[1,-2.5,true,null],"a":"x\u00e9\n\"<&>","c":{}} "#).unwrap();
        assert_eq!(v.to_json(), r#"{"a":"xé\n\"\u003c\u0026\u003e","b":[1,-2.5,true,null],"c":{}}"#);
        assert_eq!(parse(b"9223372036854775807").unwrap(), Value::Int(i64::MAX));
        assert_eq!(parse(b"4711.0").unwrap().as_i64(), Some(4711));
        assert_eq!(parse_string(br#""\ud83d\ude00""#).unwrap(), "😀");
    }

    #[test]
    fn errors() {
        for bad in [&b"{"[..], b"[1,]", b"{\"a\" 1}", b"tru", b"\"abc", b"1 2", b""] {
            assert!(parse(bad).is_err(), "{:?} parsed", std::str::from_utf8(bad));
        }
    }
}
