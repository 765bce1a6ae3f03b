//! JsonConverter: Kafka's org.apache.kafka.connect.json.JsonConverter.

use std::borrow::Cow;
use std::collections::HashMap;
use std::rc::Rc;

use wasmconnect::config::{get_bool, get_int};
use wasmconnect::wire::{self, Data, TAG_JSON, TAG_NULL};
use wasmconnect::words::{self, append_json_string};
use wasmconnect::{Config, ConfigDef, ConfigType, Converter, Error, Importance, Info, Keep, Result};

use super::conform::{self, Options, Work};
use super::scan::{self, Cursor, Dialect};
use super::schema::{self, Schema};
use super::{base64, converter_type_def, with_look, VERSION};

pub fn info() -> Info {
    Info {
        name: "JsonConverter",
        class: "org.apache.kafka.connect.json.JsonConverter",
        aliases: &[],
        version: VERSION,
        config: vec![
            with_look(
                ConfigDef::new("schemas.enable")
                    .typ(ConfigType::Boolean)
                    .default("true")
                    .importance(Importance::High)
                    .group("Schemas", 0)
                    .doc("Include schemas within each of the serialized values and keys."),
                "Enable Schemas",
            ),
            with_look(
                ConfigDef::new("schemas.cache.size")
                    .typ(ConfigType::Int)
                    .default("1000")
                    .importance(Importance::High)
                    .group("Schemas", 1)
                    .doc("The maximum number of schemas that can be cached in this converter instance."),
                "Schema Cache Size",
            ),
            with_look(
                ConfigDef::new("decimal.format")
                    .default("BASE64")
                    .importance(Importance::Low)
                    .group("Schemas", 2)
                    .validator(|v| {
                        if v.eq_ignore_ascii_case("BASE64") || v.eq_ignore_ascii_case("NUMERIC") {
                            Ok(())
                        } else {
                            Err("String must be one of (case insensitive): BASE64, NUMERIC".to_string())
                        }
                    })
                    .doc("Controls which format this converter will serialize decimals in. This value is case insensitive and can be either 'BASE64' (default) or 'NUMERIC'"),
                "Decimal Format",
            ),
            with_look(
                ConfigDef::new("replace.null.with.default")
                    .typ(ConfigType::Boolean)
                    .default("true")
                    .importance(Importance::Low)
                    .group("Schemas", 3)
                    .doc("Whether to replace fields that have a default value and that are null to the default value. When set to true, the default value is used, otherwise null is used."),
                "Replace null with default",
            ),
            converter_type_def(),
        ],
    }
}

/// The schemas JsonConverter writes for string and bytes values.
const STRING_SCHEMA: &[u8] = br#"{"type":"string","optional":false}"#;
const BYTES_SCHEMA: &[u8] = br#"{"type":"bytes","optional":true}"#;

pub const ENVELOPE_ERROR: &str = "JsonConverter with schemas.enable requires \"schema\" and \"payload\" fields and may not contain additional fields. \
If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter configuration.";

/// A schema as read from its JSON, and that JSON compact, as the converter writes it back.
struct Cached {
    raw: Vec<u8>,
    schema: Option<Schema>,
    compact: Vec<u8>,
    /// A vouched-for payload of this schema is written as it is (see `plain`).
    verbatim: bool,
}

/// Whether JsonConverter writes every valid compact payload of `s` as it is, whatever its
/// options: no defaults (which replace nulls), no logical types (Decimal is rewritten by
/// decimal.format, Time is range-checked), and only types whose JSON has one form (no floats, no
/// base64 bytes).
fn plain(s: &Schema) -> bool {
    use super::schema::{Logical, Type};
    let typ = matches!(s.typ, Type::Struct | Type::Array | Type::Map | Type::String | Type::Boolean | Type::Int8 | Type::Int16 | Type::Int32 | Type::Int64);
    let sub = |o: &Option<Box<Schema>>| o.as_deref().map_or(true, plain);
    typ && s.default.is_none()
        && matches!(s.logical, Logical::None)
        && s.fields.iter().all(|f| plain(&f.schema))
        && sub(&s.items)
        && sub(&s.keys)
        && sub(&s.values)
}

#[derive(Default)]
pub struct JsonConverter {
    schemas_enable: bool,
    cache_size: usize,
    /// Parsed schemas by the bytes they were read from (schemas.cache.size of them).
    cache: HashMap<Vec<u8>, Rc<Cached>>,
    /// The schema of the last record: records of a batch mostly share one.
    last: Option<Rc<Cached>>,
    /// Where `last`'s bytes were in the chain call that asked last (`schema_kept`): Keep::call,
    /// address and length; (0, 0, 0) when `last` was found otherwise.
    last_at: (u64, usize, usize),
    replace_null: bool,
    numeric: bool,
    work: Work,
}

