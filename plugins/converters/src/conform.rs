//! The payload parser: it reads a JSON payload against a Connect schema as JsonConverter reads one
//! (convertToConnect) and, when asked, writes it back as JsonConverter would write the value it
//! read (convertToJson), in one pass over the text and without building the value.
//!
//! A conversion first checks the payload and learns whether writing it again would say more than
//! the text does (a default filled in, an unknown struct field dropped, a decimal or integer in
//! another form: "rewritten"). Most payloads are not rewritten and are kept as they are (compacted
//! when written); the others are written in their canonical form by a second pass. The check
//! first tries the much cheaper one of verbatim, which recognises the usual such payload.

use super::base64;
use super::decimal::Unscaled;
use super::scan::{self, kind_of, Cursor, Str};
use super::schema::{Logical, Schema, Type};
use super::verbatim;
use wasmconnect::words::append_json_string;

/// The JsonConverter settings that change how a payload is read or written.
#[derive(Clone, Copy)]
pub struct Options {
    /// Names the payload in error messages: "Invalid value for schema type STRING at
    /// payload.tags[1]: found NUMBER 2".
    pub root: &'static str,
    /// Leaves a null null where the schema has a default (replace.null.with.default=false).
    pub keep_nulls: bool,
    /// The payload is a Connect value on its way to bytes (fromConnectData): a required null gets
    /// that direction's message.
    pub writing: bool,
    /// Writes decimals as JSON numbers (decimal.format=NUMERIC).
    pub numeric: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { root: "", keep_nulls: false, writing: false, numeric: false }
    }
}

/// Buffers a converter reuses from record to record.
#[derive(Default)]
pub struct Work {
    /// Decoded strings.
    scratch: Vec<u8>,
    /// Decoded base64.
    bytes: Vec<u8>,
    /// The spans of the keys of the string-keyed maps being read, to find repeated keys.
    keys: Vec<(usize, usize)>,
}

/// Checks `payload` against `s` and reports whether it is rewritten (see the module doc).
pub fn check_with(s: &Schema, payload: &[u8], o: &Options, w: &mut Work) -> Result<bool, String> {
    check_spacing(s, payload, o, w).map(|c| c.rewritten)
}

/// What `check_spacing` learned of a payload.
pub struct Checked {
    /// Writing it again would say more than the text does (see the module doc).
    pub rewritten: bool,
    /// It has white space between its tokens: it is not compact.
    pub spaced: bool,
}

/// `check_with`, and whether the payload is compact already, which spares a converter that
/// writes it as it is the pass that compacts it.
#[inline(always)]
pub fn check_spacing(s: &Schema, payload: &[u8], o: &Options, w: &mut Work) -> Result<Checked, String> {
    if verbatim::written_as_is(s, payload, o, w) {
        return Ok(Checked { rewritten: false, spaced: false });
    }
    check_spacing_parsed(s, payload, o, w)
}

/// `check_spacing` by the payload parser alone.
pub(crate) fn check_spacing_parsed(s: &Schema, payload: &[u8], o: &Options, w: &mut Work) -> Result<Checked, String> {
    let mut p = Parser { c: Cursor::new(payload), o, emit: false, rewritten: false, w };
    finish(&mut p, s, &mut Vec::new())?;
    Ok(Checked { rewritten: p.rewritten, spaced: p.c.spaced })
}

/// The end of the value of schema `s` at `i` in `b` if it is read without a rewrite and without
/// white space; `None` if not, or if it is invalid (a parse of the whole payload then says why).
pub fn verbatim_end(s: &Schema, b: &[u8], i: usize, o: &Options, w: &mut Work) -> Option<usize> {
    let mut p = Parser { c: Cursor { b, i, spaced: false }, o, emit: false, rewritten: false, w };
    p.value(s, &mut Vec::new()).ok()?;
    if p.rewritten || p.c.spaced {
        return None;
    }
    Some(p.c.i)
}

/// `check_with` with buffers of its own.
pub fn check(s: &Schema, payload: &[u8], o: &Options) -> Result<bool, String> {
    check_with(s, payload, o, &mut Work::default())
}

/// Appends the canonical form of `payload` (which has passed `check_with`) to `out`.
pub fn write_canonical(s: &Schema, payload: &[u8], o: &Options, w: &mut Work, out: &mut Vec<u8>) -> Result<(), String> {
    run(s, payload, o, true, w, out).map(|_| ())
}

