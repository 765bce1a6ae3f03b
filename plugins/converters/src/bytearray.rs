//! ByteArrayConverter: Kafka's org.apache.kafka.connect.converters.ByteArrayConverter: bytes pass
//! through unchanged.

use std::borrow::Cow;

use wasmconnect::wire::{self, Data, TAG_BYTES, TAG_NULL};
use wasmconnect::{Config, Converter, Error, Info, Result};

use super::scan::{self, Cursor, Dialect};
use super::{base64, converter_type_def, VERSION};

pub fn info() -> Info {
    Info {
        name: "ByteArrayConverter",
        class: "org.apache.kafka.connect.converters.ByteArrayConverter",
        aliases: &[],
        version: VERSION,
        config: vec![converter_type_def()],
    }
}

pub struct ByteArrayConverter;

fn incompatible(class: &str) -> Error {
    Error::new(format!("ByteArrayConverter is not compatible with objects of type class {}", class))
}

/// The Java class JsonConverter would produce for a schemaless JSON payload.
fn java_class(p: &[u8]) -> &'static str {
    match p.first() {
        None => "java.lang.Object",
        Some(b'"') => "java.lang.String",
        Some(b'{') => "java.util.HashMap",
        Some(b'[') => "java.util.ArrayList",
        Some(b't' | b'f') => "java.lang.Boolean",
        _ if p.iter().any(|c| matches!(c, b'.' | b'e' | b'E')) => "java.lang.Double",
        _ => "java.lang.Long",
    }
}

/// What a JSON value is, as Go's json package names it in "cannot unmarshal X into ...".
fn go_kind(v: &[u8]) -> &'static str {
    match v.first() {
        Some(b'{') => "object",
        Some(b'[') => "array",
        Some(b'"') => "string",
        Some(b't' | b'f') => "bool",
        _ => "number",
    }
}

/// The "type" of a schema, as the Go converter read it into a struct: "" when the schema has
/// none or is null.
fn schema_type(schema: &[u8]) -> std::result::Result<String, String> {
    scan::check(schema, Dialect::Unmarshal)?;
    let mut c = Cursor::new(schema);
    c.ws();
    match c.peek() {
        Some(b'n') => return Ok(String::new()),
        Some(b'{') => {}
        _ => return Err(format!("json: cannot unmarshal {} into Go value of type struct {{ Type string \"json:\\\"type\\\"\" }}", go_kind(scan::trim(schema)))),
    }
    let mut typ = String::new();
    let mut scratch = Vec::new();
    if c.open(b'}') {
        loop {
            let is_type = c.key(&mut scratch)?.bytes().eq_ignore_ascii_case(b"type");
            c.ws();
            let start = c.i;
            c.skip(&mut scratch)?;
            let v = &schema[start..c.i];
            if is_type {
                match v.first() {
                    Some(b'"') => typ = String::from_utf8_lossy(Cursor::new(v).string(&mut scratch)?.bytes()).into_owned(),
                    Some(b'n') => {}
                    _ => return Err(format!("json: cannot unmarshal {} into Go struct field .type of type string", go_kind(v))),
                }
            }
            if !c.next(b'}')? {
                break;
            }
        }
    }
    Ok(typ)
}

/// Kafka's Schema.Type name of a schema type, as error messages write it.
fn java_name(t: &str) -> String {
    match t {
        "float" => "FLOAT32".to_string(),
        "double" => "FLOAT64".to_string(),
        _ => t.to_uppercase(),
    }
}

impl Converter for ByteArrayConverter {
    fn configure(&mut self, _cfg: &Config, _is_key: bool) -> Result<()> {
        Ok(())
    }

    fn from_connect(&mut self, topic: &str, value: &Data<'_>) -> Result<Option<Vec<u8>>> {
        let mut out = Vec::new();
        Ok(if self.write_from_connect(topic, value, &mut out)? { Some(out) } else { None })
    }

    fn to_connect(&mut self, _topic: &str, bytes: Option<&[u8]>) -> Result<Data<'static>> {
        Ok(match bytes {
            None => Data::Null,
            Some(b) => Data::Bytes(Cow::Owned(b.to_vec())),
        })
    }

    fn write_from_connect(&mut self, _topic: &str, value: &Data<'_>, out: &mut Vec<u8>) -> Result<bool> {
        match value {
            Data::Null => Ok(false),
            Data::Bytes(b) => {
                out.extend_from_slice(b);
                Ok(true)
            }
            Data::String(_) => Err(incompatible("java.lang.String")),
            Data::Json { schema, payload } => {
                let typ = if schema.is_empty() {
                    String::new()
                } else {
                    schema_type(schema).map_err(|e| Error::new(format!("ByteArrayConverter: invalid schema: {}", e)))?
                };
                let p = scan::trim(payload);
                if typ == "bytes" {
                    let invalid = |e: String| Error::new(format!("ByteArrayConverter: invalid bytes payload: {}", e));
                    scan::check(p, Dialect::Unmarshal).map_err(invalid)?;
                    match p.first() {
                        Some(b'n') => return Ok(false),
                        Some(b'"') => {}
                        _ => return Err(invalid(format!("json: cannot unmarshal {} into Go value of type string", go_kind(p)))),
                    }
                    let mut scratch = Vec::new();
                    let mut decoded = Vec::new();
                    let s = Cursor::new(p).string(&mut scratch).map_err(invalid)?;
                    base64::decode(s.bytes(), &mut decoded).map_err(Error::new)?;
                    out.extend_from_slice(&decoded);
                    return Ok(true);
                }
                if !typ.is_empty() && typ != "null" {
                    return Err(Error::new(format!("Invalid schema type for ByteArrayConverter: {}", java_name(&typ))));
                }
                Err(incompatible(java_class(p)))
            }
        }
    }

    fn write_to_connect(&mut self, _topic: &str, bytes: Option<&[u8]>, out: &mut Vec<u8>) -> Result<()> {
        match bytes {
            None => out.push(TAG_NULL),
            Some(b) => {
                out.push(TAG_BYTES);
                wire::put_bytes(out, b);
            }
        }
        Ok(())
    }
}
