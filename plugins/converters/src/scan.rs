//! Byte-level JSON: a syntax check with the texts of Go's encoding/json (which the Go converters
//! gave), compaction, and a cursor with the payload parser's error texts; the eight-bytes-a-step
//! helpers and Jackson's string writing are the SDK's (wasmconnect::words), which the
//! transformations share. Nothing here builds a tree or allocates per value.

use wasmconnect::words::{plain_end, utf8_len, REPLACEMENT};

/// JSON white space.
pub fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

/// `b` without leading and trailing ASCII white space (Go's bytes.TrimSpace for ASCII).
pub fn trim(b: &[u8]) -> &[u8] {
    let ws = |c: &u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c');
    // Nearly always: nothing to trim, which is seen without entering a loop.
    match (b.first(), b.last()) {
        (Some(f), Some(l)) if !ws(f) && !ws(l) => return b,
        _ => {}
    }
    let start = b.iter().position(|c| !ws(c)).unwrap_or(b.len());
    let end = b.iter().rposition(|c| !ws(c)).map_or(start, |i| i + 1);
    &b[start..end]
}

/// How a syntax check words the end of input and what follows the value: as json.Unmarshal (and
/// json.Compact) do, or as a json.Decoder does (the Go converter read schemaless values and schemas
/// with one).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Unmarshal,
    Decoder,
}

/// Checks that `b` is exactly one JSON value with optional white space around it, and returns the
/// error text Go's encoding/json gives otherwise ("invalid character 'x' looking for beginning of
/// value"). It keeps its own stack, so deep nesting cannot overflow the guest's stack.
pub fn check(b: &[u8], dialect: Dialect) -> Result<(), String> {
    let eof = || {
        Err(match dialect {
            Dialect::Unmarshal => "unexpected end of JSON input".to_string(),
            Dialect::Decoder => "unexpected EOF".to_string(),
        })
    };
    let bad = |c: u8, ctx: &str| Err(format!("invalid character {} {}", quote_char(c), ctx));
    let mut i = 0;
    while i < b.len() && is_ws(b[i]) {
        i += 1;
    }
    if i == b.len() && dialect == Dialect::Decoder {
        return Err("EOF".to_string());
    }
    // The open containers: b'{' or b'['.
    let mut stack: Vec<u8> = Vec::new();
    'value: loop {
        // A value starts at i (after white space).
        while i < b.len() && is_ws(b[i]) {
            i += 1;
        }
        let c = match b.get(i) {
            Some(&c) => c,
            None => return eof(),
        };
        match c {
            b'{' | b'[' => {
                i += 1;
                while i < b.len() && is_ws(b[i]) {
                    i += 1;
                }
                let close = if c == b'{' { b'}' } else { b']' };
                match b.get(i) {
                    None => return eof(),
                    Some(&d) if d == close => {
                        i += 1;
                    }
                    Some(_) => {
                        stack.push(c);
                        if c == b'{' {
                            i = object_key(b, i, dialect)?;
                        }
                        continue 'value;
                    }
                }
            }
            b'"' => i = string_end(b, i, dialect)?,
            b'-' | b'0'..=b'9' => i = number_end(b, i, dialect)?,
            b't' | b'f' | b'n' => {
                let word: &[u8] = match c {
                    b't' => b"true",
                    b'f' => b"false",
                    _ => b"null",
                };
                for (k, &w) in word.iter().enumerate() {
                    match b.get(i + k) {
                        None => return eof(),
                        Some(&x) if x != w => {
                            return bad(x, &format!("in literal {} (expecting {})", std::str::from_utf8(word).unwrap(), quote_char(w)));
                        }
                        _ => {}
                    }
                }
                i += word.len();
            }
            c => return bad(c, "looking for beginning of value"),
        }
        // After a value: close containers or go on to the next element.
        loop {
            while i < b.len() && is_ws(b[i]) {
                i += 1;
            }
            let top = match stack.last() {
                None => {
                    return match b.get(i) {
                        None => Ok(()),
                        Some(_) if dialect == Dialect::Decoder => Err(format!("unexpected data after the JSON value at byte {}", i)),
                        Some(&c) => bad(c, "after top-level value"),
                    };
                }
                Some(&t) => t,
            };
            let c = match b.get(i) {
                Some(&c) => c,
                None => return eof(),
            };
            match (top, c) {
                (b'{', b',') => {
                    i = object_key(b, i + 1, dialect)?;
                    continue 'value;
                }
                (b'[', b',') => {
                    i += 1;
                    continue 'value;
                }
                (b'{', b'}') | (b'[', b']') => {
                    i += 1;
                    stack.pop();
                }
                (b'{', c) => return bad(c, "after object key:value pair"),
                (_, c) => return bad(c, "after array element"),
            }
        }
    }
}