/// The canonical form of `payload`.
pub fn canonical(s: &Schema, payload: &[u8], o: &Options) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    write_canonical(s, payload, o, &mut Work::default(), &mut out)?;
    Ok(out)
}

fn run(s: &Schema, payload: &[u8], o: &Options, emit: bool, w: &mut Work, out: &mut Vec<u8>) -> Result<bool, String> {
    let mut p = Parser { c: Cursor::new(payload), o, emit, rewritten: false, w };
    finish(&mut p, s, out)?;
    Ok(p.rewritten)
}

/// Reads the whole payload of `p`.
fn finish(p: &mut Parser, s: &Schema, out: &mut Vec<u8>) -> Result<(), String> {
    p.value(s, out).map_err(|e| e.text(p.o.root))?;
    p.c.ws();
    if !p.c.at_end() {
        return Err(format!("invalid JSON payload: unexpected data after the JSON value at byte {}", p.c.i));
    }
    Ok(())
}

/// What went wrong, and where: the path is collected on the way out of the parse, innermost step
/// first, so that a payload that is fine costs no path bookkeeping.
struct Fault {
    kind: Kind,
    path: Vec<Step>,
}

enum Kind {
    /// A message without a location (JSON syntax).
    Plain(String),
    /// "Invalid value for schema type T at <where>: <detail>".
    Mismatch(&'static str, String),
    /// "<message> (at <where>)".
    Located(String),
    /// "Invalid bytes field at <where>: <base64 error>".
    Bytes(String),
}

enum Step {
    Name(String),
    Index(usize),
}

impl Fault {
    fn at(mut self, step: Step) -> Fault {
        self.path.push(step);
        self
    }

    fn text(self, root: &str) -> String {
        let mut w = root.to_string();
        for s in self.path.iter().rev() {
            match s {
                Step::Index(i) => w.push_str(&format!("[{}]", i)),
                Step::Name(n) => {
                    if !w.is_empty() {
                        w.push('.');
                    }
                    w.push_str(n);
                }
            }
        }
        match (self.kind, w.is_empty()) {
            (Kind::Plain(m), _) => m,
            (Kind::Mismatch(t, d), true) => format!("Invalid value for schema type {}: {}", t, d),
            (Kind::Mismatch(t, d), false) => format!("Invalid value for schema type {} at {}: {}", t, w, d),
            (Kind::Located(m), true) => m,
            (Kind::Located(m), false) => format!("{} (at {})", m, w),
            (Kind::Bytes(e), true) => format!("Invalid bytes field: {}", e),
            (Kind::Bytes(e), false) => format!("Invalid bytes field at {}: {}", w, e),
        }
    }
}

fn fault(kind: Kind) -> Fault {
    Fault { kind, path: Vec::new() }
}

fn plain(msg: String) -> Fault {
    fault(Kind::Plain(msg))
}

fn located(msg: String) -> Fault {
    fault(Kind::Located(msg))
}

type Res = Result<(), Fault>;

struct Parser<'a, 'w> {
    c: Cursor<'a>,
    o: &'w Options,
    /// Writing the canonical form (the second pass), not only checking.
    emit: bool,
    rewritten: bool,
    w: &'w mut Work,
}

impl<'a, 'w> Parser<'a, 'w> {
    fn put(&self, out: &mut Vec<u8>, b: &[u8]) {
        if self.emit {
            out.extend_from_slice(b);
        }
    }

    fn syntax(&self, what: &str) -> Fault {
        plain(self.c.syntax(what))
    }

    fn mismatch(&self, s: &Schema, detail: String) -> Fault {
        fault(Kind::Mismatch(s.typ.java_name(), detail))
    }

    /// Describes the value at the cursor for an error message, as `found STRING "x"`.
    fn found(&self) -> String {
        let mut q = self.c;
        let c = q.peek().unwrap_or(0);
        let kind = format!("found {}", kind_of(c).unwrap_or(""));
        match c {
            b'"' => {
                let mut tmp = Vec::new();
                if let Ok(s) = q.string(&mut tmp) {
                    let b = s.bytes();
                    let shown = if b.len() > 40 { [&b[..40], b"..."].concat() } else { b.to_vec() };
                    return format!("{} {}", kind, scan::go_quote_bytes(&shown));
                }
            }
            b't' | b'f' => {
                let start = q.i;
                if q.lit(b"true") || q.lit(b"false") {
                    return format!("{} {}", kind, String::from_utf8_lossy(&q.b[start..q.i]));
                }
            }
            b'-' | b'0'..=b'9' => {
                if let Ok((tok, _)) = q.number() {
                    return format!("{} {}", kind, String::from_utf8_lossy(tok));
                }
            }
            _ => {}
        }
        kind
    }