impl JsonConverter {
    /// The parsed schema of `raw`, from the cache when it can. The last record's schema is
    /// checked for inline: it is nearly always the one.
    #[inline(always)]
    fn schema(&mut self, raw: &[u8]) -> std::result::Result<Rc<Cached>, String> {
        if let Some(c) = &self.last {
            if words::same(&c.raw, raw) {
                return Ok(c.clone());
            }
        }
        self.schema_cached(raw)
    }

    /// `schema` of bytes a chain's record borrows (from its input or from `keep`), which stay
    /// where they are and unchanged for the call: the records of a batch that a step gave one
    /// schema have it at one address, found without comparing its bytes.
    #[inline(always)]
    fn schema_kept(&mut self, raw: &[u8], keep: &Keep) -> std::result::Result<Rc<Cached>, String> {
        let at = keep.place(raw);
        if let Some(c) = &self.last {
            if self.last_at == at {
                return Ok(c.clone());
            }
        }
        let c = self.schema(raw)?;
        self.last_at = at;
        Ok(c)
    }

    /// `schema` of another schema than the last record's: out of line, as it is rare.
    #[inline(never)]
    fn schema_cached(&mut self, raw: &[u8]) -> std::result::Result<Rc<Cached>, String> {
        self.last_at = (0, 0, 0);
        if let Some(c) = self.cache.get(raw) {
            self.last = Some(c.clone());
            return Ok(c.clone());
        }
        let schema = schema::parse(raw)?;
        let mut compact = Vec::with_capacity(raw.len());
        scan::compact(raw, &mut compact);
        let verbatim = schema.as_ref().map_or(false, plain);
        let c = Rc::new(Cached { raw: raw.to_vec(), schema, compact, verbatim });
        if self.cache_size > 0 {
            if self.cache.len() >= self.cache_size {
                self.cache.clear();
            }
            self.cache.insert(c.raw.clone(), c.clone());
        }
        self.last = Some(c.clone());
        Ok(c)
    }

    fn options(&self, writing: bool) -> Options {
        Options { root: "payload", keep_nulls: !self.replace_null, writing, numeric: writing && self.numeric }
    }

    /// Starts the value: {"schema":<schema>,"payload": with schemas.enable, else nothing.
    #[inline]
    fn open(&self, out: &mut Vec<u8>, schema: &[u8]) {
        if self.schemas_enable {
            out.extend_from_slice(b"{\"schema\":");
            out.extend_from_slice(schema);
            out.extend_from_slice(b",\"payload\":");
        }
    }

    #[inline]
    fn close(&self, out: &mut Vec<u8>) {
        if self.schemas_enable {
            out.push(b'}');
        }
    }
}

impl Converter for JsonConverter {
    fn configure(&mut self, cfg: &Config, _is_key: bool) -> Result<()> {
        self.schemas_enable = get_bool(cfg, "schemas.enable", true)?;
        self.cache_size = get_int(cfg, "schemas.cache.size", 1000)?.max(0) as usize;
        self.replace_null = get_bool(cfg, "replace.null.with.default", true)?;
        self.numeric = cfg.get("decimal.format").map_or(false, |v| v.trim().eq_ignore_ascii_case("NUMERIC"));
        Ok(())
    }

    fn from_connect(&mut self, topic: &str, value: &Data<'_>) -> Result<Option<Vec<u8>>> {
        let mut out = Vec::new();
        Ok(if self.write_from_connect(topic, value, &mut out)? { Some(out) } else { None })
    }