/// Checks an object key and its colon from `i` (before white space); returns where the value
/// starts.
fn object_key(b: &[u8], mut i: usize, dialect: Dialect) -> Result<usize, String> {
    while i < b.len() && is_ws(b[i]) {
        i += 1;
    }
    match b.get(i) {
        None => return check_eof(dialect),
        Some(b'"') => {}
        Some(&c) => return Err(format!("invalid character {} looking for beginning of object key string", quote_char(c))),
    }
    i = string_end(b, i, dialect)?;
    while i < b.len() && is_ws(b[i]) {
        i += 1;
    }
    match b.get(i) {
        None => check_eof(dialect),
        Some(b':') => Ok(i + 1),
        Some(&c) => Err(format!("invalid character {} after object key", quote_char(c))),
    }
}

fn check_eof<T>(dialect: Dialect) -> Result<T, String> {
    Err(match dialect {
        Dialect::Unmarshal => "unexpected end of JSON input".to_string(),
        Dialect::Decoder => "unexpected EOF".to_string(),
    })
}

/// The end of the string starting at the quote at `i`.
fn string_end(b: &[u8], mut i: usize, dialect: Dialect) -> Result<usize, String> {
    i += 1;
    loop {
        i = plain_end(b, i);
        let c = match b.get(i) {
            Some(&c) => c,
            None => return check_eof(dialect),
        };
        match c {
            b'"' => return Ok(i + 1),
            b'\\' => {
                match b.get(i + 1) {
                    None => return check_eof(dialect),
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => i += 2,
                    Some(b'u') => {
                        for k in 0..4 {
                            match b.get(i + 2 + k) {
                                None => return check_eof(dialect),
                                Some(h) if h.is_ascii_hexdigit() => {}
                                Some(&h) => return Err(format!("invalid character {} in \\u hexadecimal character escape", quote_char(h))),
                            }
                        }
                        i += 6;
                    }
                    Some(&e) => return Err(format!("invalid character {} in string escape code", quote_char(e))),
                }
            }
            c if c < 0x20 => return Err(format!("invalid character {} in string literal", quote_char(c))),
            _ => i += 1,
        }
    }
}

/// The end of the number starting at `i`, as Go's scanner reads one.
fn number_end(b: &[u8], mut i: usize, dialect: Dialect) -> Result<usize, String> {
    let digit = |i: usize| b.get(i).map_or(false, |c| c.is_ascii_digit());
    let fail = |i: usize, ctx: &str| match b.get(i) {
        None => check_eof(dialect),
        Some(&c) => Err(format!("invalid character {} {}", quote_char(c), ctx)),
    };
    if b[i] == b'-' {
        i += 1;
        if !digit(i) {
            return fail(i, "in numeric literal");
        }
    }
    if b[i] == b'0' {
        i += 1;
    } else {
        while digit(i) {
            i += 1;
        }
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if !digit(i) {
            return fail(i, "after decimal point in numeric literal");
        }
        while digit(i) {
            i += 1;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !digit(i) {
            return fail(i, "in exponent of numeric literal");
        }
        while digit(i) {
            i += 1;
        }
    }
    Ok(i)
}

/// Appends valid JSON `b` to `out` without the white space between tokens, as json.Compact does.
pub fn compact(b: &[u8], out: &mut Vec<u8>) {
    let mut i = 0;
    let mut start = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                loop {
                    i = plain_end(b, i);
                    match b.get(i) {
                        Some(b'\\') => i += 2,
                        Some(b'"') | None => break,
                        Some(_) => i += 1,
                    }
                }
                i += 1;
            }
            c if is_ws(c) => {
                out.extend_from_slice(&b[start..i]);
                i += 1;
                start = i;
            }
            _ => i += 1,
        }
    }
    out.extend_from_slice(&b[start..b.len().min(i)]);
}

