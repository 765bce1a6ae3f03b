//! A small model of Kafka Connect's data (org.apache.kafka.connect.data), the Rust twin of the Go
//! SDK's `connect` package: schemas, structs, and the conversion between a key or value on the wire
//! (`Data`: a string, bytes, or a JSON payload with an optional Connect schema, as JsonConverter
//! writes them) and `Value`s, so that a transformation can read and change fields of schemaless
//! values (maps) and of schema-carrying values (structs) alike. Its error texts are the Go
//! package's, which are Kafka's.
//!
//! `decode` turns a `Data` into its schema (`None` when schemaless) and a `Value`; `encode` turns
//! them back. Values by schema type: the integer and floating point types as `Int8`..`Float64`
//! (schemaless JSON integers: `Int64`, fractions: `Float64`); `Bool`, `String`, `Bytes`; arrays as
//! `Array`; maps with string keys (and schemaless objects) as `Map`, other maps as `Entries`;
//! structs as `Struct`; Date, Time and Timestamp as `Time` (milliseconds since the epoch, UTC);
//! Decimal as `Decimal` (an unscaled i128 and a scale: at most 38 digits); null as `Null`.
//!
//! Schemas are shared (`Rc<Schema>`) and, once used, not changed: clone one and change the clone.
//! `decode` caches parsed schemas by their JSON, so equal schemas decode to the same `Rc` and a
//! transformation can cache what it derives from a schema by pointer (`Rc::ptr_eq`).

use crate::json;
use crate::wire::Data;
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::rc::Rc;

/// A Connect schema type.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Type {
    Int8,
    Int16,
    Int32,
    Int64,
    Float32,
    Float64,
    Boolean,
    String,
    Bytes,
    Array,
    Map,
    Struct,
}

impl Default for Type {
    fn default() -> Type {
        Type::String
    }
}

impl Type {
    /// The name JsonConverter writes (int32, float, double, struct...).
    pub fn json_name(self) -> &'static str {
        match self {
            Type::Int8 => "int8",
            Type::Int16 => "int16",
            Type::Int32 => "int32",
            Type::Int64 => "int64",
            Type::Float32 => "float",
            Type::Float64 => "double",
            Type::Boolean => "boolean",
            Type::String => "string",
            Type::Bytes => "bytes",
            Type::Array => "array",
            Type::Map => "map",
            Type::Struct => "struct",
        }
    }

    /// Kafka's Schema.Type name (INT32, FLOAT64, STRUCT...), as error messages write it.
    pub fn java_name(self) -> &'static str {
        match self {
            Type::Int8 => "INT8",
            Type::Int16 => "INT16",
            Type::Int32 => "INT32",
            Type::Int64 => "INT64",
            Type::Float32 => "FLOAT32",
            Type::Float64 => "FLOAT64",
            Type::Boolean => "BOOLEAN",
            Type::String => "STRING",
            Type::Bytes => "BYTES",
            Type::Array => "ARRAY",
            Type::Map => "MAP",
            Type::Struct => "STRUCT",
        }
    }

    pub fn from_json_name(s: &str) -> Option<Type> {
        Some(match s {
            "int8" => Type::Int8,
            "int16" => Type::Int16,
            "int32" => Type::Int32,
            "int64" => Type::Int64,
            "float" => Type::Float32,
            "double" => Type::Float64,
            "boolean" => Type::Boolean,
            "string" => Type::String,
            "bytes" => Type::Bytes,
            "array" => Type::Array,
            "map" => Type::Map,
            "struct" => Type::Struct,
            _ => return None,
        })
    }

    pub fn is_primitive(self) -> bool {
        !matches!(self, Type::Array | Type::Map | Type::Struct)
    }

    /// How many bits an integer type has; `None` for the other types.
    pub fn int_bits(self) -> Option<u32> {
        match self {
            Type::Int8 => Some(8),
            Type::Int16 => Some(16),
            Type::Int32 => Some(32),
            Type::Int64 => Some(64),
            _ => None,
        }
    }
}

/// Names of Connect's logical types.
pub const DECIMAL_NAME: &str = "org.apache.kafka.connect.data.Decimal";
pub const DATE_NAME: &str = "org.apache.kafka.connect.data.Date";
pub const TIME_NAME: &str = "org.apache.kafka.connect.data.Time";
pub const TIMESTAMP_NAME: &str = "org.apache.kafka.connect.data.Timestamp";

/// Milliseconds per day.
pub const DAY_MS: i64 = 86_400_000;

/// A Connect schema.
#[derive(Default)]
pub struct Schema {
    pub typ: Type,
    pub optional: bool,
    /// The default value, a value of this schema; `None`: none.
    pub default: Option<Value>,
    /// "" for none.
    pub name: String,
    pub version: Option<i32>,
    /// "" for none.
    pub doc: String,
    pub parameters: Option<BTreeMap<String, String>>,
    pub fields: Vec<Field>,
    pub items: Option<Rc<Schema>>,
    pub keys: Option<Rc<Schema>>,
    pub values: Option<Rc<Schema>>,
    raw: RefCell<Option<Rc<[u8]>>>,
}

/// A field of a struct schema.
#[derive(Clone, Debug)]
pub struct Field {
    pub name: String,
    pub schema: Rc<Schema>,
}

impl Clone for Schema {
    /// A copy that may be changed: fields and parameters are copied, nested schemas shared.
    fn clone(&self) -> Schema {
        Schema {
            typ: self.typ,
            optional: self.optional,
            default: self.default.clone(),
            name: self.name.clone(),
            version: self.version,
            doc: self.doc.clone(),
            parameters: self.parameters.clone(),
            fields: self.fields.clone(),
            items: self.items.clone(),
            keys: self.keys.clone(),
            values: self.values.clone(),
            raw: RefCell::new(None),
        }
    }
}

impl fmt::Debug for Schema {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.json() {
            Ok(j) => f.write_str(&String::from_utf8_lossy(&j)),
            Err(_) => write!(f, "Schema{{{}}}", self.typ.java_name()),
        }
    }
}

impl fmt::Display for Schema {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

impl Schema {
    /// A schema of type `typ`, required, with nothing else set.
    pub fn new(typ: Type) -> Schema {
        Schema { typ, ..Default::default() }
    }

    /// The schema of primitive type `t`.
    pub fn primitive(t: Type, optional: bool) -> Rc<Schema> {
        Rc::new(Schema { typ: t, optional, ..Default::default() })
    }

    fn logical(t: Type, name: &str, optional: bool) -> Rc<Schema> {
        Rc::new(Schema { typ: t, optional, name: name.to_string(), version: Some(1), ..Default::default() })
    }

    /// Connect's Timestamp logical type.
    pub fn timestamp(optional: bool) -> Rc<Schema> {
        Schema::logical(Type::Int64, TIMESTAMP_NAME, optional)
    }

    pub fn date(optional: bool) -> Rc<Schema> {
        Schema::logical(Type::Int32, DATE_NAME, optional)
    }

    pub fn time(optional: bool) -> Rc<Schema> {
        Schema::logical(Type::Int32, TIME_NAME, optional)
    }

    /// A struct schema with the name, version, doc and parameters of `self` and no fields (Kafka's
    /// SchemaUtil.copySchemaBasics onto SchemaBuilder.struct(): optionality and default are not
    /// copied).
    pub fn struct_basics(&self) -> Schema {
        Schema { typ: Type::Struct, name: self.name.clone(), version: self.version, doc: self.doc.clone(), parameters: self.parameters.clone(), ..Default::default() }
    }

    /// The index of the named field of a struct schema.
    pub fn field_index(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }

    fn field_index_bytes(&self, name: &[u8]) -> Option<usize> {
        self.fields.iter().position(|f| f.name.as_bytes() == name)
    }

    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// The scale of a Decimal schema.
    pub fn decimal_scale(&self) -> i32 {
        self.parameters.as_ref().and_then(|p| p.get("scale")).and_then(|s| s.parse().ok()).unwrap_or(0)
    }

    /// The schema as JsonConverter writes it, compact:
    /// {"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}],"optional":false,"name":"x"}.
    /// Computed once.
    pub fn json(&self) -> Result<Rc<[u8]>, String> {
        if let Some(r) = self.raw.borrow().as_ref() {
            return Ok(r.clone());
        }
        let mut out = Vec::with_capacity(64);
        self.append_json(&mut out)?;
        let r: Rc<[u8]> = Rc::from(out);
        *self.raw.borrow_mut() = Some(r.clone());
        Ok(r)
    }

