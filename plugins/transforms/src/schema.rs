//! Cast, TimestampConverter, Flatten and SetSchemaMetadata.

use crate::common::*;
use crate::datefmt::Layout;
use std::collections::BTreeMap;
use std::rc::Rc;
use wasmconnect::config::{split_list, ConfigDef, ConfigType, Importance};
use wasmconnect::connect::{self, Field, Schema, Struct, Type, Value, DATE_NAME, DAY_MS, TIMESTAMP_NAME, TIME_NAME};
use wasmconnect::{Config, Error, Outcome, Record, Result, Transformation};

pub fn cast_defs() -> Vec<ConfigDef> {
    vec![
        ConfigDef::new("spec").typ(ConfigType::List).required().importance(Importance::High).validator(valid_cast_spec).doc(
            "List of fields and the type to cast them to of the form field1:type,field2:type to cast fields of Maps or Structs. A single type to cast the entire value. Valid types are int8, int16, int32, int64, float32, float64, boolean, and string. Note that binary fields can only be cast to string.",
        ),
        replace_null_def(),
    ]
}

fn one_of_targets(v: &str) -> std::result::Result<(), String> {
    if ["string", "unix", "Date", "Time", "Timestamp"].contains(&v) {
        Ok(())
    } else {
        Err("String must be one of: string, unix, Date, Time, Timestamp".to_string())
    }
}

fn one_of_precisions(v: &str) -> std::result::Result<(), String> {
    if ["nanoseconds", "microseconds", "milliseconds", "seconds"].contains(&v) {
        Ok(())
    } else {
        Err("String must be one of: nanoseconds, microseconds, milliseconds, seconds".to_string())
    }
}

pub fn timestamp_converter_defs() -> Vec<ConfigDef> {
    vec![
        ConfigDef::new("target.type").required().importance(Importance::High).validator(one_of_targets).doc("The desired timestamp representation: string, unix, Date, Time, or Timestamp"),
        ConfigDef::new("field").default("").importance(Importance::High).doc("The field containing the timestamp, or empty if the entire value is a timestamp"),
        ConfigDef::new("format").default("").doc("A SimpleDateFormat-compatible format for the timestamp. Used to generate the output when type=string or used to parse the input if the input is a string."),
        ConfigDef::new("unix.precision").default("milliseconds").importance(Importance::Low).validator(one_of_precisions).doc(
            "The desired Unix precision for the timestamp: seconds, milliseconds, microseconds, or nanoseconds. Used to generate the output when type=unix or used to parse the input if the input is a Long.Note: This SMT will cause precision loss during conversions from, and to, values with sub-millisecond components.",
        ),
        replace_null_def(),
    ]
}

pub fn flatten_defs() -> Vec<ConfigDef> {
    vec![ConfigDef::new("delimiter").default(".").doc("Delimiter to insert between field names from the input record when generating field names for the output record")]
}

pub fn set_schema_metadata_defs() -> Vec<ConfigDef> {
    vec![
        ConfigDef::new("schema.name").importance(Importance::High).doc("Schema name to set."),
        ConfigDef::new("schema.version").typ(ConfigType::Int).importance(Importance::High).doc("Schema version to set."),
        replace_null_def(),
    ]
}

// ---- Cast -----------------------------------------------------------------------------------

fn cast_type(name: &str) -> Option<Type> {
    Some(match name.trim().to_lowercase().as_str() {
        "int8" => Type::Int8,
        "int16" => Type::Int16,
        "int32" => Type::Int32,
        "int64" => Type::Int64,
        "float32" => Type::Float32,
        "float64" => Type::Float64,
        "boolean" => Type::Boolean,
        "string" => Type::String,
        _ => return None,
    })
}

#[derive(Default)]
struct CastSpec {
    whole: Option<Type>,
    fields: BTreeMap<String, Type>,
}

fn parse_cast_spec(v: &str) -> std::result::Result<CastSpec, String> {
    let mut spec = CastSpec::default();
    let items = split_list(v);
    if items.is_empty() {
        return Err("Must specify at least one field to cast.".to_string());
    }
    for it in &items {
        let (name, typ, whole) = match it.split_once(':') {
            Some((n, t)) => (n, t, false),
            None => {
                if items.len() > 1 {
                    return Err("Cast transformations that specify a type to cast the entire value to may only specify a single cast in their spec".to_string());
                }
                (it.as_str(), it.as_str(), true)
            }
        };
        let t = cast_type(typ).ok_or_else(|| format!("Invalid type found in casting spec: {}", typ.trim()))?;
        if whole {
            spec.whole = Some(t);
        } else {
            spec.fields.insert(name.trim().to_string(), t);
        }
    }
    Ok(spec)
}