/// Go's quoting of a byte in a syntax error: 'x', '\n', '\x01', '\'' (quoteChar and %q of a byte).
pub fn quote_char(c: u8) -> String {
    match c {
        b'\'' => "'\\''".to_string(),
        b'"' => "'\"'".to_string(),
        _ => {
            let mut s = String::from("'");
            quote_rune(&mut s, c as u32 as u8 as char, true);
            s.push('\'');
            s
        }
    }
}

/// Appends `c` as Go's strconv quoting writes it inside quotes.
fn quote_rune(out: &mut String, c: char, single: bool) {
    match c {
        '\u{7}' => out.push_str("\\a"),
        '\u{8}' => out.push_str("\\b"),
        '\u{c}' => out.push_str("\\f"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\u{b}' => out.push_str("\\v"),
        '\\' => out.push_str("\\\\"),
        '"' if !single => out.push_str("\\\""),
        c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
        c if (0x80..0xa1).contains(&(c as u32)) || c as u32 == 0xad || c == '\u{2028}' || c == '\u{2029}' || c == '\u{feff}' => {
            out.push_str(&format!("\\u{:04x}", c as u32))
        }
        c => out.push(c),
    }
}

/// `s` quoted as Go's strconv.Quote does: invalid UTF-8 bytes as \x escapes.
pub fn go_quote_bytes(s: &[u8]) -> String {
    let mut out = String::from("\"");
    let mut i = 0;
    while i < s.len() {
        match utf8_len(&s[i..]) {
            Some(n) => {
                let ch = std::str::from_utf8(&s[i..i + n]).unwrap().chars().next().unwrap();
                quote_rune(&mut out, ch, false);
                i += n;
            }
            None => {
                out.push_str(&format!("\\x{:02x}", s[i]));
                i += 1;
            }
        }
    }
    out.push('"');
    out
}


/// Appends `s` to `out` as valid UTF-8, each run of invalid bytes replaced by one U+FFFD (Go's
/// strings.ToValidUTF8).
pub fn append_valid_utf8(out: &mut Vec<u8>, mut s: &[u8]) {
    loop {
        match std::str::from_utf8(s) {
            Ok(_) => {
                out.extend_from_slice(s);
                return;
            }
            Err(e) => {
                let good = e.valid_up_to();
                out.extend_from_slice(&s[..good]);
                out.extend_from_slice(REPLACEMENT);
                s = &s[good..];
                // Skip the whole run of invalid bytes.
                while !s.is_empty() && utf8_len(s).is_none() {
                    s = &s[1..];
                }
            }
        }
    }
}

/// The JSON type of the value that starts with `c`, as Jackson's JsonNodeType names it; `None` if
/// no JSON value starts with `c`.
pub fn kind_of(c: u8) -> Option<&'static str> {
    match c {
        b'{' => Some("OBJECT"),
        b'[' => Some("ARRAY"),
        b'"' => Some("STRING"),
        b't' | b'f' => Some("BOOLEAN"),
        b'n' => Some("NULL"),
        b'-' | b'0'..=b'9' => Some("NUMBER"),
        _ => None,
    }
}

/// A position in a JSON text, with the payload parser's error texts ("invalid JSON payload:
/// unexpected 'x' at byte 4, want a number").
#[derive(Clone, Copy)]
pub struct Cursor<'a> {
    pub b: &'a [u8],
    pub i: usize,
    /// Whether `ws` has passed over any white space: a text read to its end without is compact
    /// already, and is written as it is rather than compacted again.
    pub spaced: bool,
}

impl<'a> Cursor<'a> {
    pub fn new(b: &'a [u8]) -> Self {
        Cursor { b, i: 0, spaced: false }
    }