    /// One value of schema `s`, following JsonConverter.convertToConnect.
    fn value(&mut self, s: &Schema, out: &mut Vec<u8>) -> Res {
        self.c.ws();
        let c = match self.c.peek() {
            Some(c) => c,
            None => return Err(self.syntax("a value")),
        };
        if c == b'n' {
            if !self.c.lit(b"null") {
                return Err(self.syntax("null"));
            }
            return self.null_for(s, out);
        }
        let kind = match kind_of(c) {
            Some(k) => k,
            None => return Err(self.syntax("a value")),
        };
        let number = c == b'-' || c.is_ascii_digit();
        match s.typ {
            Type::Boolean => {
                for word in [&b"true"[..], b"false"] {
                    if self.c.lit(word) {
                        self.put(out, word);
                        return Ok(());
                    }
                }
            }
            Type::Int8 | Type::Int16 | Type::Int32 | Type::Int64 if number => return self.integer(s, out),
            Type::Float32 | Type::Float64 if number => {
                let (tok, _) = self.c.number().map_err(plain)?;
                let f: f64 = std::str::from_utf8(tok).ok().and_then(|t| t.parse().ok()).unwrap_or(f64::INFINITY);
                if !f.is_finite() {
                    return Err(self.mismatch(s, format!("found NUMBER {}", String::from_utf8_lossy(tok))));
                }
                if self.emit {
                    write_float(out, f, s.typ == Type::Float32);
                }
                return Ok(());
            }
            Type::String if c == b'"' => {
                let st = self.c.string(&mut self.w.scratch).map_err(plain)?;
                if self.emit {
                    append_json_string(out, st.bytes());
                }
                return Ok(());
            }
            Type::Bytes => return self.bytes(s, c, out),
            Type::Array if c == b'[' => return self.array(s, out),
            Type::Map => return self.map(s, c, out),
            Type::Struct => {
                if c != b'{' {
                    return Err(located(format!("Structs should be encoded as JSON objects, but found {}", kind)));
                }
                return self.structure(s, out);
            }
            _ => {}
        }
        Err(self.mismatch(s, self.found()))
    }

    fn integer(&mut self, s: &Schema, out: &mut Vec<u8>) -> Res {
        let (tok, is_int) = self.c.number().map_err(plain)?;
        let bits = s.typ.int_bits().unwrap_or(64);
        let text = std::str::from_utf8(tok).unwrap_or("");
        let fits = |n: i64| bits == 64 || (n >= -(1i64 << (bits - 1)) && n < 1i64 << (bits - 1));
        let n = match text.parse::<i64>() {
            Ok(n) if is_int && fits(n) => n,
            _ => {
                let f: f64 = text.parse().unwrap_or(f64::NAN);
                let lim = 2f64.powi(bits as i32 - 1);
                if !(f.is_finite() && f.trunc() == f && f >= -lim && f < lim) {
                    return Err(self.mismatch(s, format!("{} is not an integer in range", text)));
                }
                self.rewritten = true;
                f as i64
            }
        };
        if s.logical == Logical::Time && !(0..=86_400_000).contains(&n) {
            return Err(located("Time values must use number of milliseconds greater than 0 and less than 86400000".to_string()));
        }
        if self.emit {
            out.extend_from_slice(n.to_string().as_bytes());
        }
        Ok(())
    }

    fn bytes(&mut self, s: &Schema, c: u8, out: &mut Vec<u8>) -> Res {
        let scale = match s.logical {
            Logical::Decimal(scale) => Some(scale),
            _ => None,
        };
        if c == b'"' {
            let st = self.c.string(&mut self.w.scratch).map_err(plain)?;
            base64::decode(st.bytes(), &mut self.w.bytes).map_err(|e| fault(Kind::Bytes(e)))?;
            match scale {
                None => {
                    if self.emit {
                        out.push(b'"');
                        base64::encode(out, &self.w.bytes);
                        out.push(b'"');
                    }
                }
                Some(scale) => {
                    if self.o.numeric {
                        self.rewritten = true; // base64 to a number
                    }
                    if self.emit {
                        self.write_decimal(&Unscaled::from_bytes(&self.w.bytes), scale, out);
                    }
                }
            }
            return Ok(());
        }
        if let Some(scale) = scale {
            if c == b'-' || c.is_ascii_digit() {
                let (tok, _) = self.c.number().map_err(plain)?;
                if !self.o.numeric {
                    self.rewritten = true; // a number to base64
                }
                let u = Unscaled::from_number(tok, scale).map_err(|e| located(format!("Invalid Decimal value: {}", e)))?;
                if self.emit {
                    self.write_decimal(&u, scale, out);
                }
                return Ok(());
            }
        }
        Err(self.mismatch(s, self.found()))
    }