fn valid_cast_spec(v: &str) -> std::result::Result<(), String> {
    parse_cast_spec(v).map(|_| ())
}

pub struct Cast {
    op: Operand,
    nulls: NullPolicy,
    spec: CastSpec,
    cache: SchemaCache,
}

const CAST_PURPOSE: &str = "cast types";

impl Cast {
    pub fn new(key: bool) -> Cast {
        Cast { op: Operand { key }, nulls: NullPolicy::default(), spec: CastSpec::default(), cache: SchemaCache::default() }
    }
}

impl CastSpec {
    fn updated_schema(&self, s: &Schema) -> Result<Schema> {
        if let Some(whole) = self.whole {
            valid_cast_type(s.typ)?;
            let mut u = s.struct_basics();
            u.typ = whole;
            u.optional = s.optional;
            if let Some(d) = &s.default {
                u.default = Some(cast_value(Some(s), d, whole)?);
            }
            return Ok(u);
        }
        if s.typ != Type::Struct {
            return Err(not_struct_schema(s, CAST_PURPOSE));
        }
        let mut u = s.struct_basics();
        for f in &s.fields {
            let typ = match self.fields.get(&f.name) {
                None => {
                    u.fields.push(f.clone());
                    continue;
                }
                Some(t) => *t,
            };
            valid_cast_type(f.schema.typ)?;
            let mut fs = Schema::new(typ);
            fs.optional = f.schema.optional;
            if let Some(d) = &f.schema.default {
                fs.default = Some(cast_value(Some(&f.schema), d, typ)?);
            }
            u.fields.push(Field { name: f.name.clone(), schema: Rc::new(fs) });
        }
        u.optional = s.optional;
        Ok(u)
    }
}

fn valid_cast_type(t: Type) -> Result<()> {
    match t {
        Type::Array | Type::Map | Type::Struct => Err(Error::new(format!("Cast transformation does not support casting to/from {}", t.java_name()))),
        _ => Ok(()),
    }
}