    pub fn ws(&mut self) {
        let start = self.i;
        while self.i < self.b.len() && is_ws(self.b[self.i]) {
            self.i += 1;
        }
        self.spaced |= self.i != start;
    }

    pub fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    pub fn at_end(&self) -> bool {
        self.i >= self.b.len()
    }

    /// Consumes `word` if the text continues with it.
    pub fn lit(&mut self, word: &[u8]) -> bool {
        if self.b[self.i..].starts_with(word) {
            self.i += word.len();
            true
        } else {
            false
        }
    }

    pub fn syntax(&self, what: &str) -> String {
        match self.b.get(self.i) {
            None => format!("invalid JSON payload: unexpected end of input, want {}", what),
            Some(&c) => format!("invalid JSON payload: unexpected {} at byte {}, want {}", quote_char(c), self.i, what),
        }
    }

    /// Scans a JSON number and returns its text and whether it has neither fraction nor exponent.
    pub fn number(&mut self) -> Result<(&'a [u8], bool), String> {
        let start = self.i;
        let b = self.b;
        let digit = |i: usize| b.get(i).map_or(false, |c| c.is_ascii_digit());
        if b.get(self.i) == Some(&b'-') {
            self.i += 1;
        }
        if !digit(self.i) {
            self.i = start;
            return Err(self.syntax("a number"));
        }
        if b[self.i] == b'0' {
            self.i += 1;
        } else {
            while digit(self.i) {
                self.i += 1;
            }
        }
        let mut is_int = true;
        if b.get(self.i) == Some(&b'.') {
            self.i += 1;
            is_int = false;
            if !digit(self.i) {
                return Err(self.syntax("a digit"));
            }
            while digit(self.i) {
                self.i += 1;
            }
        }
        if matches!(b.get(self.i), Some(b'e' | b'E')) {
            self.i += 1;
            is_int = false;
            if matches!(b.get(self.i), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if !digit(self.i) {
                return Err(self.syntax("a digit"));
            }
            while digit(self.i) {
                self.i += 1;
            }
        }
        Ok((&b[start..self.i], is_int))
    }

    /// Parses the string at the cursor (on its opening quote). Without escapes it returns a slice
    /// of the text; else it decodes into `scratch` (cleared first) and returns that.
    pub fn string<'s>(&mut self, scratch: &'s mut Vec<u8>) -> Result<Str<'a, 's>, String> {
        self.i += 1;
        let start = self.i;
        let b = self.b;
        self.i = plain_end(b, self.i);
        if b.get(self.i) == Some(&b'"') {
            self.i += 1;
            return Ok(Str::Raw(&b[start..self.i - 1]));
        }
        scratch.clear();
        scratch.extend_from_slice(&b[start..self.i]);
        while self.i < b.len() {
            let c = b[self.i];
            if c == b'"' {
                self.i += 1;
                return Ok(Str::Decoded(scratch));
            }
            if c < 0x20 {
                return Err(self.syntax("no control character in a string"));
            }
            if c != b'\\' {
                let end = plain_end(b, self.i + 1);
                scratch.extend_from_slice(&b[self.i..end]);
                self.i = end;
                continue;
            }
            self.i += 1;
            let e = match b.get(self.i) {
                Some(&e) => e,
                None => break,
            };
            self.i += 1;
            match e {
                b'"' | b'\\' | b'/' => scratch.push(e),
                b'b' => scratch.push(8),
                b'f' => scratch.push(12),
                b'n' => scratch.push(b'\n'),
                b'r' => scratch.push(b'\r'),
                b't' => scratch.push(b'\t'),
                b'u' => {
                    let mut r = self.hex4().ok_or_else(|| self.syntax("4 hex digits"))?;
                    if (0xd800..0xe000).contains(&r) {
                        if b[self.i..].starts_with(b"\\u") {
                            self.i += 2;
                            let r2 = self.hex4().ok_or_else(|| self.syntax("4 hex digits"))?;
                            r = if (0xd800..0xdc00).contains(&r) && (0xdc00..0xe000).contains(&r2) {
                                0x10000 + ((r - 0xd800) << 10) + (r2 - 0xdc00)
                            } else {
                                0xfffd
                            };
                        } else {
                            r = 0xfffd;
                        }
                    }
                    let ch = char::from_u32(r).unwrap_or('\u{fffd}');
                    let mut buf = [0u8; 4];
                    scratch.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                _ => {
                    self.i -= 1;
                    return Err(self.syntax("an escape character"));
                }
            }
        }
        Err(self.syntax("a closing '\"'"))
    }

    fn hex4(&mut self) -> Option<u32> {
        let h = self.b.get(self.i..self.i + 4)?;
        let mut v = 0u32;
        for &c in h {
            v = v * 16 + (c as char).to_digit(16)?;
        }
        self.i += 4;
        Some(v)
    }

    /// Skips one value of any type, checking it as the payload parser reads a schemaless value.
    /// Nesting is kept on a heap stack, not the guest's.
    pub fn skip(&mut self, scratch: &mut Vec<u8>) -> Result<(), String> {
        let mut stack: Vec<u8> = Vec::new();
        loop {
            // A value starts here.
            self.ws();
            match self.peek() {
                None => return Err(self.syntax("a value")),
                Some(b'{') => {
                    self.i += 1;
                    self.ws();
                    if self.peek() == Some(b'}') {
                        self.i += 1;
                    } else {
                        stack.push(b'{');
                        self.key(scratch)?;
                        continue;
                    }
                }
                Some(b'[') => {
                    self.i += 1;
                    self.ws();
                    if self.peek() == Some(b']') {
                        self.i += 1;
                    } else {
                        stack.push(b'[');
                        continue;
                    }
                }
                Some(b'"') => {
                    self.string(scratch)?;
                }
                Some(b'n') => {
                    if !self.lit(b"null") {
                        return Err(self.syntax("null"));
                    }
                }
                Some(_) => {
                    if !self.lit(b"true") && !self.lit(b"false") {
                        self.number()?;
                    }
                }
            }
            // After a value.
            loop {
                let top = match stack.last() {
                    None => return Ok(()),
                    Some(&t) => t,
                };
                self.ws();
                match (top, self.peek()) {
                    (b'{', Some(b',')) => {
                        self.i += 1;
                        self.key(scratch)?;
                        break;
                    }
                    (b'[', Some(b',')) => {
                        self.i += 1;
                        break;
                    }
                    (b'{', Some(b'}')) | (b'[', Some(b']')) => {
                        self.i += 1;
                        stack.pop();
                    }
                    (b'{', _) => return Err(self.syntax("',' or '}'")),
                    _ => return Err(self.syntax("',' or ']'")),
                }
            }
        }
    }

    /// Parses an object key and its colon (before white space), decoding into `scratch`.
    pub fn key<'s>(&mut self, scratch: &'s mut Vec<u8>) -> Result<Str<'a, 's>, String> {
        self.ws();
        if self.peek() != Some(b'"') {
            return Err(self.syntax("an object key"));
        }
        let k = self.string(scratch)?;
        self.ws();
        if self.peek() != Some(b':') {
            return Err(self.syntax("':'"));
        }
        self.i += 1;
        Ok(k)
    }

