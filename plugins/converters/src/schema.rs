//! Connect schemas as JsonConverter writes them ({"type":"struct","fields":[...],"optional":false}),
//! parsed as JsonConverter.asConnectSchema does, with its error texts. A schema keeps only what
//! conversions need; the converter writes a schema back as the compact form of the JSON it read.

use std::collections::HashMap;

use super::conform::{self, Options};
use super::decimal::MAX_SCALE;
use super::scan::{self, Cursor, Dialect};
use wasmconnect::words::append_json_string;

/// A Connect schema type: the SDK's, whose JSON and Java names the converter's texts use.
pub use wasmconnect::connect::Type;

pub const DECIMAL_NAME: &str = "org.apache.kafka.connect.data.Decimal";
pub const TIME_NAME: &str = "org.apache.kafka.connect.data.Time";

/// The logical types that change how a value is read or written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Logical {
    None,
    /// Decimal (bytes) with its scale.
    Decimal(i32),
    /// Time (int32): milliseconds of the day, 0 to 86400000 (Time.toLogical).
    Time,
}

/// A parsed schema.
#[derive(Debug)]
pub struct Schema {
    pub typ: Type,
    pub optional: bool,
    pub logical: Logical,
    pub fields: Vec<Field>,
    /// By name, for structs with many fields.
    index: Option<HashMap<String, usize>>,
    pub items: Option<Box<Schema>>,
    pub keys: Option<Box<Schema>>,
    pub values: Option<Box<Schema>>,
    pub default: Option<Default>,
}

#[derive(Debug)]
pub struct Field {
    pub name: String,
    /// The name as a compact payload's key: `"name":` (see verbatim).
    pub key: Vec<u8>,
    pub schema: Schema,
}

/// A schema's default value, as the converter writes it with decimal.format BASE64 and NUMERIC.
#[derive(Debug)]
pub struct Default {
    pub base64: Vec<u8>,
    pub numeric: Vec<u8>,
}

impl Schema {
    /// The index of the field named `name` (decoded bytes).
    pub fn field_index(&self, name: &[u8]) -> Option<usize> {
        if let Some(idx) = &self.index {
            return std::str::from_utf8(name).ok().and_then(|n| idx.get(n).copied());
        }
        self.fields.iter().position(|f| f.name.as_bytes() == name)
    }
}

/// How deeply schemas may nest: more than any real one, and a bound on the guest stack a schema
/// can make the converter use.
const MAX_DEPTH: usize = 64;

/// Parses a schema's JSON; the JSON null is no schema.
pub fn parse(raw: &[u8]) -> Result<Option<Schema>, String> {
    scan::check(raw, Dialect::Decoder).map_err(|e| format!("invalid schema JSON: {}", e))?;
    let raw = scan::trim(raw);
    if raw == b"null" {
        return Ok(None);
    }
    build(raw, 0).map(Some)
}

/// The members of the object `raw` (valid JSON) by key, in order; `None` if it is not an object.
fn members(raw: &[u8]) -> Option<Vec<(Vec<u8>, &[u8])>> {
    let mut c = Cursor::new(raw);
    c.ws();
    if c.peek() != Some(b'{') {
        return None;
    }
    let mut out = Vec::new();
    let mut scratch = Vec::new();
    if !c.open(b'}') {
        return Some(out);
    }
    loop {
        let key = c.key(&mut scratch).ok()?.bytes().to_vec();
        c.ws();
        let start = c.i;
        c.skip(&mut scratch).ok()?;
        out.push((key, &raw[start..c.i]));
        if !c.next(b'}').ok()? {
            return Some(out);
        }
    }
}

/// The elements of the array `raw` (valid JSON); `None` if it is not an array.
fn elements(raw: &[u8]) -> Option<Vec<&[u8]>> {
    let mut c = Cursor::new(raw);
    c.ws();
    if c.peek() != Some(b'[') {
        return None;
    }
    let mut out = Vec::new();
    let mut scratch = Vec::new();
    if !c.open(b']') {
        return Some(out);
    }
    loop {
        c.ws();
        let start = c.i;
        c.skip(&mut scratch).ok()?;
        out.push(&raw[start..c.i]);
        if !c.next(b']').ok()? {
            return Some(out);
        }
    }
}

/// The string value `raw`, if it is a JSON string.
fn string(raw: &[u8]) -> Option<String> {
    if raw.first() != Some(&b'"') {
        return None;
    }
    let mut scratch = Vec::new();
    let s = Cursor::new(raw).string(&mut scratch).ok()?.bytes().to_vec();
    Some(String::from_utf8_lossy(&s).into_owned())
}

/// The value of the last member named `key` (a JSON object keeps the last of repeated keys).
fn get<'a>(m: &[(Vec<u8>, &'a [u8])], key: &str) -> Option<&'a [u8]> {
    m.iter().rev().find(|(k, _)| k == key.as_bytes()).map(|(_, v)| *v)
}

/// A member that is present and not null.
fn get_non_null<'a>(m: &[(Vec<u8>, &'a [u8])], key: &str) -> Option<&'a [u8]> {
    get(m, key).filter(|v| *v != b"null")
}

