//! InsertHeader, DropHeaders and HeaderFrom.

use crate::common::*;
use std::borrow::Cow;
use std::collections::HashSet;
use std::rc::Rc;
use wasmconnect::config::{ConfigDef, ConfigType, Importance};
use wasmconnect::connect::{self, Schema, Struct, Type, Value};
use wasmconnect::{Config, Data, Error, Header, Outcome, Record, Result, Transformation};

fn one_of_operations(v: &str) -> std::result::Result<(), String> {
    if v == "move" || v == "copy" {
        Ok(())
    } else {
        Err("String must be one of: move, copy".to_string())
    }
}

pub fn insert_header_defs() -> Vec<ConfigDef> {
    vec![
        ConfigDef::new("header").required().importance(Importance::High).doc("The name of the header."),
        ConfigDef::new("value.literal").required().importance(Importance::High).doc("The literal value that is to be set as the header value on all records."),
    ]
}

pub fn drop_headers_defs() -> Vec<ConfigDef> {
    vec![ConfigDef::new("headers").typ(ConfigType::List).required().importance(Importance::High).validator(list_non_empty).doc("The name of the headers to be removed.")]
}

pub fn header_from_defs() -> Vec<ConfigDef> {
    vec![
        ConfigDef::new("fields").typ(ConfigType::List).required().importance(Importance::High).validator(list_non_empty).doc("Field names in the record whose values are to be copied or moved to headers."),
        ConfigDef::new("headers").typ(ConfigType::List).required().importance(Importance::High).validator(list_non_empty).doc("Header names, in the same order as the field names listed in the fields configuration property."),
        ConfigDef::new("operation").required().importance(Importance::High).validator(one_of_operations).doc(
            "Either <code>move</code> if the fields are to be moved to the headers (removed from the key/value), or <code>copy</code> if the fields are to be copied to the headers (retained in the key/value).",
        ),
        replace_null_def(),
    ]
}

// ---- InsertHeader ---------------------------------------------------------------------------

pub struct InsertHeader {
    header: Header<'static>,
}

impl InsertHeader {
    pub fn new() -> InsertHeader {
        InsertHeader { header: Header::default() }
    }
}

/// Infers a schema and value from a string as Kafka's Values.parseString does for scalars: null,
/// booleans, the smallest integer type that holds an integer, float32 or float64 for fractions,
/// else a string.
fn parse_literal(s: &str) -> (Option<Rc<Schema>>, Value) {
    let t = s.trim();
    if s.is_empty() {
        return (Some(Schema::primitive(Type::String, false)), Value::String(String::new()));
    }
    if t == "null" {
        return (None, Value::Null);
    }
    if t.eq_ignore_ascii_case("true") || t.eq_ignore_ascii_case("false") {
        return (Some(Schema::primitive(Type::Boolean, false)), Value::Bool(t.eq_ignore_ascii_case("true")));
    }
    if let Ok(n) = t.parse::<i64>() {
        return if let Ok(x) = i8::try_from(n) {
            (Some(Schema::primitive(Type::Int8, false)), Value::Int8(x))
        } else if let Ok(x) = i16::try_from(n) {
            (Some(Schema::primitive(Type::Int16, false)), Value::Int16(x))
        } else if let Ok(x) = i32::try_from(n) {
            (Some(Schema::primitive(Type::Int32, false)), Value::Int32(x))
        } else {
            (Some(Schema::primitive(Type::Int64, false)), Value::Int64(n))
        };
    }
    if !t.starts_with('+') && !t.contains(|c| matches!(c, 'x' | 'X' | 'n' | 'N' | 'i' | 'I')) {
        if let Ok(f) = t.parse::<f64>() {
            let f32v = f as f32;
            return if f32v.is_finite() { (Some(Schema::primitive(Type::Float32, false)), Value::Float32(f32v)) } else { (Some(Schema::primitive(Type::Float64, false)), Value::Float64(f)) };
        }
    }
    (Some(Schema::primitive(Type::String, false)), Value::String(s.to_string()))
}

impl Transformation for InsertHeader {
    fn configure(&mut self, cfg: &Config) -> Result<()> {
        let (s, v) = parse_literal(get(cfg, "value.literal"));
        let d = connect::encode(s.as_ref(), &v).map_err(Error::new)?;
        self.header = Header { key: Cow::Owned(get(cfg, "header").to_string()), value: d };
        Ok(())
    }