    fn append_json(&self, dst: &mut Vec<u8>) -> Result<(), String> {
        dst.extend_from_slice(b"{\"type\":\"");
        dst.extend_from_slice(self.typ.json_name().as_bytes());
        dst.push(b'"');
        match self.typ {
            Type::Array => {
                let items = self.items.as_ref().ok_or("array schema without items")?;
                dst.extend_from_slice(b",\"items\":");
                items.append_json(dst)?;
            }
            Type::Map => {
                let (k, v) = match (&self.keys, &self.values) {
                    (Some(k), Some(v)) => (k, v),
                    _ => return Err("map schema without keys or values".to_string()),
                };
                dst.extend_from_slice(b",\"keys\":");
                k.append_json(dst)?;
                dst.extend_from_slice(b",\"values\":");
                v.append_json(dst)?;
            }
            Type::Struct => {
                dst.extend_from_slice(b",\"fields\":[");
                for (i, f) in self.fields.iter().enumerate() {
                    if i > 0 {
                        dst.push(b',');
                    }
                    f.schema.append_json(dst)?;
                    dst.pop();
                    dst.extend_from_slice(b",\"field\":");
                    append_json_string(dst, f.name.as_bytes());
                    dst.push(b'}');
                }
                dst.push(b']');
            }
            _ => {}
        }
        dst.extend_from_slice(if self.optional { b",\"optional\":true" } else { b",\"optional\":false" });
        if !self.name.is_empty() {
            dst.extend_from_slice(b",\"name\":");
            append_json_string(dst, self.name.as_bytes());
        }
        if let Some(v) = self.version {
            dst.extend_from_slice(b",\"version\":");
            dst.extend_from_slice(v.to_string().as_bytes());
        }
        if !self.doc.is_empty() {
            dst.extend_from_slice(b",\"doc\":");
            append_json_string(dst, self.doc.as_bytes());
        }
        if let Some(p) = &self.parameters {
            dst.extend_from_slice(b",\"parameters\":{");
            for (i, (k, v)) in p.iter().enumerate() {
                if i > 0 {
                    dst.push(b',');
                }
                append_json_string(dst, k.as_bytes());
                dst.push(b':');
                append_json_string(dst, v.as_bytes());
            }
            dst.push(b'}');
        }
        if let Some(d) = &self.default {
            dst.extend_from_slice(b",\"default\":");
            Encoder::default().value(dst, Some(self), d, "default")?;
        }
        dst.push(b'}');
        Ok(())
    }

    /// Whether two schemas are the same: by their JSON, or for structs by their fields (a struct
    /// default is read with its schema before the schema has the default).
    pub fn same(a: &Schema, b: &Schema) -> bool {
        if std::ptr::eq(a, b) || matches!((a.json(), b.json()), (Ok(x), Ok(y)) if x == y) {
            return true;
        }
        a.typ == Type::Struct
            && b.typ == Type::Struct
            && a.fields.len() == b.fields.len()
            && a.fields.iter().zip(&b.fields).all(|(x, y)| x.name == y.name && Schema::same(&x.schema, &y.schema))
    }

    /// A plain schema of type t: nothing but the type and optionality set.
    fn is_plain(&self, t: Type, optional: bool) -> bool {
        self.typ == t && self.optional == optional && self.name.is_empty() && self.version.is_none() && self.doc.is_empty() && self.parameters.is_none() && self.default.is_none()
    }
}

/// A value of a struct schema: one value per field, in the schema's order.
#[derive(Clone, Debug)]
pub struct Struct {
    pub schema: Rc<Schema>,
    pub values: Vec<Value>,
}

impl Struct {
    /// A struct of schema `s` with every field null.
    pub fn new(s: Rc<Schema>) -> Struct {
        let n = s.fields.len();
        Struct { schema: s, values: vec![Value::Null; n] }
    }

    /// The value of the named field; an unknown field is an error worded as Kafka's.
    pub fn get(&self, field: &str) -> Result<&Value, String> {
        match self.schema.field_index(field) {
            Some(i) => Ok(&self.values[i]),
            None => Err(format!("{} is not a valid field name", field)),
        }
    }

    pub fn put(&mut self, field: &str, v: Value) -> Result<(), String> {
        match self.schema.field_index(field) {
            Some(i) => {
                self.values[i] = v;
                Ok(())
            }
            None => Err(format!("{} is not a valid field name", field)),
        }
    }
}

impl PartialEq for Struct {
    fn eq(&self, o: &Struct) -> bool {
        Schema::same(&self.schema, &o.schema) && self.values == o.values
    }
}

/// A Connect Decimal: unscaled * 10^-scale.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decimal {
    pub unscaled: i128,
    pub scale: i32,
}

impl Decimal {
    /// The value at `scale`, if it has no more fractional digits than that (Java: "Rounding
    /// necessary" otherwise) and fits.
    pub fn rescale(self, scale: i32) -> Option<i128> {
        if scale >= self.scale {
            let mut u = self.unscaled;
            for _ in self.scale..scale {
                u = u.checked_mul(10)?;
            }
            Some(u)
        } else {
            let mut u = self.unscaled;
            for _ in scale..self.scale {
                if u % 10 != 0 {
                    return None;
                }
                u /= 10;
            }
            Some(u)
        }
    }

    pub fn to_f64(self) -> f64 {
        (self.unscaled as f64) * 10f64.powi(-self.scale)
    }

    /// The plain decimal text with `places` fractional digits (rounded half up, as big.Rat's
    /// FloatString).
    pub fn to_string_places(self, places: i32) -> String {
        let places = places.max(0);
        let u = match self.rescale(places) {
            Some(u) => u,
            None => {
                // Round to `places` digits.
                let mut u = self.unscaled;
                let mut rem_digit = 0i128;
                for _ in places..self.scale {
                    rem_digit = (u % 10).abs();
                    u /= 10;
                }
                if rem_digit >= 5 {
                    u += if self.unscaled < 0 { -1 } else { 1 };
                }
                u
            }
        };
        let neg = u < 0;
        let mut digits = u.unsigned_abs().to_string();
        if places > 0 {
            let p = places as usize;
            if digits.len() <= p {
                digits = "0".repeat(p - digits.len() + 1) + &digits;
            }
            digits.insert(digits.len() - p, '.');
        }
        if neg {
            digits.insert(0, '-');
        }
        digits
    }

    /// The fewest fractional digits that write the value exactly.
    pub fn min_scale(self) -> i32 {
        let mut s = self.scale.max(0);
        while s > 0 && self.rescale(s - 1).is_some() {
            s -= 1;
        }
        s
    }

    /// Parses a decimal number (1.25, -3, 1e3).
    pub fn parse(s: &str) -> Option<Decimal> {
        let s = s.trim();
        let (mant, exp) = match s.find(|c| c == 'e' || c == 'E') {
            Some(i) => (&s[..i], s[i + 1..].parse::<i32>().ok()?),
            None => (s, 0),
        };
        let (neg, mant) = match mant.strip_prefix('-') {
            Some(m) => (true, m),
            None => (false, mant.strip_prefix('+').unwrap_or(mant)),
        };
        let (int, frac) = match mant.find('.') {
            Some(i) => (&mant[..i], &mant[i + 1..]),
            None => (mant, ""),
        };
        if int.is_empty() && frac.is_empty() || !int.bytes().chain(frac.bytes()).all(|c| c.is_ascii_digit()) {
            return None;
        }
        let mut u: i128 = 0;
        for c in int.bytes().chain(frac.bytes()) {
            u = u.checked_mul(10)?.checked_add((c - b'0') as i128)?;
        }
        if neg {
            u = -u;
        }
        Some(Decimal { unscaled: u, scale: frac.len() as i32 - exp })
    }

    /// The unscaled value at `scale` as BigInteger.toByteArray writes it: the minimal big-endian
    /// two's complement.
    pub fn to_bytes(self, scale: i32) -> Result<Vec<u8>, String> {
        let u = self.rescale(scale).ok_or_else(|| format!("{} does not fit scale {} (rounding necessary)", self.to_string_places(10), scale))?;
        let b = u.to_be_bytes();
        let mut i = 0;
        while i < 15 && ((b[i] == 0 && b[i + 1] & 0x80 == 0) || (b[i] == 0xff && b[i + 1] & 0x80 != 0)) {
            i += 1;
        }
        Ok(b[i..].to_vec())
    }