    /// After an element of an array or a member of an object: true if another one follows (the
    /// comma is consumed), false at the end (the bracket is consumed).
    pub fn next(&mut self, close: u8) -> Result<bool, String> {
        self.ws();
        match self.peek() {
            Some(b',') => {
                self.i += 1;
                Ok(true)
            }
            Some(c) if c == close => {
                self.i += 1;
                Ok(false)
            }
            _ => Err(self.syntax(if close == b'}' { "',' or '}'" } else { "',' or ']'" })),
        }
    }

    /// On an opening bracket: consumes it and white space, and returns false if the container is
    /// empty (its closing bracket consumed too).
    pub fn open(&mut self, close: u8) -> bool {
        self.i += 1;
        self.ws();
        if self.peek() == Some(close) {
            self.i += 1;
            false
        } else {
            true
        }
    }
}

/// A parsed JSON string: a slice of the text when it had no escapes, else decoded in a scratch
/// buffer.
pub enum Str<'a, 's> {
    Raw(&'a [u8]),
    Decoded(&'s [u8]),
}

impl<'a, 's> Str<'a, 's> {
    pub fn bytes(&self) -> &[u8] {
        match self {
            Str::Raw(b) => b,
            Str::Decoded(b) => b,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_texts() {
        assert_eq!(check(b"{x}", Dialect::Decoder).unwrap_err(), "invalid character 'x' looking for beginning of object key string");
        assert_eq!(check(b"{\"schema\":", Dialect::Unmarshal).unwrap_err(), "unexpected end of JSON input");
        assert_eq!(check(b"[1,]", Dialect::Unmarshal).unwrap_err(), "invalid character ']' looking for beginning of value");
        assert_eq!(check(b"1 2", Dialect::Unmarshal).unwrap_err(), "invalid character '2' after top-level value");
        assert_eq!(check(b"1 2", Dialect::Decoder).unwrap_err(), "unexpected data after the JSON value at byte 2");
        assert_eq!(check(b"tru", Dialect::Decoder).unwrap_err(), "unexpected EOF");
        assert_eq!(check(b"trux", Dialect::Decoder).unwrap_err(), "invalid character 'x' in literal true (expecting 'e')");
        assert_eq!(check(b"\"a\x01\"", Dialect::Unmarshal).unwrap_err(), "invalid character '\\x01' in string literal");
        assert_eq!(check(b"", Dialect::Decoder).unwrap_err(), "EOF");
        assert_eq!(check(b"-x", Dialect::Unmarshal).unwrap_err(), "invalid character 'x' in numeric literal");
        assert_eq!(check(b"{\"a\" 1}", Dialect::Unmarshal).unwrap_err(), "invalid character '1' after object key");
        assert_eq!(check(b"{\"a\":1 1}", Dialect::Unmarshal).unwrap_err(), "invalid character '1' after object key:value pair");
        for ok in [&b" {\"a\": [1, 2.5e-3, \"x\\u00e9\", true, null, {}]} "[..], b"0", b"[[[]]]", b"\"\\\"\""] {
            assert_eq!(check(ok, Dialect::Unmarshal), Ok(()), "{:?}", std::str::from_utf8(ok));
        }
        let mut deep = vec![b'['; 100_000];
        deep.extend(vec![b']'; 100_000]);
        assert_eq!(check(&deep, Dialect::Unmarshal), Ok(()));
    }

    #[test]
    fn compacts() {
        let mut out = Vec::new();
        compact(b" { \"a b\" : [ 1 , \"\\\" x\" ] } ", &mut out);
        assert_eq!(out, b"{\"a b\":[1,\"\\\" x\"]}");
    }

    #[test]
    fn valid_utf8() {
        let mut out = Vec::new();
        append_valid_utf8(&mut out, b"a\xff\xfeb\xe2\x82");
        assert_eq!(String::from_utf8(out).unwrap(), "a\u{fffd}b\u{fffd}");
    }

    #[test]
    fn cursor() {
        let mut scratch = Vec::new();
        let mut c = Cursor::new(br#""a\u00e9\ud83d\ude00\n""#);
        assert_eq!(c.string(&mut scratch).unwrap().bytes(), "aé😀\n".as_bytes());
        let mut c = Cursor::new(br#"{"a":[1,{"b":null}],"c":"x"} tail"#);
        c.skip(&mut scratch).unwrap();
        assert_eq!(c.i, 28);
        let mut c = Cursor::new(b"[1,}");
        assert_eq!(c.skip(&mut scratch).unwrap_err(), "invalid JSON payload: unexpected '}' at byte 3, want a number");
        let mut c = Cursor::new(b"1.");
        assert_eq!(c.number().unwrap_err(), "invalid JSON payload: unexpected end of input, want a digit");
        assert_eq!(go_quote_bytes(b"a\"\x01\xff"), "\"a\\\"\\x01\\xff\"");
    }
}
