//! What the transformations share: the part of a record a $Key or $Value variant works on,
//! replace.null.with.default, Kafka's requireMap/requireStruct checks with their texts, and caches.

use std::rc::Rc;
use wasmconnect::config::{split_list, ConfigDef, ConfigType, Importance};
use wasmconnect::connect::{self, Schema, Struct, Value};
use wasmconnect::{Applied, Config, Data, Error, Outcome, Record, Result, Transformation};

/// The key or the value of a record, for the $Key and $Value variants.
#[derive(Clone, Copy)]
pub struct Operand {
    pub key: bool,
}

impl Operand {
    pub fn get<'r, 'a>(self, r: &'r Record<'a>) -> &'r Data<'a> {
        if self.key {
            &r.key
        } else {
            &r.value
        }
    }

    pub fn get_mut<'r, 'a>(self, r: &'r mut Record<'a>) -> &'r mut Data<'a> {
        if self.key {
            &mut r.key
        } else {
            &mut r.value
        }
    }

    /// A copy of `r` with the operand replaced.
    pub fn with<'a>(self, r: &Record<'a>, d: Data<'a>) -> Record<'a> {
        let mut out = r.clone();
        if self.key {
            out.key = d;
        } else {
            out.value = d;
        }
        out
    }

    /// Kafka's operatingValue(record) == null.
    pub fn is_null(self, r: &Record) -> bool {
        connect::is_null(self.get(r))
    }

    /// A copy of `r` with the operand set from a schema and a value.
    pub fn encode<'a>(self, r: &Record<'a>, s: Option<&Rc<Schema>>, v: &Value) -> Result<Record<'a>> {
        Ok(self.with(r, connect::encode(s, v).map_err(Error::new)?))
    }
}

/// The outcome of a transformation that made `out` from `r`: unchanged when they are equal.
pub fn outcome<'a>(r: &Record<'a>, out: Record<'a>) -> Outcome<'a> {
    if out == *r {
        Outcome::Unchanged
    } else {
        Outcome::Record(out)
    }
}

/// `Transformation::apply_mut` as the SDK's default has it, for a transformation's own `apply_mut`
/// to fall back on: `apply`'s outcome written over `r`.
pub fn apply_over<'a>(t: &mut impl Transformation, r: &mut Record<'a>) -> Result<Applied> {
    let o = t.apply(r)?;
    Ok(o.write_over(r))
}

/// replace.null.with.default: whether a null field with a default reads as the default.
#[derive(Default, Clone, Copy)]
pub struct NullPolicy {
    pub keep: bool,
}

impl NullPolicy {
    pub fn configure(cfg: &Config) -> Result<NullPolicy> {
        let replace = wasmconnect::config::get_bool(cfg, "replace.null.with.default", true)?;
        Ok(NullPolicy { keep: !replace })
    }

    pub fn decode(self, d: &Data) -> Result<(Option<Rc<Schema>>, Value)> {
        connect::decode(d, self.keep).map_err(Error::new)
    }
}

pub fn decode(d: &Data) -> Result<(Option<Rc<Schema>>, Value)> {
    connect::decode(d, false).map_err(Error::new)
}

pub fn replace_null_def() -> ConfigDef {
    ConfigDef::new("replace.null.with.default").typ(ConfigType::Boolean).default("true").importance(Importance::Medium).doc(
        "Whether to replace fields that have a default value and that are null to the default value. When set to true, the default value is used, otherwise null is used.",
    )
}

pub fn require_map(v: Value, purpose: &str) -> Result<std::collections::BTreeMap<String, Value>> {
    match v {
        Value::Map(m) => Ok(m),
        v => Err(Error::new(format!("Only Map objects supported in absence of schema for [{}], found: {}", purpose, v.class_name()))),
    }
}

pub fn require_struct(v: Value, purpose: &str) -> Result<Struct> {
    match v {
        Value::Struct(s) => Ok(s),
        v => Err(Error::new(format!("Only Struct objects supported for [{}], found: {}", purpose, v.class_name()))),
    }
}

pub fn not_struct_schema(s: &Schema, purpose: &str) -> Error {
    Error::new(format!("Only Struct objects supported for [{}], found: {}", purpose, s.typ.java_name()))
}

/// Whether r is a sink record (it has a Kafka offset).
pub fn is_sink(r: &Record) -> bool {
    r.offset >= 0
}

/// Derived schemas by the schema they were derived from (the same `Rc`, which `connect::decode`
/// returns for the same schema JSON), the last hit first.
#[derive(Default)]
pub struct SchemaCache {
    entries: Vec<(Rc<Schema>, Rc<Schema>)>,
}

impl SchemaCache {
    pub fn get(&mut self, s: &Rc<Schema>, build: impl FnOnce(&Schema) -> Result<Schema>) -> Result<Rc<Schema>> {
        if let Some(i) = self.entries.iter().position(|(k, _)| Rc::ptr_eq(k, s)) {
            if i != 0 {
                self.entries.swap(0, i);
            }
            return Ok(self.entries[0].1.clone());
        }
        let u = Rc::new(build(s)?);
        if self.entries.len() >= 64 {
            self.entries.truncate(32);
        }
        self.entries.insert(0, (s.clone(), u.clone()));
        Ok(u)
    }
}

/// A validator of a LIST setting that must not be empty.
pub fn list_non_empty(v: &str) -> std::result::Result<(), String> {
    if split_list(v).is_empty() {
        return Err("Empty list".to_string());
    }
    Ok(())
}

pub fn non_empty_string(v: &str) -> std::result::Result<(), String> {
    if v.is_empty() {
        return Err("String must be non-empty".to_string());
    }
    Ok(())
}

/// The value of a setting, "" if unset.
pub fn get<'c>(cfg: &'c Config, key: &str) -> &'c str {
    cfg.get(key).map(String::as_str).unwrap_or("")
}

pub fn list(cfg: &Config, key: &str) -> Vec<String> {
    split_list(get(cfg, key))
}