    /// Reads a two's-complement unscaled value at `scale`.
    pub fn from_bytes(b: &[u8], scale: i32) -> Result<Decimal, String> {
        if b.len() > 16 {
            return Err(format!("Decimal of {} bytes is too large for this runtime (at most 16)", b.len()));
        }
        let neg = b.first().map_or(false, |c| c & 0x80 != 0);
        let mut a = if neg { [0xffu8; 16] } else { [0u8; 16] };
        a[16 - b.len()..].copy_from_slice(b);
        Ok(Decimal { unscaled: i128::from_be_bytes(a), scale })
    }
}

/// A Connect value (see the module doc).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int8(i8),
    Int16(i16),
    Int32(i32),
    Int64(i64),
    Float32(f32),
    Float64(f64),
    String(String),
    Bytes(Vec<u8>),
    Array(Vec<Value>),
    Map(BTreeMap<String, Value>),
    Entries(Vec<(Value, Value)>),
    Struct(Struct),
    /// Date, Time, Timestamp: milliseconds since the epoch, UTC.
    Time(i64),
    Decimal(Decimal),
}

impl Default for Value {
    fn default() -> Value {
        Value::Null
    }
}

impl Value {
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The Java class Kafka would see, as error messages name it ("class java.lang.String").
    pub fn java_class(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Map(_) | Value::Entries(_) => "class java.util.HashMap",
            Value::Array(_) => "class java.util.ArrayList",
            Value::String(_) => "class java.lang.String",
            Value::Bool(_) => "class java.lang.Boolean",
            Value::Int8(_) => "class java.lang.Byte",
            Value::Int16(_) => "class java.lang.Short",
            Value::Int32(_) => "class java.lang.Integer",
            Value::Int64(_) => "class java.lang.Long",
            Value::Float32(_) => "class java.lang.Float",
            Value::Float64(_) => "class java.lang.Double",
            Value::Bytes(_) => "class [B",
            Value::Struct(_) => "class org.apache.kafka.connect.data.Struct",
            Value::Time(_) => "class java.util.Date",
            Value::Decimal(_) => "class java.math.BigDecimal",
        }
    }

    /// `java_class` without "class ".
    pub fn class_name(&self) -> &'static str {
        let c = self.java_class();
        c.strip_prefix("class ").unwrap_or(c)
    }

    /// The integer of an integer value.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::Int8(n) => Some(n as i64),
            Value::Int16(n) => Some(n as i64),
            Value::Int32(n) => Some(n as i64),
            Value::Int64(n) => Some(n),
            _ => None,
        }
    }
}

/// Whether `d` is a null: the null tag, or a JSON payload null (with or without a schema), as
/// Kafka's record.value() == null.
pub fn is_null(d: &Data) -> bool {
    match d {
        Data::Null => true,
        Data::Json { payload, .. } => {
            let p = trim_ws(payload);
            p.is_empty() || p == b"null"
        }
        _ => false,
    }
}

fn trim_ws(b: &[u8]) -> &[u8] {
    let ws = |c: &u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r');
    let start = b.iter().position(|c| !ws(c)).unwrap_or(b.len());
    let end = b.iter().rposition(|c| !ws(c)).map_or(start, |i| i + 1);
    &b[start..end]
}

thread_local! {
    static SCHEMAS: RefCell<(Option<(Vec<u8>, Rc<Schema>)>, HashMap<Vec<u8>, Rc<Schema>>)> = RefCell::new((None, HashMap::new()));
    static PLAIN: (Rc<Schema>, Rc<Schema>) = (Schema::primitive(Type::String, false), Schema::primitive(Type::Bytes, true));
}

const SCHEMA_CACHE_SIZE: usize = 256;

/// Parses a schema as JsonConverter writes it; empty input or the JSON null is no schema. Equal
/// JSON returns the same `Rc`.
pub fn parse_schema(raw: &[u8]) -> Result<Option<Rc<Schema>>, String> {
    if raw.is_empty() {
        return Ok(None);
    }
    // A batch usually has one schema: the last one is checked first, without hashing, eight
    // bytes per step (a slice's == is a byte loop in a guest, paid for per byte in fuel).
    let (hit, last) = SCHEMAS.with(|c| {
        let c = c.borrow();
        if let Some((b, s)) = &c.0 {
            if crate::words::same(b, raw) {
                return (Some(s.clone()), true);
            }
        }
        (c.1.get(raw).cloned(), false)
    });
    if let Some(s) = hit {
        if !last {
            SCHEMAS.with(|c| c.borrow_mut().0 = Some((raw.to_vec(), s.clone())));
        }
        return Ok(Some(s));
    }
    let v = json::parse(raw).map_err(|e| format!("invalid schema JSON: {}", e))?;
    if v == json::Value::Null {
        return Ok(None);
    }
    let s = Rc::new(build_schema(&v)?);
    SCHEMAS.with(|c| {
        let mut c = c.borrow_mut();
        if c.1.len() >= SCHEMA_CACHE_SIZE {
            c.1.clear();
        }
        c.1.insert(raw.to_vec(), s.clone());
        c.0 = Some((raw.to_vec(), s.clone()));
    });
    Ok(Some(s))
}

/// JsonConverter.asConnectSchema, with its error messages.
fn build_schema(v: &json::Value) -> Result<Schema, String> {
    let t = v.get("type").and_then(json::Value::as_str).ok_or("Schema must contain 'type' field")?;
    let typ = Type::from_json_name(t).ok_or_else(|| format!("Unknown schema type: {}", t))?;
    let mut s = Schema::new(typ);
    match typ {
        Type::Array => {
            let items = v.get("items").filter(|i| **i != json::Value::Null).ok_or("Array schema did not specify the element type")?;
            s.items = Some(Rc::new(build_schema(items)?));
        }
        Type::Map => {
            let keys = v.get("keys").filter(|i| **i != json::Value::Null).ok_or("Map schema did not specify the key type")?;
            let values = v.get("values").filter(|i| **i != json::Value::Null).ok_or("Map schema did not specify the value type")?;
            s.keys = Some(Rc::new(build_schema(keys)?));
            s.values = Some(Rc::new(build_schema(values)?));
        }
        Type::Struct => {
            let fields = match v.get("fields") {
                Some(json::Value::Array(a)) => a,
                _ => return Err("Struct schema's \"fields\" argument is not an array.".to_string()),
            };
            for f in fields {
                let name = f.get("field").and_then(json::Value::as_str).ok_or("Struct schema's field name not specified properly")?;
                if s.field_index(name).is_some() {
                    return Err(format!("Cannot create field because of field name duplication {}", name));
                }
                let fs = build_schema(f)?;
                s.fields.push(Field { name: name.to_string(), schema: Rc::new(fs) });
            }
        }
        _ => {}
    }
    s.optional = v.get("optional") == Some(&json::Value::Bool(true));
    s.name = v.get("name").and_then(json::Value::as_str).unwrap_or("").to_string();
    s.doc = v.get("doc").and_then(json::Value::as_str).unwrap_or("").to_string();
    if let Some(json::Value::Int(n)) = v.get("version") {
        s.version = Some(*n as i32);
    }
    if let Some(json::Value::Object(p)) = v.get("parameters") {
        let mut m = BTreeMap::new();
        for (k, pv) in p {
            match pv {
                json::Value::String(x) => {
                    m.insert(k.clone(), x.clone());
                }
                _ => return Err("Schema parameters must have string values.".to_string()),
            }
        }
        s.parameters = Some(m);
    }
    if s.name == DECIMAL_NAME && s.typ == Type::Bytes && s.parameters.as_ref().and_then(|p| p.get("scale")).and_then(|x| x.parse::<i32>().ok()).is_none() {
        return Err("Invalid Decimal schema: scale parameter not found.".to_string());
    }
    if let Some(d) = v.get("default") {
        if *d != json::Value::Null {
            // The default is read as a payload of its schema is, by the one parser.
            let raw = d.to_json();
            let tmp = Rc::new(s.clone());
            let (def, _) = read_payload(&tmp, raw.as_bytes(), &PayloadOptions { root: "default", ..Default::default() }).map_err(|e| format!("Invalid default value: {}", e))?;
            s.default = Some(def);
        }
    }
    Ok(s)
}