/// Kafka's Cast.castValueToType.
fn cast_value(s: Option<&Schema>, v: &Value, target: Type) -> Result<Value> {
    if v.is_null() {
        return Ok(Value::Null);
    }
    if let Some(s) = s {
        valid_cast_type(s.typ)?;
    }
    let mut v = v.clone();
    if target != Type::String {
        // Logical types cast as their internal representation.
        match v {
            Value::Time(ms) => {
                v = match s.map(|s| s.name.as_str()) {
                    Some(DATE_NAME) => Value::Int32((ms / DAY_MS) as i32),
                    Some(TIME_NAME) => Value::Int32((ms % DAY_MS) as i32),
                    _ => Value::Int64(ms),
                }
            }
            Value::Decimal(d) => v = Value::Float64(d.to_f64()),
            _ => {}
        }
    }
    let unexpected = |v: &Value| Error::new(format!("Unexpected type in Cast transformation: {}", v.java_class()));
    let out_of_range = |v: &Value| Error::new(format!("Value ({}) was out of range for requested data type", go_value(v)));
    Ok(match target {
        Type::Int8 | Type::Int16 | Type::Int32 | Type::Int64 => {
            let n: i64 = match &v {
                Value::Float32(_) | Value::Float64(_) => {
                    let f = match v {
                        Value::Float32(f) => f as f64,
                        Value::Float64(f) => f,
                        _ => 0.0,
                    };
                    // Rust's `as` saturates and makes NaN 0, as Java's (long) cast does.
                    if target == Type::Int64 {
                        f as i64
                    } else {
                        // Java narrows a floating point number to int first.
                        (f as i64).clamp(i32::MIN as i64, i32::MAX as i64)
                    }
                }
                Value::Bool(b) => *b as i64,
                Value::String(x) => {
                    let p = x.parse::<i64>().ok().filter(|n| match target {
                        Type::Int8 => i8::try_from(*n).is_ok(),
                        Type::Int16 => i16::try_from(*n).is_ok(),
                        Type::Int32 => i32::try_from(*n).is_ok(),
                        _ => true,
                    });
                    p.ok_or_else(|| out_of_range(&v))?
                }
                v => v.as_i64().ok_or_else(|| unexpected(v))?,
            };
            match target {
                Type::Int8 => Value::Int8(n as i8),
                Type::Int16 => Value::Int16(n as i16),
                Type::Int32 => Value::Int32(n as i32),
                _ => Value::Int64(n),
            }
        }
        Type::Float32 | Type::Float64 => {
            let f = match &v {
                Value::Float32(f) => *f as f64,
                Value::Float64(f) => *f,
                Value::Bool(b) => *b as i64 as f64,
                Value::String(x) => x.trim().parse::<f64>().map_err(|_| out_of_range(&v))?,
                v => v.as_i64().ok_or_else(|| unexpected(v))? as f64,
            };
            if target == Type::Float32 {
                Value::Float32(f as f32)
            } else {
                Value::Float64(f)
            }
        }
        Type::Boolean => Value::Bool(match &v {
            Value::Float32(f) => *f != 0.0,
            Value::Float64(f) => *f != 0.0,
            Value::Bool(b) => *b,
            Value::String(x) => x.eq_ignore_ascii_case("true"),
            v => v.as_i64().ok_or_else(|| unexpected(v))? != 0,
        }),
        Type::String => Value::String(match &v {
            Value::Time(ms) => {
                // Kafka's Values.dateFormatFor: a time of day, a date, or both.
                let f = if (0..DAY_MS).contains(ms) {
                    "HH:mm:ss.SSS'Z'"
                } else if ms % DAY_MS == 0 {
                    "yyyy-MM-dd"
                } else {
                    "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"
                };
                Layout::parse(f).map_err(Error::new)?.format(*ms)
            }
            Value::Bytes(b) => {
                let mut out = Vec::new();
                connect::base64_encode(&mut out, b);
                String::from_utf8(out).unwrap_or_default()
            }
            Value::String(x) => x.clone(),
            Value::Bool(b) => b.to_string(),
            Value::Float32(f) => java_double(*f as f64, true),
            Value::Float64(f) => java_double(*f, false),
            Value::Decimal(d) => d.to_string_places(s.map_or(0, |s| s.decimal_scale())),
            v => match v.as_i64() {
                Some(n) => n.to_string(),
                None => go_value(v),
            },
        }),
        t => return Err(Error::new(format!("Cast transformation does not support casting to/from {}", t.java_name()))),
    })
}

/// A value as Go's %v prints it, for messages.
fn go_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Float32(f) => f.to_string(),
        Value::Float64(f) => f.to_string(),
        v => match v.as_i64() {
            Some(n) => n.to_string(),
            None => {
                let mut out = Vec::new();
                let _ = connect::append_json(&mut out, None, v);
                String::from_utf8_lossy(&out).into_owned()
            }
        },
    }
}

/// Formats f as Java's Double.toString (Float.toString for an f32).
fn java_double(f: f64, is_f32: bool) -> String {
    if f.is_nan() {
        return "NaN".to_string();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    let a = f.abs();
    if f == 0.0 || (1e-3..1e7).contains(&a) {
        let mut s = if is_f32 { format!("{}", f as f32) } else { format!("{}", f) };
        if !s.contains('.') {
            s.push_str(".0");
        }
        return s;
    }
    let s = if is_f32 { format!("{:e}", f as f32) } else { format!("{:e}", f) };
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let mut mant = mant.to_string();
    if !mant.contains('.') {
        mant.push_str(".0");
    }
    format!("{}E{}", mant, exp)
}

impl Transformation for Cast {
    fn configure(&mut self, cfg: &Config) -> Result<()> {
        self.nulls = NullPolicy::configure(cfg)?;
        let v = get(cfg, "spec");
        self.spec = parse_cast_spec(v).map_err(|e| Error::invalid_config("spec", v, &e))?;
        Ok(())
    }

    fn apply<'a>(&mut self, r: &Record<'a>) -> Result<Outcome<'a>> {
        if self.op.is_null(r) {
            return Ok(Outcome::Unchanged);
        }
        let (s, v) = self.nulls.decode(self.op.get(r))?;
        let s = match s {
            None => {
                if let Some(whole) = self.spec.whole {
                    let cv = cast_value(None, &v, whole)?;
                    return Ok(outcome(r, self.op.encode(r, None, &cv)?));
                }
                let mut m = require_map(v, CAST_PURPOSE)?;
                for (f, t) in &self.spec.fields {
                    let cv = cast_value(None, m.get(f).unwrap_or(&Value::Null), *t)?;
                    m.insert(f.clone(), cv);
                }
                return Ok(outcome(r, self.op.encode(r, None, &Value::Map(m))?));
            }
            Some(s) => s,
        };
        let us = self.cache.get(&s, |s| self.spec.updated_schema(s))?;
        if let Some(whole) = self.spec.whole {
            let cv = cast_value(Some(&s), &v, whole)?;
            return Ok(outcome(r, self.op.encode(r, Some(&us), &cv)?));
        }
        let mut st = require_struct(v, CAST_PURPOSE)?;
        for (i, f) in s.fields.iter().enumerate() {
            if let Some(t) = self.spec.fields.get(&f.name) {
                st.values[i] = cast_value(Some(&f.schema), &st.values[i], *t)?;
            }
        }
        st.schema = us.clone();
        Ok(outcome(r, self.op.encode(r, Some(&us), &Value::Struct(st))?))
    }
}