    fn to_connect(&mut self, topic: &str, bytes: Option<&[u8]>) -> Result<Data<'static>> {
        let mut out = Vec::new();
        self.write_to_connect(topic, bytes, &mut out)?;
        let mut d = wire::Decoder::new(&out);
        let v = d.data("value").into_owned();
        d.finish("value")?;
        Ok(v)
    }

    fn write_from_connect(&mut self, _topic: &str, value: &Data<'_>, out: &mut Vec<u8>) -> Result<bool> {
        match value {
            Data::Null => Ok(false),
            Data::String(b) => {
                self.open(out, STRING_SCHEMA);
                append_json_string(out, b);
                self.close(out);
                Ok(true)
            }
            Data::Bytes(b) => {
                self.open(out, BYTES_SCHEMA);
                out.push(b'"');
                base64::encode(out, b);
                out.push(b'"');
                self.close(out);
                Ok(true)
            }
            Data::Json { schema, payload } => {
                let p = scan::trim(payload);
                let p: &[u8] = if p.is_empty() { b"null" } else { p };
                let cached = if schema.is_empty() {
                    None
                } else {
                    Some(self.schema(schema).map_err(|e| Error::new(format!("Converting Kafka Connect data to byte[] failed: invalid schema: {}", e)))?)
                };
                match cached.as_ref().and_then(|c| c.schema.as_ref().map(|s| (c, s))) {
                    None => {
                        scan::check(p, Dialect::Unmarshal)
                            .map_err(|e| Error::new(format!("Converting Kafka Connect data to byte[] failed due to serialization error: invalid JSON payload: {}", e)))?;
                        if p == b"null" {
                            return Ok(false); // schema == null && value == null
                        }
                        self.open(out, b"null");
                        scan::compact(p, out);
                    }
                    Some((c, s)) => {
                        let o = self.options(true);
                        let failed = |e: String| Error::new(format!("Converting Kafka Connect data to byte[] failed: {}", e));
                        let checked = conform::check_spacing(s, p, &o, &mut self.work).map_err(failed)?;
                        self.open(out, &c.compact);
                        if checked.rewritten {
                            conform::write_canonical(s, p, &o, &mut self.work, out).map_err(failed)?;
                        } else if checked.spaced {
                            scan::compact(p, out);
                        } else {
                            out.extend_from_slice(p);
                        }
                    }
                }
                self.close(out);
                Ok(true)
            }
        }
    }

    /// A struct a chain step of this module wrote and vouched for (a hoisted line, say) is valid
    /// and compact: with a plain schema it is written as it is, without the check against its
    /// schema that is most of what converting it costs.
    fn write_vouched_from_connect(&mut self, topic: &str, value: &Data<'_>, keep: &Keep, out: &mut Vec<u8>) -> Result<bool> {
        if let Data::Json { schema, payload } = value {
            if !schema.is_empty() && payload.first() == Some(&b'{') {
                let c = match schema {
                    Cow::Borrowed(raw) => self.schema_kept(raw, keep),
                    Cow::Owned(raw) => self.schema(raw),
                };
                if let Ok(c) = c {
                    if c.verbatim {
                        self.open(out, &c.compact);
                        out.extend_from_slice(payload);
                        self.close(out);
                        return Ok(true);
                    }
                }
            }
        }
        self.write_from_connect(topic, value, out)
    }

    fn write_to_connect(&mut self, _topic: &str, bytes: Option<&[u8]>, out: &mut Vec<u8>) -> Result<()> {
        let b = match bytes {
            None => {
                out.push(TAG_NULL);
                return Ok(());
            }
            Some(b) => b,
        };
        let serialization = |e: String| Error::new(format!("Converting byte[] to Kafka Connect data failed due to serialization error: {}", e));
        if !self.schemas_enable {
            let p = scan::trim(b);
            scan::check(p, Dialect::Decoder).map_err(serialization)?;
            put_json(out, b"", p);
            return Ok(());
        }
        if scan::trim(b).is_empty() {
            return Err(Error::new(ENVELOPE_ERROR));
        }
        // Reading the envelope, the schema and the payload checks all of the JSON on the way; only
        // when that fails is the text checked as a whole, so that a syntax error is reported as
        // one, whatever else is wrong (as Jackson's parse comes first in Kafka).
        self.read_envelope(b, out).map_err(|e| match scan::check(b, Dialect::Unmarshal) {
            Err(syntax) => serialization(syntax),
            Ok(()) => e,
        })
    }
}

impl JsonConverter {
    /// TO_CONNECT of an envelope with schemas.enable.
    fn read_envelope(&mut self, b: &[u8], out: &mut Vec<u8>) -> Result<()> {
        let last = self.last.as_ref().map(|c| &c.raw[..]);
        let (raw_schema, payload) = envelope(b, last).ok_or_else(|| Error::new(ENVELOPE_ERROR))?;
        let c = self.schema(raw_schema).map_err(Error::new)?;
        let s = match &c.schema {
            None => {
                put_json(out, b"", payload);
                return Ok(());
            }
            Some(s) => s,
        };
        let o = self.options(false);
        if !conform::check_with(s, payload, &o, &mut self.work)? {
            put_json(out, &c.compact, payload);
            return Ok(());
        }
        out.push(TAG_JSON);
        wire::put_bytes(out, &c.compact);
        let at = out.len();
        wire::put_u32(out, 0);
        conform::write_canonical(s, payload, &o, &mut self.work, out)?;
        let n = out.len() - at - 4;
        wire::patch_u32(out, at, n as u32);
        Ok(())
    }
}

/// Appends a JSON data value; the payload null without a schema is the null value.
fn put_json(out: &mut Vec<u8>, schema: &[u8], payload: &[u8]) {
    if schema.is_empty() && payload == b"null" {
        out.push(TAG_NULL);
        return;
    }
    out.push(TAG_JSON);
    wire::put_bytes(out, schema);
    wire::put_bytes(out, payload);
}