/// The JsonConverter settings that change how a payload is read or written.
#[derive(Default, Clone)]
pub struct PayloadOptions<'a> {
    /// Names the payload in error messages ("... at payload.tags[1]").
    pub root: &'a str,
    /// Leaves a null null where the schema has a default (replace.null.with.default=false).
    pub keep_nulls: bool,
    /// The payload is a Connect value on its way to bytes: a required null is refused with that
    /// direction's message.
    pub writing: bool,
    /// Decimals as JSON numbers (decimal.format=NUMERIC), not base64.
    pub decimal_numeric: bool,
}

/// Returns the schema (`None`: schemaless) and value of a key, value or header value. A string is a
/// string with the string schema, bytes have the optional bytes schema, a null has no schema.
pub fn decode(d: &Data, keep_nulls: bool) -> Result<(Option<Rc<Schema>>, Value), String> {
    match d {
        Data::Null => Ok((None, Value::Null)),
        Data::String(b) => Ok((Some(PLAIN.with(|p| p.0.clone())), Value::String(String::from_utf8_lossy(b).into_owned()))),
        Data::Bytes(b) => Ok((Some(PLAIN.with(|p| p.1.clone())), Value::Bytes(b.to_vec()))),
        Data::Json { schema, payload } => {
            let s = parse_schema(schema)?;
            let opts = PayloadOptions { keep_nulls, ..Default::default() };
            let v = match &s {
                Some(s) => read_payload(s, payload, &opts)?.0,
                None => read_schemaless(payload)?,
            };
            Ok((s, v))
        }
    }
}

/// The Data of a value with schema `s` (`None`: schemaless). A non-null string with the plain string
/// schema becomes a string, bytes with the optional bytes schema bytes, a null without a schema the
/// null, and everything else JSON (a null with a schema: the payload null).
pub fn encode(s: Option<&Rc<Schema>>, v: &Value) -> Result<Data<'static>, String> {
    let s = match s {
        None => {
            if v.is_null() {
                return Ok(Data::Null);
            }
            let mut b = Vec::with_capacity(64);
            append_schemaless(&mut b, v)?;
            return Ok(Data::Json { schema: Cow::Borrowed(b""), payload: Cow::Owned(b) });
        }
        Some(s) => s,
    };
    if v.is_null() {
        return Ok(Data::Json { schema: Cow::Owned(s.json()?.to_vec()), payload: Cow::Borrowed(b"null") });
    }
    match v {
        Value::String(x) if s.is_plain(Type::String, false) => return Ok(Data::String(Cow::Owned(x.clone().into_bytes()))),
        Value::Bytes(x) if s.is_plain(Type::Bytes, true) => return Ok(Data::Bytes(Cow::Owned(x.clone()))),
        _ => {}
    }
    let raw = s.json()?;
    let mut b = Vec::with_capacity(128);
    Encoder::default().value(&mut b, Some(s), v, "")?;
    Ok(Data::Json { schema: Cow::Owned(raw.to_vec()), payload: Cow::Owned(b) })
}

/// Appends the JSON of `v` with schema `s` (`None`: schemaless), as JsonConverter writes a payload.
pub fn append_json(dst: &mut Vec<u8>, s: Option<&Schema>, v: &Value) -> Result<(), String> {
    Encoder::default().value(dst, s, v, "")
}

/// `append_json` for the value of a struct field; errors name the field.
pub fn append_field_json(dst: &mut Vec<u8>, field: &str, s: &Schema, v: &Value) -> Result<(), String> {
    Encoder::default().value(dst, Some(s), v, field)
}

/// `append_json` with JsonConverter's settings (decimal.format).
pub fn append_payload(dst: &mut Vec<u8>, s: Option<&Schema>, v: &Value, o: &PayloadOptions) -> Result<(), String> {
    Encoder { decimal_numeric: o.decimal_numeric }.value(dst, s, v, "")
}

/// Writes values as JsonConverter does with its settings.
#[derive(Default)]
struct Encoder {
    decimal_numeric: bool,
}

impl Encoder {
    fn value(&self, dst: &mut Vec<u8>, s: Option<&Schema>, v: &Value, at: &str) -> Result<(), String> {
        let s = match s {
            None => return append_schemaless(dst, v),
            Some(s) => s,
        };
        if v.is_null() {
            if !s.optional {
                if let Some(d) = &s.default {
                    return self.value(dst, Some(s), d, at);
                }
                if !at.is_empty() {
                    return Err(format!("Invalid value: null used for required field: {}, schema type: {}", go_quote(at), s.typ.java_name()));
                }
                return Err("Conversion error: null value for field that is required and has no default value".to_string());
            }
            dst.extend_from_slice(b"null");
            return Ok(());
        }
        let bad = || {
            if !at.is_empty() {
                Err(format!("Invalid Java object for schema with type {}: {} for field: {}", s.typ.java_name(), rust_type(v), go_quote(at)))
            } else {
                Err(format!("Invalid Java object for schema with type {}: {}", s.typ.java_name(), rust_type(v)))
            }
        };
        match s.typ {
            Type::Boolean => match v {
                Value::Bool(b) => dst.extend_from_slice(if *b { b"true" } else { b"false" }),
                _ => return bad(),
            },
            Type::Int8 | Type::Int16 | Type::Int32 | Type::Int64 => {
                if let Value::Time(ms) = v {
                    let n = match s.name.as_str() {
                        DATE_NAME => ms.div_euclid(DAY_MS),
                        TIME_NAME => ms.rem_euclid(DAY_MS),
                        TIMESTAMP_NAME => *ms,
                        _ => return bad(),
                    };
                    push_int(dst, n);
                } else {
                    match v.as_i64() {
                        Some(n) => push_int(dst, n),
                        None => return bad(),
                    }
                }
            }
            Type::Float32 | Type::Float64 => match v {
                Value::Float32(f) => append_f32(dst, *f),
                Value::Float64(f) => append_f64(dst, *f),
                _ => match v.as_i64() {
                    Some(n) => append_f64(dst, n as f64),
                    None => return bad(),
                },
            },
            Type::String => match v {
                Value::String(x) => append_json_string(dst, x.as_bytes()),
                _ => return bad(),
            },
            Type::Bytes => match v {
                Value::Decimal(d) if s.name == DECIMAL_NAME => {
                    if self.decimal_numeric {
                        let scale = s.decimal_scale();
                        if d.rescale(scale).is_none() {
                            return Err(format!("{} does not fit scale {} (rounding necessary)", d.to_string_places(10), scale));
                        }
                        dst.extend_from_slice(Decimal { unscaled: d.rescale(scale).unwrap_or(0), scale }.to_string_places(scale).as_bytes());
                    } else {
                        let b = d.to_bytes(s.decimal_scale())?;
                        dst.push(b'"');
                        base64_encode(dst, &b);
                        dst.push(b'"');
                    }
                }
                Value::Bytes(b) => {
                    dst.push(b'"');
                    base64_encode(dst, b);
                    dst.push(b'"');
                }
                _ => return bad(),
            },
            Type::Array => match v {
                Value::Array(a) => {
                    dst.push(b'[');
                    for (i, e) in a.iter().enumerate() {
                        if i > 0 {
                            dst.push(b',');
                        }
                        self.value(dst, s.items.as_deref(), e, at)?;
                    }
                    dst.push(b']');
                }
                _ => return bad(),
            },
            Type::Map => {
                let (ks, vs) = (s.keys.as_deref(), s.values.as_deref());
                let obj = ks.map_or(false, |k| k.typ == Type::String);
                match v {
                    Value::Map(m) => {
                        if !obj {
                            return bad();
                        }
                        dst.push(b'{');
                        for (i, (k, e)) in m.iter().enumerate() {
                            if i > 0 {
                                dst.push(b',');
                            }
                            append_json_string(dst, k.as_bytes());
                            dst.push(b':');
                            self.value(dst, vs, e, at)?;
                        }
                        dst.push(b'}');
                    }
                    Value::Entries(m) => {
                        dst.push(if obj { b'{' } else { b'[' });
                        for (i, (k, e)) in m.iter().enumerate() {
                            if i > 0 {
                                dst.push(b',');
                            }
                            if !obj {
                                dst.push(b'[');
                            }
                            self.value(dst, ks, k, at)?;
                            dst.push(if obj { b':' } else { b',' });
                            self.value(dst, vs, e, at)?;
                            if !obj {
                                dst.push(b']');
                            }
                        }
                        dst.push(if obj { b'}' } else { b']' });
                    }
                    _ => return bad(),
                }
            }
            Type::Struct => match v {
                Value::Struct(st) => {
                    if !Schema::same(&st.schema, s) {
                        return Err("Mismatching schema.".to_string());
                    }
                    dst.push(b'{');
                    for (i, f) in s.fields.iter().enumerate() {
                        if i > 0 {
                            dst.push(b',');
                        }
                        append_json_string(dst, f.name.as_bytes());
                        dst.push(b':');
                        self.value(dst, Some(&f.schema), &st.values[i], &f.name)?;
                    }
                    dst.push(b'}');
                }
                _ => return bad(),
            },
        }
        Ok(())
    }
}