// ---- TimestampConverter ---------------------------------------------------------------------

pub struct TimestampConverter {
    op: Operand,
    nulls: NullPolicy,
    field: String,
    target: String,
    layout: Option<Layout>,
    precision: String,
    cache: SchemaCache,
}

const TIMESTAMP_PURPOSE: &str = "converting timestamp formats";

impl TimestampConverter {
    pub fn new(key: bool) -> TimestampConverter {
        TimestampConverter { op: Operand { key }, nulls: NullPolicy::default(), field: String::new(), target: String::new(), layout: None, precision: String::new(), cache: SchemaCache::default() }
    }
}

/// The settings of a TimestampConverter.
struct Conv<'c> {
    target: &'c str,
    layout: Option<&'c Layout>,
    precision: &'c str,
}

impl<'c> Conv<'c> {
    fn target_schema(&self, optional: bool) -> Rc<Schema> {
        match self.target {
            "string" => Schema::primitive(Type::String, optional),
            "unix" => Schema::primitive(Type::Int64, optional),
            "Date" => Schema::date(optional),
            "Time" => Schema::time(optional),
            _ => Schema::timestamp(optional),
        }
    }

    /// Reads a timestamp: a Date/Time/Timestamp value, a unix number or a formatted string.
    fn to_time(&self, s: Option<&Schema>, v: &Value) -> Result<i64> {
        if let Some(s) = s {
            let ok = matches!(s.name.as_str(), TIMESTAMP_NAME | DATE_NAME | TIME_NAME) || matches!(s.typ, Type::String | Type::Int64);
            if !ok {
                return Err(Error::new(format!("Schema {} does not correspond to a known timestamp type format", s)));
            }
        }
        match v {
            Value::Time(ms) => Ok(*ms),
            Value::Int64(x) => Ok(match self.precision {
                "seconds" => x * 1000,
                "microseconds" => x.div_euclid(1000),
                "nanoseconds" => x.div_euclid(1_000_000),
                _ => *x,
            }),
            Value::String(x) => {
                let l = self.layout.ok_or_else(|| Error::new("TimestampConverter requires format option to be specified when using string timestamps"))?;
                l.parse_time(x).map_err(|_| Error::new(format!("Could not parse timestamp: value ({}) does not match pattern ({})", x, l.java)))
            }
            v => Err(Error::new(format!("TimestampConverter does not support {} objects as timestamps", v.java_class()))),
        }
    }

    fn from_time(&self, ms: i64) -> Value {
        match self.target {
            "string" => Value::String(self.layout.map(|l| l.format(ms)).unwrap_or_default()),
            "unix" => Value::Int64(match self.precision {
                "seconds" => ms.div_euclid(1000),
                "microseconds" => ms * 1000,
                "nanoseconds" => ms * 1_000_000,
                _ => ms,
            }),
            "Date" => Value::Time(ms.div_euclid(DAY_MS) * DAY_MS),
            "Time" => Value::Time(ms.rem_euclid(DAY_MS)),
            _ => Value::Time(ms),
        }
    }
}

impl Transformation for TimestampConverter {
    fn configure(&mut self, cfg: &Config) -> Result<()> {
        self.nulls = NullPolicy::configure(cfg)?;
        self.field = get(cfg, "field").to_string();
        self.target = get(cfg, "target.type").to_string();
        self.precision = cfg.get("unix.precision").cloned().unwrap_or_else(|| "milliseconds".to_string());
        let f = get(cfg, "format");
        if self.target == "string" && f.trim().is_empty() {
            return Err(Error::invalid_config("format", f, "TimestampConverter requires format option to be specified when using string timestamps"));
        }
        if !f.is_empty() {
            self.layout = Some(Layout::parse(f).map_err(|e| Error::invalid_config("format", f, &format!("TimestampConverter requires a SimpleDateFormat-compatible pattern for string timestamps: {}", e)))?);
        }
        Ok(())
    }