    fn apply<'a>(&mut self, r: &Record<'a>) -> Result<Outcome<'a>> {
        let mut out = r.clone();
        out.headers.push(self.header.clone());
        Ok(Outcome::Record(out))
    }
}

// ---- DropHeaders ----------------------------------------------------------------------------

pub struct DropHeaders {
    names: HashSet<String>,
}

impl DropHeaders {
    pub fn new() -> DropHeaders {
        DropHeaders { names: HashSet::new() }
    }
}

impl Transformation for DropHeaders {
    fn configure(&mut self, cfg: &Config) -> Result<()> {
        self.names = list(cfg, "headers").into_iter().collect();
        Ok(())
    }

    fn apply<'a>(&mut self, r: &Record<'a>) -> Result<Outcome<'a>> {
        if !r.headers.iter().any(|h| self.names.contains(h.key.as_ref())) {
            return Ok(Outcome::Unchanged);
        }
        let mut out = r.clone();
        out.headers.retain(|h| !self.names.contains(h.key.as_ref()));
        Ok(Outcome::Record(out))
    }
}

// ---- HeaderFrom -----------------------------------------------------------------------------

pub struct HeaderFrom {
    op: Operand,
    nulls: NullPolicy,
    fields: Vec<String>,
    hdrs: Vec<String>,
    is_move: bool,
    cache: SchemaCache,
}

const HEADER_FROM_PURPOSE: &str = "header from";

impl HeaderFrom {
    pub fn new(key: bool) -> HeaderFrom {
        HeaderFrom { op: Operand { key }, nulls: NullPolicy::default(), fields: Vec::new(), hdrs: Vec::new(), is_move: false, cache: SchemaCache::default() }
    }
}

impl Transformation for HeaderFrom {
    fn configure(&mut self, cfg: &Config) -> Result<()> {
        self.nulls = NullPolicy::configure(cfg)?;
        self.fields = list(cfg, "fields");
        self.hdrs = list(cfg, "headers");
        if self.fields.len() != self.hdrs.len() {
            return Err(Error::invalid_config("headers", get(cfg, "headers"), "'fields' config must have the same number of elements as 'headers' config."));
        }
        self.is_move = get(cfg, "operation") == "move";
        Ok(())
    }

    fn apply<'a>(&mut self, r: &Record<'a>) -> Result<Outcome<'a>> {
        if self.op.is_null(r) {
            return Ok(Outcome::Unchanged);
        }
        let (s, v) = self.nulls.decode(self.op.get(r))?;
        let mut out = r.clone();
        let s = match s {
            None => {
                let mut m = require_map(v, HEADER_FROM_PURPOSE)?;
                for (f, h) in self.fields.iter().zip(&self.hdrs) {
                    let fv = m.get(f).cloned().unwrap_or(Value::Null);
                    let d = match fv {
                        Value::String(s) => Data::String(Cow::Owned(s.into_bytes())),
                        fv => connect::encode(None, &fv).map_err(Error::new)?,
                    };
                    out.headers.push(Header { key: Cow::Owned(h.clone()), value: d });
                }
                if !self.is_move {
                    return Ok(outcome(r, out));
                }
                for f in &self.fields {
                    m.remove(f);
                }
                return Ok(outcome(r, self.op.encode(&out, None, &Value::Map(m))?));
            }
            Some(s) => s,
        };
        let st = require_struct(v, HEADER_FROM_PURPOSE)?;
        for (f, h) in self.fields.iter().zip(&self.hdrs) {
            let j = s.field_index(f).ok_or_else(|| Error::new(format!("{} is not a valid field name", f)))?;
            let d = connect::encode(Some(&s.fields[j].schema), &st.values[j]).map_err(Error::new)?;
            out.headers.push(Header { key: Cow::Owned(h.clone()), value: d });
        }
        if !self.is_move {
            return Ok(outcome(r, out));
        }
        let fields = &self.fields;
        let us = self.cache.get(&s, |s| {
            let mut u = s.struct_basics();
            u.optional = s.optional;
            u.fields = s.fields.iter().filter(|f| !fields.contains(&f.name)).cloned().collect();
            Ok(u)
        })?;
        let values = s.fields.iter().zip(st.values).filter(|(f, _)| !fields.contains(&f.name)).map(|(_, v)| v).collect();
        Ok(outcome(r, self.op.encode(&out, Some(&us), &Value::Struct(Struct { schema: us.clone(), values }))?))
    }
}