/// The Go SDK's name of a value's type in encoding errors.
fn rust_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Int8(_) => "int8",
        Value::Int16(_) => "int16",
        Value::Int32(_) => "int32",
        Value::Int64(_) => "int64",
        Value::Float32(_) => "float32",
        Value::Float64(_) => "float64",
        Value::String(_) => "string",
        Value::Bytes(_) => "[]uint8",
        Value::Array(_) => "array",
        Value::Map(_) => "object",
        Value::Entries(_) => "[]connect.MapEntry",
        Value::Struct(_) => "*connect.Struct",
        Value::Time(_) => "time.Time",
        Value::Decimal(_) => "*big.Rat",
    }
}

fn push_int(dst: &mut Vec<u8>, n: i64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    let neg = n < 0;
    let mut u = n.unsigned_abs();
    loop {
        i -= 1;
        buf[i] = b'0' + (u % 10) as u8;
        u /= 10;
        if u == 0 {
            break;
        }
    }
    if neg {
        dst.push(b'-');
    }
    dst.extend_from_slice(&buf[i..]);
}

/// Writes a float as Go's strconv.FormatFloat(f, 'g', -1, bits) does, with ".0" added to whole
/// numbers so that the value reads back as a floating point number; NaN and infinities as strings,
/// as Jackson writes them.
fn append_float(dst: &mut Vec<u8>, shortest: String, exp_form: String, finite: bool, nan: bool, neg: bool) {
    if !finite {
        let s = if nan {
            "NaN"
        } else if neg {
            "-Inf"
        } else {
            "+Inf"
        };
        append_json_string(dst, s.as_bytes());
        return;
    }
    // Go's 'g' with the shortest digits uses the exponent form when exp < -4 || exp >= 6.
    let (mant, exp) = exp_form.split_once('e').unwrap_or((&exp_form, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if exp < -4 || exp >= 6 {
        dst.extend_from_slice(mant.as_bytes());
        dst.push(b'e');
        dst.push(if exp < 0 { b'-' } else { b'+' });
        let e = exp.unsigned_abs();
        if e < 10 {
            dst.push(b'0');
        }
        dst.extend_from_slice(e.to_string().as_bytes());
        return;
    }
    dst.extend_from_slice(shortest.as_bytes());
    if !shortest.contains('.') {
        dst.extend_from_slice(b".0");
    }
}

pub fn append_f64(dst: &mut Vec<u8>, f: f64) {
    append_float(dst, format!("{}", f), format!("{:e}", f), f.is_finite(), f.is_nan(), f < 0.0)
}

pub fn append_f32(dst: &mut Vec<u8>, f: f32) {
    append_float(dst, format!("{}", f), format!("{:e}", f), f.is_finite(), f.is_nan(), f < 0.0)
}

fn append_schemaless(dst: &mut Vec<u8>, v: &Value) -> Result<(), String> {
    match v {
        Value::Null => dst.extend_from_slice(b"null"),
        Value::Bool(b) => dst.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Int8(_) | Value::Int16(_) | Value::Int32(_) | Value::Int64(_) => push_int(dst, v.as_i64().unwrap_or(0)),
        Value::Float32(f) => append_f32(dst, *f),
        Value::Float64(f) => append_f64(dst, *f),
        Value::String(s) => append_json_string(dst, s.as_bytes()),
        Value::Bytes(b) => {
            dst.push(b'"');
            base64_encode(dst, b);
            dst.push(b'"');
        }
        Value::Time(ms) => push_int(dst, *ms),
        Value::Decimal(d) => dst.extend_from_slice(d.to_string_places(d.min_scale()).as_bytes()),
        Value::Array(a) => {
            dst.push(b'[');
            for (i, e) in a.iter().enumerate() {
                if i > 0 {
                    dst.push(b',');
                }
                append_schemaless(dst, e)?;
            }
            dst.push(b']');
        }
        Value::Map(m) => {
            dst.push(b'{');
            for (i, (k, e)) in m.iter().enumerate() {
                if i > 0 {
                    dst.push(b',');
                }
                append_json_string(dst, k.as_bytes());
                dst.push(b':');
                append_schemaless(dst, e)?;
            }
            dst.push(b'}');
        }
        Value::Entries(m) => {
            dst.push(b'[');
            for (i, (k, e)) in m.iter().enumerate() {
                if i > 0 {
                    dst.push(b',');
                }
                dst.push(b'[');
                append_schemaless(dst, k)?;
                dst.push(b',');
                append_schemaless(dst, e)?;
                dst.push(b']');
            }
            dst.push(b']');
        }
        Value::Struct(st) => {
            Encoder::default().value(dst, Some(st.schema.as_ref()), v, "")?;
        }
    }
    Ok(())
}

pub use crate::words::append_json_string;

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Appends standard base64 with padding.
pub fn base64_encode(dst: &mut Vec<u8>, b: &[u8]) {
    for c in b.chunks(3) {
        let n = (c[0] as u32) << 16 | (*c.get(1).unwrap_or(&0) as u32) << 8 | *c.get(2).unwrap_or(&0) as u32;
        dst.push(B64[(n >> 18) as usize & 63]);
        dst.push(B64[(n >> 12) as usize & 63]);
        dst.push(if c.len() > 1 { B64[(n >> 6) as usize & 63] } else { b'=' });
        dst.push(if c.len() > 2 { B64[n as usize & 63] } else { b'=' });
    }
}

/// Decodes standard base64 with padding, as Go's StdEncoding.DecodeString.
pub fn base64_decode(s: &[u8]) -> Result<Vec<u8>, String> {
    let val = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    let mut i = 0;
    while i < s.len() {
        let q = &s[i..];
        if q.len() < 4 {
            return Err(format!("illegal base64 data at input byte {}", i + q.len().min(4).saturating_sub(0).min(q.len())));
        }
        let mut n = 0u32;
        let mut pad = 0;
        for (j, &c) in q[..4].iter().enumerate() {
            if c == b'=' && j >= 2 && i + 4 == s.len() {
                if j == 2 && q[3] != b'=' {
                    return Err(format!("illegal base64 data at input byte {}", i + 3));
                }
                pad += 1;
                n <<= 6;
                continue;
            }
            if pad > 0 {
                return Err(format!("illegal base64 data at input byte {}", i + j));
            }
            match val(c) {
                Some(x) => n = n << 6 | x,
                None => return Err(format!("illegal base64 data at input byte {}", i + j)),
            }
        }
        out.push((n >> 16) as u8);
        if pad < 2 {
            out.push((n >> 8) as u8);
        }
        if pad < 1 {
            out.push(n as u8);
        }
        i += 4;
    }
    Ok(out)
}

/// Quotes as Go's %q for the ASCII texts of field names.
fn go_quote(s: &str) -> String {
    crate::config::go_quote(s)
}

/// Parses a JSON payload with schema `s` into its value, as JsonConverter reads one: nulls take
/// the schema's default (unless `keep_nulls`), unknown struct fields are dropped, integral numbers
/// written as 3.0 are integers, decimals may be numbers. The flag says whether writing the value
/// again says more than the payload does (a default filled in, a field dropped...).
pub fn read_payload(s: &Rc<Schema>, payload: &[u8], o: &PayloadOptions) -> Result<(Value, bool), String> {
    let mut p = Parser { b: payload, i: 0, opts: o, path: Vec::new(), rewritten: false, depth: 0 };
    let v = p.value(Some(s))?;
    p.ws();
    if p.i != p.b.len() {
        return Err(format!("invalid JSON payload: unexpected data after the JSON value at byte {}", p.i));
    }
    Ok((v, p.rewritten))
}

/// Parses a schemaless JSON payload: objects become maps, integers Int64, other numbers Float64.
pub fn read_schemaless(payload: &[u8]) -> Result<Value, String> {
    let o = PayloadOptions::default();
    let mut p = Parser { b: payload, i: 0, opts: &o, path: Vec::new(), rewritten: false, depth: 0 };
    let v = p.value(None)?;
    p.ws();
    if p.i != p.b.len() {
        return Err(format!("invalid JSON payload: unexpected data after the JSON value at byte {}", p.i));
    }
    Ok(v)
}

enum PathElem {
    Name(String),
    Index(usize),
}

struct Parser<'a, 'o> {
    b: &'a [u8],
    i: usize,
    opts: &'o PayloadOptions<'o>,
    path: Vec<PathElem>,
    rewritten: bool,
    depth: usize,
}

const MAX_DEPTH: usize = 200;

fn kind_of(c: u8) -> &'static str {
    match c {
        b'{' => "OBJECT",
        b'[' => "ARRAY",
        b'"' => "STRING",
        b't' | b'f' => "BOOLEAN",
        b'n' => "NULL",
        b'-' | b'0'..=b'9' => "NUMBER",
        _ => "",
    }
}

impl<'a, 'o> Parser<'a, 'o> {
    fn where_(&self) -> String {
        let mut b = self.opts.root.to_string();
        for e in &self.path {
            match e {
                PathElem::Index(i) => {
                    b.push('[');
                    b.push_str(&i.to_string());
                    b.push(']');
                }
                PathElem::Name(n) => {
                    if !b.is_empty() {
                        b.push('.');
                    }
                    b.push_str(n);
                }
            }
        }
        b
    }

    fn located(&self, msg: &str) -> String {
        let w = self.where_();
        if w.is_empty() {
            msg.to_string()
        } else {
            format!("{} (at {})", msg, w)
        }
    }

    fn mismatch(&self, s: &Schema, detail: &str) -> String {
        let w = self.where_();
        if w.is_empty() {
            format!("Invalid value for schema type {}: {}", s.typ.java_name(), detail)
        } else {
            format!("Invalid value for schema type {} at {}: {}", s.typ.java_name(), w, detail)
        }
    }

    fn found(&self) -> String {
        let o = PayloadOptions::default();
        let mut q = Parser { b: self.b, i: self.i, opts: &o, path: Vec::new(), rewritten: false, depth: 0 };
        let c = q.peek();
        let kind = format!("found {}", kind_of(c));
        match c {
            b'"' => {
                if let Ok(mut s) = q.str() {
                    if s.len() > 40 {
                        let mut n = 40;
                        while !s.is_char_boundary(n) {
                            n -= 1;
                        }
                        s.truncate(n);
                        s.push_str("...");
                    }
                    return format!("{} {}", kind, go_quote(&s));
                }
            }
            b't' | b'f' => {
                if q.lit(b"true") || q.lit(b"false") {
                    return format!("{} {}", kind, String::from_utf8_lossy(&self.b[self.i..q.i]));
                }
            }
            b'-' | b'0'..=b'9' => {
                if let Ok((tok, _)) = q.number() {
                    return format!("{} {}", kind, tok);
                }
            }
            _ => {}
        }
        kind
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    fn syntax(&self, what: &str) -> String {
        match self.b.get(self.i) {
            None => format!("invalid JSON payload: unexpected end of input, want {}", what),
            Some(&c) => format!("invalid JSON payload: unexpected {} at byte {}, want {}", go_quote_byte(c), self.i, what),
        }
    }

    fn lit(&mut self, w: &[u8]) -> bool {
        if self.b[self.i..].starts_with(w) {
            self.i += w.len();
            true
        } else {
            false
        }
    }

    fn peek(&self) -> u8 {
        self.b.get(self.i).copied().unwrap_or(0)
    }

    fn value(&mut self, s: Option<&Rc<Schema>>) -> Result<Value, String> {
        self.ws();
        if self.i >= self.b.len() {
            return Err(self.syntax("a value"));
        }
        let c = self.b[self.i];
        if c == b'n' {
            if !self.lit(b"null") {
                return Err(self.syntax("null"));
            }
            return match s {
                None => Ok(Value::Null),
                Some(s) => self.null_for(s),
            };
        }
        let s = match s {
            None => return self.schemaless(c),
            Some(s) => s,
        };
        if kind_of(c).is_empty() {
            return Err(self.syntax("a value"));
        }
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err("invalid JSON payload: nested too deeply".to_string());
        }
        let r = self.typed(s, c);
        self.depth -= 1;
        r
    }

    fn typed(&mut self, s: &Rc<Schema>, c: u8) -> Result<Value, String> {
        match s.typ {
            Type::Boolean => {
                if self.lit(b"true") {
                    return Ok(Value::Bool(true));
                }
                if self.lit(b"false") {
                    return Ok(Value::Bool(false));
                }
            }
            Type::Int8 | Type::Int16 | Type::Int32 | Type::Int64 if c == b'-' || c.is_ascii_digit() => {
                let (tok, is_int) = self.number()?;
                let bits = s.typ.int_bits().unwrap_or(64);
                let lim = 1i128 << (bits - 1);
                let parsed = if is_int { tok.parse::<i128>().ok().filter(|n| *n >= -lim && *n < lim) } else { None };
                let n = match parsed {
                    Some(n) => n as i64,
                    None => {
                        let f: f64 = tok.parse().map_err(|_| self.mismatch(s, &format!("{} is not an integer in range", tok)))?;
                        let limf = (lim as f64).abs();
                        if f != f.trunc() || f < -limf || f >= limf {
                            return Err(self.mismatch(s, &format!("{} is not an integer in range", tok)));
                        }
                        self.rewritten = true;
                        f as i64
                    }
                };
                return Ok(match s.typ {
                    Type::Int8 => Value::Int8(n as i8),
                    Type::Int16 => Value::Int16(n as i16),
                    Type::Int32 => match s.name.as_str() {
                        DATE_NAME => Value::Time(n * DAY_MS),
                        TIME_NAME => Value::Time(n),
                        _ => Value::Int32(n as i32),
                    },
                    _ if s.name == TIMESTAMP_NAME => Value::Time(n),
                    _ => Value::Int64(n),
                });
            }
            Type::Float32 | Type::Float64 if c == b'-' || c.is_ascii_digit() => {
                let (tok, _) = self.number()?;
                let f: f64 = tok.parse().map_err(|_| self.mismatch(s, &format!("found NUMBER {}", tok)))?;
                return Ok(if s.typ == Type::Float32 { Value::Float32(f as f32) } else { Value::Float64(f) });
            }
            Type::String if c == b'"' => return Ok(Value::String(self.str()?)),
            Type::Bytes => return self.bytes_value(s, c),
            Type::Array if c == b'[' => {
                let mut out = Vec::new();
                let items = s.items.clone();
                self.elements(|p| {
                    p.path.push(PathElem::Index(out.len()));
                    let v = p.value(items.as_ref());
                    p.path.pop();
                    out.push(v?);
                    Ok(())
                })?;
                return Ok(Value::Array(out));
            }
            Type::Map => return self.map_value(s, c),
            Type::Struct => {
                if c != b'{' {
                    return Err(self.located(&format!("Structs should be encoded as JSON objects, but found {}", kind_of(c))));
                }
                return self.struct_value(s);
            }
            _ => {}
        }
        Err(self.mismatch(s, &self.found()))
    }

    fn bytes_value(&mut self, s: &Schema, c: u8) -> Result<Value, String> {
        let decimal = s.name == DECIMAL_NAME;
        if c == b'"' {
            let text = self.str()?;
            let b = match base64_decode(text.as_bytes()) {
                Ok(b) => b,
                Err(e) => {
                    let w = self.where_();
                    return Err(if w.is_empty() { format!("Invalid bytes field: {}", e) } else { format!("Invalid bytes field at {}: {}", w, e) });
                }
            };
            if !decimal {
                return Ok(Value::Bytes(b));
            }
            if self.opts.decimal_numeric {
                self.rewritten = true;
            }
            return Decimal::from_bytes(&b, s.decimal_scale()).map(Value::Decimal).map_err(|e| self.located(&e));
        }
        if decimal && (c == b'-' || c.is_ascii_digit()) {
            let (tok, _) = self.number()?;
            if !self.opts.decimal_numeric {
                self.rewritten = true;
            }
            let scale = s.decimal_scale();
            let d = Decimal::parse(&tok).ok_or_else(|| self.located(&format!("Invalid Decimal value: {} is not a number", tok)))?;
            if d.rescale(scale).is_none() {
                return Err(self.located(&format!("Invalid Decimal value: {} does not fit scale {} (rounding necessary)", tok, scale)));
            }
            return Ok(Value::Decimal(d));
        }
        Err(self.mismatch(s, &self.found()))
    }

    fn map_value(&mut self, s: &Schema, c: u8) -> Result<Value, String> {
        let (ks, vs) = (s.keys.clone(), s.values.clone());
        if ks.as_ref().map_or(false, |k| k.typ == Type::String) {
            if c != b'{' {
                return Err(self.located(&format!("Maps with string fields should be encoded as JSON objects, but found {}", kind_of(c))));
            }
            let mut out = BTreeMap::new();
            let mut n = 0;
            self.members(|p, k| {
                let key = String::from_utf8_lossy(k).into_owned();
                p.path.push(PathElem::Name(key.clone()));
                let v = p.value(vs.as_ref());
                p.path.pop();
                out.insert(key, v?);
                n += 1;
                Ok(())
            })?;
            if n != out.len() {
                self.rewritten = true;
            }
            return Ok(Value::Map(out));
        }
        if c != b'[' {
            return Err(self.located(&format!("Maps with non-string fields should be encoded as JSON array of tuples, but found {}", kind_of(c))));
        }
        let mut out = Vec::new();
        self.elements(|p| {
            p.path.push(PathElem::Index(out.len()));
            p.ws();
            let c = p.peek();
            if c != b'[' {
                let e = if kind_of(c).is_empty() { p.syntax("a value") } else { p.located(&format!("Found invalid map entry instead of array tuple: {}", kind_of(c))) };
                return Err(e);
            }
            let (mut k, mut v) = (Value::Null, Value::Null);
            let mut n = 0;
            p.elements(|p| {
                match n {
                    0 => k = p.value(ks.as_ref())?,
                    1 => v = p.value(vs.as_ref())?,
                    _ => p.skip()?,
                }
                n += 1;
                Ok(())
            })?;
            if n != 2 {
                return Err(p.located(&format!("Found invalid map entry, expected length 2 but found :{}", n)));
            }
            p.path.pop();
            out.push((k, v));
            Ok(())
        })?;
        Ok(Value::Entries(out))
    }

    fn struct_value(&mut self, s: &Rc<Schema>) -> Result<Value, String> {
        let n = s.fields.len();
        let mut values = vec![Value::Null; n];
        let mut seen = vec![false; n];
        self.members(|p, k| {
            let i = match s.field_index_bytes(k) {
                Some(i) => i,
                None => {
                    p.rewritten = true; // JsonConverter ignores fields the schema does not have
                    p.value(None)?;
                    return Ok(());
                }
            };
            if seen[i] {
                p.rewritten = true;
            }
            p.path.push(PathElem::Name(s.fields[i].name.clone()));
            let v = p.value(Some(&s.fields[i].schema));
            p.path.pop();
            values[i] = v?;
            seen[i] = true;
            Ok(())
        })?;
        for (i, f) in s.fields.iter().enumerate() {
            if seen[i] {
                continue;
            }
            self.path.push(PathElem::Name(f.name.clone()));
            let v = self.null_for(&f.schema);
            self.path.pop();
            values[i] = v?;
        }
        Ok(Value::Struct(Struct { schema: s.clone(), values }))
    }

    fn null_for(&mut self, s: &Schema) -> Result<Value, String> {
        if let Some(d) = &s.default {
            if self.opts.keep_nulls {
                return Ok(Value::Null);
            }
            self.rewritten = true;
            return Ok(d.clone());
        }
        if s.optional {
            return Ok(Value::Null);
        }
        if self.opts.writing {
            return Err(self.located("Conversion error: null value for field that is required and has no default value"));
        }
        Err(self.located(&format!("Invalid null value for required {} field", s.typ.java_name())))
    }

    fn schemaless(&mut self, c: u8) -> Result<Value, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err("invalid JSON payload: nested too deeply".to_string());
        }
        let r = self.schemaless_inner(c);
        self.depth -= 1;
        r
    }

    fn schemaless_inner(&mut self, c: u8) -> Result<Value, String> {
        match c {
            b'{' => {
                let mut out = BTreeMap::new();
                self.members(|p, k| {
                    let v = p.value(None)?;
                    out.insert(String::from_utf8_lossy(k).into_owned(), v);
                    Ok(())
                })?;
                Ok(Value::Map(out))
            }
            b'[' => {
                let mut out = Vec::new();
                self.elements(|p| {
                    out.push(p.value(None)?);
                    Ok(())
                })?;
                Ok(Value::Array(out))
            }
            b'"' => Ok(Value::String(self.str()?)),
            _ if self.lit(b"true") => Ok(Value::Bool(true)),
            _ if self.lit(b"false") => Ok(Value::Bool(false)),
            _ => {
                let (tok, is_int) = self.number()?;
                if is_int {
                    if let Ok(n) = tok.parse::<i64>() {
                        return Ok(Value::Int64(n));
                    }
                }
                tok.parse::<f64>().map(Value::Float64).map_err(|e| format!("invalid JSON payload: number {}: {}", tok, e))
            }
        }
    }

    fn number(&mut self) -> Result<(String, bool), String> {
        let start = self.i;
        if self.peek() == b'-' {
            self.i += 1;
        }
        let digits = |p: &mut Self| {
            let s = p.i;
            while p.i < p.b.len() && p.b[p.i].is_ascii_digit() {
                p.i += 1;
            }
            p.i - s
        };
        if digits(self) == 0 {
            self.i = start;
            return Err(self.syntax("a number"));
        }
        let mut is_int = true;
        if self.peek() == b'.' {
            self.i += 1;
            is_int = false;
            if digits(self) == 0 {
                return Err(self.syntax("a digit"));
            }
        }
        if matches!(self.peek(), b'e' | b'E') {
            self.i += 1;
            is_int = false;
            if matches!(self.peek(), b'+' | b'-') {
                self.i += 1;
            }
            if digits(self) == 0 {
                return Err(self.syntax("a digit"));
            }
        }
        Ok((String::from_utf8_lossy(&self.b[start..self.i]).into_owned(), is_int))
    }

    /// A JSON string's bytes: a slice of the input when it has no escapes.
    fn raw_str(&mut self) -> Result<Cow<'a, [u8]>, String> {
        let start = self.i + 1;
        let mut j = start;
        while j < self.b.len() {
            let c = self.b[j];
            if c == b'"' {
                self.i = j + 1;
                return Ok(Cow::Borrowed(&self.b[start..j]));
            }
            if c == b'\\' || c < 0x20 {
                break;
            }
            j += 1;
        }
        Ok(Cow::Owned(self.str()?.into_bytes()))
    }

    fn str(&mut self) -> Result<String, String> {
        self.i += 1;
        let mut buf: Vec<u8> = Vec::new();
        loop {
            let start = self.i;
            while self.i < self.b.len() {
                let c = self.b[self.i];
                if c == b'"' || c == b'\\' || c < 0x20 {
                    break;
                }
                self.i += 1;
            }
            buf.extend_from_slice(&self.b[start..self.i]);
            match self.b.get(self.i) {
                None => return Err(self.syntax("a closing '\"'")),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(match String::from_utf8(buf) {
                        Ok(s) => s,
                        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
                    });
                }
                Some(&c) if c < 0x20 => return Err(self.syntax("no control character in a string")),
                _ => {}
            }
            self.i += 1; // the backslash
            let e = match self.b.get(self.i) {
                None => return Err(self.syntax("a closing '\"'")),
                Some(&e) => e,
            };
            self.i += 1;
            match e {
                b'"' | b'\\' | b'/' => buf.push(e),
                b'b' => buf.push(8),
                b'f' => buf.push(12),
                b'n' => buf.push(b'\n'),
                b'r' => buf.push(b'\r'),
                b't' => buf.push(b'\t'),
                b'u' => {
                    let mut r = self.hex4().ok_or_else(|| self.syntax("4 hex digits"))?;
                    if (0xd800..0xe000).contains(&r) {
                        if self.b[self.i..].starts_with(b"\\u") {
                            self.i += 2;
                            let r2 = self.hex4().ok_or_else(|| self.syntax("4 hex digits"))?;
                            r = if (0xd800..0xdc00).contains(&r) && (0xdc00..0xe000).contains(&r2) { 0x10000 + ((r - 0xd800) << 10) + (r2 - 0xdc00) } else { 0xfffd };
                        } else {
                            r = 0xfffd;
                        }
                    }
                    let ch = char::from_u32(r).unwrap_or('\u{fffd}');
                    let mut tmp = [0u8; 4];
                    buf.extend_from_slice(ch.encode_utf8(&mut tmp).as_bytes());
                }
                _ => {
                    self.i -= 1;
                    return Err(self.syntax("an escape character"));
                }
            }
        }
    }

    fn hex4(&mut self) -> Option<u32> {
        let h = self.b.get(self.i..self.i + 4)?;
        let v = u32::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()?;
        self.i += 4;
        Some(v)
    }

    fn elements(&mut self, mut elem: impl FnMut(&mut Self) -> Result<(), String>) -> Result<(), String> {
        self.i += 1;
        self.ws();
        if self.peek() == b']' {
            self.i += 1;
            return Ok(());
        }
        loop {
            elem(self)?;
            self.ws();
            match self.peek() {
                b',' => self.i += 1,
                b']' => {
                    self.i += 1;
                    return Ok(());
                }
                _ => return Err(self.syntax("',' or ']'")),
            }
        }
    }

    fn members(&mut self, mut member: impl FnMut(&mut Self, &[u8]) -> Result<(), String>) -> Result<(), String> {
        self.i += 1;
        self.ws();
        if self.peek() == b'}' {
            self.i += 1;
            return Ok(());
        }
        loop {
            self.ws();
            if self.peek() != b'"' {
                return Err(self.syntax("an object key"));
            }
            let k = self.raw_str()?;
            self.ws();
            if self.peek() != b':' {
                return Err(self.syntax("':'"));
            }
            self.i += 1;
            member(self, &k)?;
            self.ws();
            match self.peek() {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return Ok(());
                }
                _ => return Err(self.syntax("',' or '}'")),
            }
        }
    }

    fn skip(&mut self) -> Result<(), String> {
        self.ws();
        match self.peek() {
            b'{' => self.members(|p, _| p.skip()),
            b'[' => self.elements(|p| p.skip()),
            b'"' => {
                self.i += 1;
                while self.i < self.b.len() {
                    match self.b[self.i] {
                        b'"' => {
                            self.i += 1;
                            return Ok(());
                        }
                        b'\\' => self.i += 2,
                        c if c < 0x20 => return Err(self.syntax("no control character in a string")),
                        _ => self.i += 1,
                    }
                }
                Err(self.syntax("a closing '\"'"))
            }
            _ if self.lit(b"true") || self.lit(b"false") || self.lit(b"null") => Ok(()),
            _ => self.number().map(|_| ()),
        }
    }
}