    fn apply<'a>(&mut self, r: &Record<'a>) -> Result<Outcome<'a>> {
        let conv = Conv { target: &self.target, layout: self.layout.as_ref(), precision: &self.precision };
        let d = self.op.get(r);
        if self.op.is_null(r) {
            if let wasmconnect::Data::Json { schema, .. } = d {
                if self.field.is_empty() && !schema.is_empty() {
                    // Kafka keeps the null and gives it the target schema.
                    let s = connect::parse_schema(schema).map_err(Error::new)?;
                    let opt = s.map_or(false, |s| s.optional);
                    return Ok(outcome(r, self.op.encode(r, Some(&conv.target_schema(opt)), &Value::Null)?));
                }
            }
            return Ok(Outcome::Unchanged);
        }
        let (s, v) = self.nulls.decode(d)?;
        if self.field.is_empty() {
            let ms = conv.to_time(s.as_deref(), &v)?;
            let out = conv.from_time(ms);
            let ts = s.map(|s| conv.target_schema(s.optional));
            return Ok(outcome(r, self.op.encode(r, ts.as_ref(), &out)?));
        }
        let s = match s {
            None => {
                let mut m = require_map(v, TIMESTAMP_PURPOSE)?;
                if let Some(fv) = m.get(&self.field).filter(|v| !v.is_null()) {
                    let ms = conv.to_time(None, fv)?;
                    m.insert(self.field.clone(), conv.from_time(ms));
                }
                return Ok(outcome(r, self.op.encode(r, None, &Value::Map(m))?));
            }
            Some(s) => s,
        };
        let mut st = require_struct(v, TIMESTAMP_PURPOSE)?;
        let field = &self.field;
        let us = self.cache.get(&s, |s| {
            let mut u = s.struct_basics();
            for f in &s.fields {
                if &f.name == field {
                    u.fields.push(Field { name: f.name.clone(), schema: conv.target_schema(f.schema.optional) });
                } else {
                    u.fields.push(f.clone());
                }
            }
            Ok(u)
        })?;
        for (i, f) in s.fields.iter().enumerate() {
            if &f.name == field && !st.values[i].is_null() {
                let ms = conv.to_time(Some(&f.schema), &st.values[i])?;
                st.values[i] = conv.from_time(ms);
            }
        }
        st.schema = us.clone();
        Ok(outcome(r, self.op.encode(r, Some(&us), &Value::Struct(st))?))
    }
}

// ---- Flatten --------------------------------------------------------------------------------

pub struct Flatten {
    op: Operand,
    delim: String,
    cache: SchemaCache,
}

const FLATTEN_PURPOSE: &str = "flattening";

impl Flatten {
    pub fn new(key: bool) -> Flatten {
        Flatten { op: Operand { key }, delim: ".".to_string(), cache: SchemaCache::default() }
    }
}

fn joined(delim: &str, prefix: &str, field: &str) -> String {
    if prefix.is_empty() {
        field.to_string()
    } else {
        format!("{}{}{}", prefix, delim, field)
    }
}

fn flatten_map(delim: &str, m: BTreeMap<String, Value>, prefix: &str, out: &mut BTreeMap<String, Value>) -> Result<()> {
    for (k, v) in m {
        let name = joined(delim, prefix, &k);
        match v {
            Value::Map(sub) => flatten_map(delim, sub, &name, out)?,
            Value::Entries(_) | Value::Struct(_) => {
                return Err(Error::new(format!("Flatten transformation does not support {} for record without schemas (for field {}).", v.java_class(), name)));
            }
            v => {
                out.insert(name, v);
            }
        }
    }
    Ok(())
}

fn flatten_schema(delim: &str, s: &Schema, prefix: &str, optional: bool, out: &mut Schema) -> Result<()> {
    for f in &s.fields {
        let name = joined(delim, prefix, &f.name);
        let opt = optional || f.schema.optional;
        if f.schema.typ == Type::Struct {
            flatten_schema(delim, &f.schema, &name, opt, out)?;
            continue;
        }
        let mut fs = f.schema.clone();
        if opt && !fs.optional {
            let mut c = (*fs).clone();
            c.optional = true;
            fs = Rc::new(c);
        }
        if out.field_index(&name).is_some() {
            return Err(Error::new(format!("Cannot create field because of field name duplication {}", name)));
        }
        out.fields.push(Field { name, schema: fs });
    }
    Ok(())
}