    fn write_decimal(&mut self, u: &Unscaled, scale: i32, out: &mut Vec<u8>) {
        if self.o.numeric {
            u.write_text(scale, out);
        } else {
            self.w.bytes.clear();
            u.write_bytes(&mut self.w.bytes);
            out.push(b'"');
            base64::encode(out, &self.w.bytes);
            out.push(b'"');
        }
    }

    fn array(&mut self, s: &Schema, out: &mut Vec<u8>) -> Res {
        let items = s.items.as_deref().expect("array schema with items");
        self.put(out, b"[");
        if self.c.open(b']') {
            let mut i = 0;
            loop {
                if i > 0 {
                    self.put(out, b",");
                }
                self.value(items, out).map_err(|e| e.at(Step::Index(i)))?;
                i += 1;
                if !self.c.next(b']').map_err(plain)? {
                    break;
                }
            }
        }
        self.put(out, b"]");
        Ok(())
    }

    fn map(&mut self, s: &Schema, c: u8, out: &mut Vec<u8>) -> Res {
        let (keys, values) = (s.keys.as_deref().expect("map keys"), s.values.as_deref().expect("map values"));
        if keys.typ == Type::String {
            if c != b'{' {
                return Err(located(format!("Maps with string fields should be encoded as JSON objects, but found {}", kind_of(c).unwrap_or(""))));
            }
            return self.string_map(values, out);
        }
        if c != b'[' {
            return Err(located(format!("Maps with non-string fields should be encoded as JSON array of tuples, but found {}", kind_of(c).unwrap_or(""))));
        }
        self.put(out, b"[");
        if self.c.open(b']') {
            let mut i = 0;
            loop {
                if i > 0 {
                    self.put(out, b",");
                }
                self.tuple(keys, values, out).map_err(|e| e.at(Step::Index(i)))?;
                i += 1;
                if !self.c.next(b']').map_err(plain)? {
                    break;
                }
            }
        }
        self.put(out, b"]");
        Ok(())
    }

    /// One [key, value] entry of a map whose keys are not strings.
    fn tuple(&mut self, keys: &Schema, values: &Schema, out: &mut Vec<u8>) -> Res {
        self.c.ws();
        let c = self.c.peek().unwrap_or(0);
        if c != b'[' {
            return match kind_of(c) {
                None => Err(self.syntax("a value")),
                Some(k) => Err(located(format!("Found invalid map entry instead of array tuple: {}", k))),
            };
        }
        self.put(out, b"[");
        let mut n = 0;
        if self.c.open(b']') {
            loop {
                match n {
                    0 => self.value(keys, out)?,
                    1 => {
                        self.put(out, b",");
                        self.value(values, out)?
                    }
                    _ => self.c.skip(&mut self.w.scratch).map_err(plain)?,
                }
                n += 1;
                if !self.c.next(b']').map_err(plain)? {
                    break;
                }
            }
        }
        if n != 2 {
            return Err(located(format!("Found invalid map entry, expected length 2 but found :{}", n)));
        }
        self.put(out, b"]");
        Ok(())
    }