fn go_quote_byte(c: u8) -> String {
    match c {
        b'\'' => "'\\''".to_string(),
        0x20..=0x7e => format!("'{}'", c as char),
        _ => format!("'\\x{:02x}'", c),
    }
}

/// Calls `member` for each member of the JSON object `payload`, in order, with the key and the
/// offsets of its value, without decoding the values: a transformation can rewrite a few fields of a
/// large struct as text.
pub fn scan_object(payload: &[u8], mut member: impl FnMut(&[u8], usize, usize) -> Result<(), String>) -> Result<(), String> {
    let o = PayloadOptions::default();
    let mut p = Parser { b: payload, i: 0, opts: &o, path: Vec::new(), rewritten: false, depth: 0 };
    p.ws();
    if p.peek() != b'{' {
        return Err(p.syntax("an object"));
    }
    p.members(|p, k| {
        p.ws();
        let start = p.i;
        p.skip()?;
        member(k, start, p.i)
    })?;
    p.ws();
    if p.i != p.b.len() {
        return Err(format!("invalid JSON payload: unexpected data after the JSON value at byte {}", p.i));
    }
    Ok(())
}

// Civil time in UTC, for the logical types.

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// The date of a day since 1970-01-01: (year, month 1-12, day 1-31).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// The parts of a time in ms since the epoch, UTC.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Civil {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub milli: u32,
    /// 0 = Sunday.
    pub weekday: u32,
}