fn flatten_struct(delim: &str, st: Struct, prefix: &str, out: &mut Struct) {
    let schema = st.schema.clone();
    for (f, v) in schema.fields.iter().zip(st.values) {
        let name = joined(delim, prefix, &f.name);
        if f.schema.typ == Type::Struct {
            if let Value::Struct(sub) = v {
                flatten_struct(delim, sub, &name, out);
            }
            continue;
        }
        let _ = out.put(&name, v);
    }
}

impl Transformation for Flatten {
    fn configure(&mut self, cfg: &Config) -> Result<()> {
        self.delim = cfg.get("delimiter").cloned().unwrap_or_else(|| ".".to_string());
        Ok(())
    }

    fn apply<'a>(&mut self, r: &Record<'a>) -> Result<Outcome<'a>> {
        let (s, v) = decode(self.op.get(r))?;
        let s = match s {
            None => {
                let m = match v {
                    Value::Null => return Ok(Outcome::Unchanged),
                    v => require_map(v, FLATTEN_PURPOSE)?,
                };
                let mut out = BTreeMap::new();
                flatten_map(&self.delim, m, "", &mut out)?;
                return Ok(outcome(r, self.op.encode(r, None, &Value::Map(out))?));
            }
            Some(s) => s,
        };
        let st = match v {
            Value::Null => None,
            v => Some(require_struct(v, FLATTEN_PURPOSE)?),
        };
        let delim = &self.delim;
        let us = self.cache.get(&s, |s| {
            if s.typ != Type::Struct {
                return Err(not_struct_schema(s, FLATTEN_PURPOSE));
            }
            // Kafka: the parent's optionality makes every field optional; the struct itself is not.
            let mut u = s.struct_basics();
            flatten_schema(delim, s, "", s.optional, &mut u)?;
            Ok(u)
        })?;
        let st = match st {
            None => return Ok(outcome(r, self.op.encode(r, Some(&us), &Value::Null)?)),
            Some(st) => st,
        };
        let mut out = Struct::new(us.clone());
        flatten_struct(&self.delim, st, "", &mut out);
        Ok(outcome(r, self.op.encode(r, Some(&us), &Value::Struct(out))?))
    }
}

// ---- SetSchemaMetadata ----------------------------------------------------------------------

pub struct SetSchemaMetadata {
    op: Operand,
    nulls: NullPolicy,
    name: Option<String>,
    version: Option<i32>,
    cache: SchemaCache,
}

impl SetSchemaMetadata {
    pub fn new(key: bool) -> SetSchemaMetadata {
        SetSchemaMetadata { op: Operand { key }, nulls: NullPolicy::default(), name: None, version: None, cache: SchemaCache::default() }
    }
}

impl Transformation for SetSchemaMetadata {
    fn configure(&mut self, cfg: &Config) -> Result<()> {
        self.nulls = NullPolicy::configure(cfg)?;
        self.name = cfg.get("schema.name").cloned();
        if cfg.contains_key("schema.version") {
            self.version = Some(wasmconnect::config::get_int(cfg, "schema.version", 0)?);
        }
        if self.name.is_none() && self.version.is_none() {
            return Err(Error::invalid_config("schema.name", "", "Neither schema name nor version configured"));
        }
        Ok(())
    }

    fn apply<'a>(&mut self, r: &Record<'a>) -> Result<Outcome<'a>> {
        let (s, v) = self.nulls.decode(self.op.get(r))?;
        let s = s.ok_or_else(|| Error::new("Schema required for [updating schema metadata]"))?;
        let (name, version) = (&self.name, self.version);
        let us = self.cache.get(&s, |s| {
            let mut u = s.clone();
            if let Some(n) = name {
                u.name = n.clone();
            }
            if version.is_some() {
                u.version = version;
            }
            Ok(u)
        })?;
        let v = match v {
            // Kafka's updateSchemaIn: the struct takes the new schema.
            Value::Struct(mut st) => {
                st.schema = us.clone();
                Value::Struct(st)
            }
            v => v,
        };
        Ok(outcome(r, self.op.encode(r, Some(&us), &v)?))
    }
}