/// Follows JsonConverter.asConnectSchema, with its error messages.
fn build(raw: &[u8], depth: usize) -> Result<Schema, String> {
    if depth > MAX_DEPTH {
        return Err(format!("Schema nests more than {} levels deep", MAX_DEPTH));
    }
    let m = members(raw).unwrap_or_default();
    let typ = match get(&m, "type").and_then(string) {
        Some(t) => t,
        None => return Err("Schema must contain 'type' field".to_string()),
    };
    let t = Type::from_json_name(&typ).ok_or_else(|| format!("Unknown schema type: {}", typ))?;
    let mut s = Schema { typ: t, optional: false, logical: Logical::None, fields: Vec::new(), index: None, items: None, keys: None, values: None, default: None };
    match t {
        Type::Array => {
            let items = get_non_null(&m, "items").ok_or("Array schema did not specify the element type")?;
            s.items = Some(Box::new(build(items, depth + 1)?));
        }
        Type::Map => {
            let keys = get_non_null(&m, "keys").ok_or("Map schema did not specify the key type")?;
            let values = get_non_null(&m, "values").ok_or("Map schema did not specify the value type")?;
            s.keys = Some(Box::new(build(keys, depth + 1)?));
            s.values = Some(Box::new(build(values, depth + 1)?));
        }
        Type::Struct => {
            let fields = get(&m, "fields").and_then(elements).ok_or("Struct schema's \"fields\" argument is not an array.")?;
            for f in fields {
                let fm = members(f).unwrap_or_default();
                let name = get(&fm, "field").and_then(string).ok_or("Struct schema's field name not specified properly")?;
                if s.field_index(name.as_bytes()).is_some() {
                    return Err(format!("Cannot create field because of field name duplication {}", name));
                }
                let schema = build(f, depth + 1)?;
                let mut key = Vec::with_capacity(name.len() + 3);
                append_json_string(&mut key, name.as_bytes());
                key.push(b':');
                s.fields.push(Field { name, key, schema });
            }
            if s.fields.len() > 8 {
                s.index = Some(s.fields.iter().enumerate().map(|(i, f)| (f.name.clone(), i)).collect());
            }
        }
        _ => {}
    }
    s.optional = get(&m, "optional") == Some(b"true");
    let name = get(&m, "name").and_then(string).unwrap_or_default();
    let mut scale: Option<String> = None;
    if let Some(p) = get(&m, "parameters").and_then(members) {
        for (k, v) in &p {
            let v = string(v).ok_or("Schema parameters must have string values.")?;
            if k == b"scale" {
                scale = Some(v);
            }
        }
    }
    if name == DECIMAL_NAME && t == Type::Bytes {
        let n = scale.as_deref().and_then(|v| v.parse::<i32>().ok()).ok_or("Invalid Decimal schema: scale parameter not found.")?;
        if n.abs() > MAX_SCALE {
            return Err(format!("Invalid Decimal schema: scale {} is out of range (at most {} either way)", n, MAX_SCALE));
        }
        s.logical = Logical::Decimal(n);
    } else if name == TIME_NAME && t == Type::Int32 {
        s.logical = Logical::Time;
    }
    if let Some(d) = get_non_null(&m, "default") {
        // The default is read as a payload of its schema is, by the one parser.
        let read = Options { root: "default", ..Options::default() };
        let written = |numeric: bool| conform::canonical(&s, d, &Options { numeric, ..read });
        conform::check(&s, d, &read).map_err(|e| format!("Invalid default value: {}", e))?;
        let base64 = written(false).map_err(|e| format!("Invalid default value: {}", e))?;
        let numeric = written(true).map_err(|e| format!("Invalid default value: {}", e))?;
        s.default = Some(Default { base64, numeric });
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kafka_texts() {
        for (raw, want) in [
            (&br#"{"optional":true}"#[..], "Schema must contain 'type' field"),
            (br#"{"type":"int128"}"#, "Unknown schema type: int128"),
            (br#"{"type":"array"}"#, "Array schema did not specify the element type"),
            (br#"{"type":"map","values":{"type":"string"}}"#, "Map schema did not specify the key type"),
            (br#"{"type":"map","keys":{"type":"string"}}"#, "Map schema did not specify the value type"),
            (br#"{"type":"struct","fields":{}}"#, "Struct schema's \"fields\" argument is not an array."),
            (br#"{"type":"struct","fields":[{"type":"string"}]}"#, "Struct schema's field name not specified properly"),
            (br#"{"type":"struct","fields":[{"type":"string","field":"a"},{"type":"int8","field":"a"}]}"#, "Cannot create field because of field name duplication a"),
            (br#"{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal"}"#, "Invalid Decimal schema: scale parameter not found."),
            (br#"{"type":"string","parameters":{"a":1}}"#, "Schema parameters must have string values."),
            (br#"{"type":"int32","default":"x"}"#, "Invalid default value: Invalid value for schema type INT32 at default: found STRING \"x\""),
            (br#"{"type":"#, "invalid schema JSON: unexpected EOF"),
        ] {
            assert_eq!(parse(raw).unwrap_err(), want, "{}", String::from_utf8_lossy(raw));
        }
        assert!(parse(b" null ").unwrap().is_none());
        let s = parse(br#"{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"},"default":"MDk="}"#).unwrap().unwrap();
        assert_eq!(s.logical, Logical::Decimal(2));
        let d = s.default.unwrap();
        assert_eq!((&d.base64[..], &d.numeric[..]), (&b"\"MDk=\""[..], &b"123.45"[..]));
    }
}