pub fn civil(ms: i64) -> Civil {
    let days = ms.div_euclid(DAY_MS);
    let rem = ms.rem_euclid(DAY_MS);
    let (year, month, day) = civil_from_days(days);
    Civil {
        year,
        month,
        day,
        hour: (rem / 3_600_000) as u32,
        minute: (rem / 60_000 % 60) as u32,
        second: (rem / 1000 % 60) as u32,
        milli: (rem % 1000) as u32,
        weekday: (days + 4).rem_euclid(7) as u32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_round_trip() {
        let raw = br#"{"type":"struct","fields":[{"type":"int64","optional":true,"field":"magic"},{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"},"field":"d"}],"optional":false,"name":"name","version":1,"doc":"doc"}"#;
        let s = parse_schema(raw).unwrap().unwrap();
        assert_eq!(&*s.json().unwrap(), &raw[..]);
        assert!(Rc::ptr_eq(&s, &parse_schema(raw).unwrap().unwrap()));
        let (v, rewritten) = read_payload(&s, br#"{"magic":42,"d":"AQ=="}"#, &PayloadOptions::default()).unwrap();
        assert!(!rewritten);
        let mut out = Vec::new();
        append_json(&mut out, Some(&s), &v).unwrap();
        assert_eq!(out, br#"{"magic":42,"d":"AQ=="}"#);
        match &v {
            Value::Struct(st) => {
                assert!(Rc::ptr_eq(&st.schema, &s));
                assert_eq!(st.values[1], Value::Decimal(Decimal { unscaled: 1, scale: 2 }));
            }
            _ => panic!("{:?}", v),
        }
        assert_eq!(read_payload(&s, br#"{"magic":"x","d":"AQ=="}"#, &PayloadOptions::default()).unwrap_err(), r#"Invalid value for schema type INT64 at magic: found STRING "x""#);
    }

    #[test]
    fn floats_and_strings() {
        let f = |x: f64| {
            let mut o = Vec::new();
            append_f64(&mut o, x);
            String::from_utf8(o).unwrap()
        };
        assert_eq!(f(1.0), "1.0");
        assert_eq!(f(32.5), "32.5");
        assert_eq!(f(1e21), "1e+21");
        assert_eq!(f(123456789.0), "1.23456789e+08");
        assert_eq!(f(0.0001), "0.0001");
        assert_eq!(f(0.00001), "1e-05");
        let mut o = Vec::new();
        append_json_string(&mut o, "a\"\n\u{1}é<".as_bytes());
        assert_eq!(String::from_utf8(o).unwrap(), "\"a\\\"\\n\\u0001é<\"");
        let mut o = Vec::new();
        base64_encode(&mut o, b"\x01\x02\x03\x04");
        assert_eq!(o, b"AQIDBA==");
        assert_eq!(base64_decode(b"AQIDBA==").unwrap(), b"\x01\x02\x03\x04");
        assert!(base64_decode(b"AQ=").is_err());
    }

    #[test]
    fn decimals_and_dates() {
        let d = Decimal { unscaled: -12345, scale: 2 };
        assert_eq!(Decimal::from_bytes(&d.to_bytes(2).unwrap(), 2).unwrap(), d);
        assert_eq!(d.to_string_places(2), "-123.45");
        assert_eq!(Decimal { unscaled: 128, scale: 0 }.to_bytes(0).unwrap(), vec![0, 128]);
        assert_eq!(Decimal::parse("1.50").unwrap().min_scale(), 1);
        assert_eq!(civil(1483425001864), Civil { year: 2017, month: 1, day: 3, hour: 6, minute: 30, second: 1, milli: 864, weekday: 2 });
        assert_eq!(days_from_civil(2017, 1, 3), 17169);
        assert_eq!(civil(-1).year, 1969);
    }
}