    /// A map with string keys, a JSON object. Written again, its keys are sorted and the last of
    /// repeated keys counts.
    fn string_map(&mut self, values: &Schema, out: &mut Vec<u8>) -> Res {
        let base = out.len();
        let kbase = self.w.keys.len();
        let mut entries: Vec<(Vec<u8>, usize, usize)> = Vec::new(); // second pass: key, value span in out
        if self.c.open(b'}') {
            loop {
                self.c.ws();
                let kstart = self.c.i;
                let k = self.c.key(&mut self.w.scratch).map_err(plain)?;
                if self.emit {
                    entries.push((k.bytes().to_vec(), 0, 0));
                }
                match k {
                    Str::Raw(b) => {
                        let at = kstart + 1;
                        self.w.keys.push((at, at + b.len()));
                    }
                    // Escaped keys are not compared: such a map is written again in full.
                    Str::Decoded(_) => self.rewritten = true,
                }
                let vstart = out.len();
                if let Err(e) = self.value(values, out) {
                    let mut tmp = Vec::new();
                    let mut q = Cursor { b: self.c.b, i: kstart, spaced: false };
                    let name = q.string(&mut tmp).map(|s| String::from_utf8_lossy(s.bytes()).into_owned()).unwrap_or_default();
                    return Err(e.at(Step::Name(name)));
                }
                if let Some(e) = entries.last_mut() {
                    e.1 = vstart - base;
                    e.2 = out.len() - base;
                }
                if !self.c.next(b'}').map_err(plain)? {
                    break;
                }
            }
        }
        let text = self.c.b;
        let spans = &mut self.w.keys[kbase..];
        spans.sort_unstable_by(|a, b| text[a.0..a.1].cmp(&text[b.0..b.1]));
        if spans.windows(2).any(|p| text[p[0].0..p[0].1] == text[p[1].0..p[1].1]) {
            self.rewritten = true; // a repeated key: the last one counts
        }
        self.w.keys.truncate(kbase);
        if self.emit {
            let region = out.split_off(base);
            entries.sort_by(|a, b| a.0.cmp(&b.0)); // stable: the last of equal keys stays last
            out.push(b'{');
            let mut first = true;
            for (i, e) in entries.iter().enumerate() {
                if entries.get(i + 1).map_or(false, |n| n.0 == e.0) {
                    continue;
                }
                if !first {
                    out.push(b',');
                }
                first = false;
                append_json_string(out, &e.0);
                out.push(b':');
                out.extend_from_slice(&region[e.1..e.2]);
            }
            out.push(b'}');
        }
        Ok(())
    }

    /// A struct, a JSON object: written again, its fields come in the schema's order, all of them,
    /// unknown ones dropped.
    fn structure(&mut self, s: &Schema, out: &mut Vec<u8>) -> Res {
        let n = s.fields.len();
        let mut seen_small = 0u64;
        let mut seen_big = if n > 64 { vec![false; n] } else { Vec::new() };
        let base = out.len();
        let mut spans: Vec<Option<(usize, usize)>> = if self.emit { vec![None; n] } else { Vec::new() };
        if self.c.open(b'}') {
            loop {
                let k = self.c.key(&mut self.w.scratch).map_err(plain)?;
                match s.field_index(k.bytes()) {
                    None => {
                        self.rewritten = true; // JsonConverter ignores fields the schema does not have
                        self.c.skip(&mut self.w.scratch).map_err(plain)?;
                    }
                    Some(i) => {
                        let seen = if n > 64 { std::mem::replace(&mut seen_big[i], true) } else { seen_small & 1 << i != 0 };
                        seen_small |= if n > 64 { 0 } else { 1 << i };
                        if seen {
                            self.rewritten = true; // a repeated field: the last one counts
                        }
                        let start = out.len();
                        let f = &s.fields[i];
                        self.value(&f.schema, out).map_err(|e| e.at(Step::Name(f.name.clone())))?;
                        if self.emit {
                            spans[i] = Some((start - base, out.len() - base));
                        }
                    }
                }
                if !self.c.next(b'}').map_err(plain)? {
                    break;
                }
            }
        }
        for (i, f) in s.fields.iter().enumerate() {
            let seen = if n > 64 { seen_big[i] } else { seen_small & 1 << i != 0 };
            if seen {
                continue;
            }
            let start = out.len();
            self.null_for(&f.schema, out).map_err(|e| e.at(Step::Name(f.name.clone())))?;
            if self.emit {
                spans[i] = Some((start - base, out.len() - base));
            }
        }
        if self.emit {
            let region = out.split_off(base);
            out.push(b'{');
            for (i, f) in s.fields.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                append_json_string(out, f.name.as_bytes());
                out.push(b':');
                let (a, b) = spans[i].unwrap_or((0, 0));
                out.extend_from_slice(&region[a..b]);
            }
            out.push(b'}');
        }
        Ok(())
    }

    /// A null (or absent field) of schema `s`: its default, unless nulls are kept; a null if `s`
    /// is optional; else an error.
    fn null_for(&mut self, s: &Schema, out: &mut Vec<u8>) -> Res {
        if let Some(d) = &s.default {
            let written = if self.o.numeric { &d.numeric } else { &d.base64 };
            if self.o.keep_nulls {
                // JsonConverter writes a required field's default for a null all the same (its
                // Struct.get gives the default), so the payload is rewritten then.
                if s.optional {
                    self.put(out, b"null");
                } else {
                    self.rewritten = true;
                    self.put(out, written);
                }
                return Ok(());
            }
            self.rewritten = true;
            self.put(out, written);
            return Ok(());
        }
        if s.optional {
            self.put(out, b"null");
            return Ok(());
        }
        if self.o.writing {
            return Err(located("Conversion error: null value for field that is required and has no default value".to_string()));
        }
        Err(located(format!("Invalid null value for required {} field", s.typ.java_name())))
    }
}