/// The schema and payload of an envelope: an object with exactly those two members (a repeated
/// one counts once, the last time); `None` for anything else, valid JSON or not. A schema that
/// starts with the bytes of `last`, the last schema read (an object, so complete when they end),
/// is that schema: it is passed over without reading it again.
fn envelope<'a>(b: &'a [u8], last: Option<&[u8]>) -> Option<(&'a [u8], &'a [u8])> {
    let mut c = Cursor::new(b);
    c.ws();
    if c.peek() != Some(b'{') || !c.open(b'}') {
        return None;
    }
    let (mut schema, mut payload) = (None, None);
    let mut scratch = Vec::new();
    loop {
        let is_schema = match c.key(&mut scratch).ok()?.bytes() {
            b"schema" => true,
            b"payload" => false,
            _ => return None,
        };
        c.ws();
        let start = c.i;
        match last {
            Some(l) if is_schema && l.first() == Some(&b'{') && b.len() - start >= l.len() && words::same(&b[start..start + l.len()], l) => c.i += l.len(),
            _ => c.skip(&mut scratch).ok()?,
        }
        let v = &b[start..c.i];
        if is_schema {
            schema = Some(v);
        } else {
            payload = Some(v);
        }
        if !c.next(b'}').ok()? {
            break;
        }
    }
    c.ws();
    if !c.at_end() {
        return None;
    }
    Some((schema?, payload?))
}


#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    fn converter(cfg: &[(&str, &str)]) -> JsonConverter {
        let mut c = JsonConverter::default();
        let cfg: Config = cfg.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        c.configure(&cfg, false).unwrap();
        c
    }

    fn json<'a>(schema: &'a str, payload: &'a str) -> Data<'a> {
        Data::Json { schema: Cow::Borrowed(schema.as_bytes()), payload: Cow::Borrowed(payload.as_bytes()) }
    }

    /// The schema of a chain's records is found by its address within one call, and parsed
    /// again when the next call has other bytes there.
    #[test]
    fn finds_a_kept_schema_by_address_only_within_its_call() {
        let mut raw = br#"{"type":"struct","fields":[{"field":"n","type":"int32"}]}"#.to_vec();
        fn value<'a>(raw: &'a [u8], payload: &'static str) -> Data<'a> {
            Data::Json { schema: Cow::Borrowed(raw), payload: Cow::Borrowed(payload.as_bytes()) }
        }
        let mut c = converter(&[("schemas.enable", "false")]);
        let (keep, mut out) = (Keep::new(), Vec::new());
        for _ in 0..2 {
            out.clear();
            assert!(c.write_vouched_from_connect("t", &value(&raw, r#"{"n":1}"#), &keep, &mut out).unwrap());
            assert_eq!(out, br#"{"n":1}"#);
        }
        let at = raw.as_ptr();
        raw.splice(raw.len() - 9..raw.len() - 4, b"bytes".iter().copied());
        assert_eq!((raw.as_ptr(), &raw[raw.len() - 10..]), (at, &br#""bytes"}]}"#[..]));
        // Not plain: checked, and 1 is not a bytes value.
        assert!(c.write_vouched_from_connect("t", &value(&raw, r#"{"n":1}"#), &Keep::new(), &mut out).is_err());
    }

    /// A vouched-for struct of a plain schema is written as it is, unchecked (which is why only a
    /// step of this module may vouch); anything else is checked as ever.
    #[test]
    fn writes_vouched_structs_as_they_are() {
        let plain = r#"{"type":"struct","fields":[{"field":"n","type":"int32"}]}"#;
        let decimal = r#"{"type":"struct","fields":[{"field":"d","type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"}}]}"#;
        let mut c = converter(&[("schemas.enable", "false")]);
        let mut out = Vec::new();
        assert!(c.write_vouched_from_connect("t", &json(plain, r#"{"n":"not checked"}"#), &Keep::new(), &mut out).unwrap());
        assert_eq!(String::from_utf8_lossy(&out), r#"{"n":"not checked"}"#);
        out.clear();
        assert!(c.write_from_connect("t", &json(plain, r#"{"n":"not checked"}"#), &mut out).is_err());
        // A Decimal is rewritten as decimal.format says: checked and written again.
        let mut c = converter(&[("schemas.enable", "false"), ("decimal.format", "NUMERIC")]);
        out.clear();
        assert!(c.write_vouched_from_connect("t", &json(decimal, r#"{"d":"AQ=="}"#), &Keep::new(), &mut out).unwrap());
        assert_eq!(String::from_utf8_lossy(&out), r#"{"d":0.01}"#);
        let mut c = converter(&[]);
        out.clear();
        assert!(c.write_vouched_from_connect("t", &json(plain, r#"{"n":1}"#), &Keep::new(), &mut out).unwrap());
        assert_eq!(String::from_utf8_lossy(&out), r#"{"schema":{"type":"struct","fields":[{"field":"n","type":"int32"}]},"payload":{"n":1}}"#);
    }
}