/// Appends `f` as the Go converter wrote floating point numbers: the shortest form that reads back
/// (strconv.FormatFloat(f, 'g', -1, bits)), with ".0" added to a whole number so that it reads
/// back as a floating point number, as Java's 1.0 does. NaN and infinities are strings.
pub fn write_float(out: &mut Vec<u8>, f: f64, single: bool) {
    if !f.is_finite() {
        let s = if f.is_nan() { "NaN" } else if f > 0.0 { "+Inf" } else { "-Inf" };
        append_json_string(out, s.as_bytes());
        return;
    }
    // Shortest round-trip digits and exponent: "-1.2345e6".
    let e = if single { format!("{:e}", f as f32) } else { format!("{:e}", f) };
    let (neg, e) = match e.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, &e[..]),
    };
    let (mant, exp) = e.split_once('e').unwrap_or((e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: Vec<u8> = mant.bytes().filter(|c| *c != b'.').collect();
    let start = out.len();
    if neg {
        out.push(b'-');
    }
    let nd = digits.len() as i32;
    let dp = exp + 1; // digits before the decimal point
    // Go's rule for the shortest 'g': an exponent when it is below -4 or from 6 on.
    if exp < -4 || exp >= 6 {
        out.push(digits[0]);
        if digits.len() > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..]);
        }
        out.push(b'e');
        out.push(if exp < 0 { b'-' } else { b'+' });
        let a = exp.unsigned_abs();
        if a < 10 {
            out.push(b'0');
        }
        out.extend_from_slice(a.to_string().as_bytes());
    } else {
        if dp > 0 {
            for k in 0..dp {
                out.push(*digits.get(k as usize).unwrap_or(&b'0'));
            }
        } else {
            out.push(b'0');
        }
        if nd > dp {
            out.push(b'.');
            for k in dp..nd {
                out.push(if k < 0 { b'0' } else { digits[k as usize] });
            }
        }
    }
    if !out[start..].iter().any(|c| matches!(c, b'.' | b'e' | b'E')) {
        out.extend_from_slice(b".0");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use super::super::schema;

    fn floats(f: f64, single: bool) -> String {
        let mut out = Vec::new();
        write_float(&mut out, f, single);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn float_texts() {
        assert_eq!(floats(1.5e300, false), "1.5e+300");
        assert_eq!(floats(100.0, false), "100.0");
        assert_eq!(floats(123456.0, false), "123456.0");
        assert_eq!(floats(1234567.0, false), "1.234567e+06");
        assert_eq!(floats(0.0001, false), "0.0001");
        assert_eq!(floats(0.00001, false), "1e-05");
        assert_eq!(floats(-2.5, false), "-2.5");
        assert_eq!(floats(0.1, true), "0.1");
        assert_eq!(floats(0.0, false), "0.0");
    }

    #[test]
    fn rewrites() {
        let s = schema::parse(br#"{"type":"struct","fields":[{"type":"int32","field":"b"},{"type":"map","keys":{"type":"string"},"values":{"type":"int32"},"optional":true,"field":"a"},{"type":"string","optional":true,"default":"d","field":"c"}]}"#)
            .unwrap()
            .unwrap();
        let o = Options { root: "payload", ..Options::default() };
        assert_eq!(check(&s, br#"{"b":1,"a":{"y":1,"x":2},"c":"z"}"#, &o), Ok(false));
        let p = br#"{"c":null,"a":{"y":1,"x":2,"y":3},"b":1.0,"zz":[1,{"q":null}]}"#;
        assert_eq!(check(&s, p, &o), Ok(true));
        assert_eq!(String::from_utf8(canonical(&s, p, &o).unwrap()).unwrap(), r#"{"b":1,"a":{"x":2,"y":3},"c":"d"}"#);
        assert_eq!(check(&s, br#"{"a":{"x":"1"}}"#, &o).unwrap_err(), r#"Invalid value for schema type INT32 at payload.a.x: found STRING "1""#);
        assert_eq!(check(&s, br#"{"b":1} x"#, &o).unwrap_err(), "invalid JSON payload: unexpected data after the JSON value at byte 8");
    }
}
