//! The quickstarts of kafka-connect-datagen this plugin has (orders, users, pageviews): their
//! Connect schemas, with the field names and types of the Avro schemas kafka-connect-datagen ships,
//! and how each field's values are drawn (the Avro schemas' arg.properties, written out as code).

use std::fmt::Write as _;

use crate::rng::Rng;

/// How the values of a field are drawn.
pub enum Gen {
    /// A uniform integer in [min, max), as arg.properties.range does.
    Range(i64, i64),
    /// start + step * iteration, as arg.properties.iteration does.
    Iteration { start: i64, step: i64 },
    /// A uniform float in [min, max).
    Float(f64, f64),
    /// The text of a simple regular expression: a literal prefix, then runs of digits, each
    /// `(first digit, last digit, min repeats, max repeats)`: "Item_[1-9][0-9]{0,2}" is
    /// `Text("Item_", &[(1, 9, 1, 1), (0, 9, 0, 2)])`.
    Text(&'static str, &'static [(u8, u8, u8, u8)]),
    /// One of the texts, as arg.properties.options does.
    Options(&'static [&'static str]),
    /// A nested record.
    Struct(&'static str, &'static [Field]),
}

pub struct Field {
    pub name: &'static str,
    /// The Connect type, as JsonConverter names it in a schema (int32, int64, double, string,
    /// struct).
    pub typ: &'static str,
    pub gen: Gen,
}

/// A quickstart: the value schema and the field that is the record key.
pub struct Quickstart {
    pub name: &'static str,
    pub schema_name: &'static str,
    pub fields: &'static [Field],
    pub key_field: &'static str,
}

const fn field(name: &'static str, typ: &'static str, gen: Gen) -> Field {
    Field { name, typ, gen }
}

// Times of the quickstarts' ranges: February 2017 to February 2018, in epoch milliseconds.
const TIME_MIN: i64 = 1_487_715_775_521;
const TIME_MAX: i64 = 1_519_273_364_600;

pub const ORDERS: Quickstart = Quickstart {
    name: "orders",
    schema_name: "ksql.orders",
    key_field: "orderid",
    fields: &[
        field("ordertime", "int64", Gen::Range(TIME_MIN, TIME_MAX)),
        field("orderid", "int32", Gen::Iteration { start: 0, step: 1 }),
        field("itemid", "string", Gen::Text("Item_", &[(1, 9, 1, 1), (0, 9, 0, 2)])),
        field("orderunits", "double", Gen::Float(0.1, 10.0)),
        field(
            "address",
            "struct",
            Gen::Struct(
                "ksql.address",
                &[
                    field("city", "string", Gen::Text("City_", &[(1, 9, 0, 2)])),
                    field("state", "string", Gen::Text("State_", &[(1, 9, 0, 2)])),
                    field("zipcode", "int64", Gen::Range(10_000, 99_999)),
                ],
            ),
        ),
    ],
};

pub const USERS: Quickstart = Quickstart {
    name: "users",
    schema_name: "ksql.users",
    key_field: "userid",
    fields: &[
        field("registertime", "int64", Gen::Range(TIME_MIN, TIME_MAX)),
        field("userid", "string", Gen::Text("User_", &[(1, 9, 1, 1)])),
        field("regionid", "string", Gen::Text("Region_", &[(1, 9, 1, 1)])),
        field("gender", "string", Gen::Options(&["MALE", "FEMALE", "OTHER"])),
    ],
};

pub const PAGEVIEWS: Quickstart = Quickstart {
    name: "pageviews",
    schema_name: "ksql.pageviews",
    key_field: "viewtime",
    fields: &[
        field("viewtime", "int64", Gen::Iteration { start: 1, step: 10 }),
        field("userid", "string", Gen::Text("User_", &[(1, 9, 1, 1)])),
        field("pageid", "string", Gen::Text("Page_", &[(1, 9, 1, 1), (0, 9, 1, 1)])),
    ],
};

pub const ALL: [&Quickstart; 3] = [&ORDERS, &USERS, &PAGEVIEWS];

/// The quickstart called `name`, in any case, as kafka-connect-datagen looks it up.
pub fn find(name: &str) -> Option<&'static Quickstart> {
    ALL.iter().copied().find(|q| q.name.eq_ignore_ascii_case(name.trim()))
}

/// The names of ALL, for messages: "orders, users, pageviews".
pub fn names() -> String {
    ALL.iter().map(|q| q.name).collect::<Vec<_>>().join(", ")
}

impl Quickstart {
    /// The top-level field `name`, if it is one of a primitive type (a possible key).
    pub fn primitive_field(&self, name: &str) -> Option<&'static Field> {
        self.fields.iter().find(|f| f.name == name && f.typ != "struct")
    }

    /// The value schema as JsonConverter writes it.
    pub fn value_schema(&self) -> String {
        let mut s = String::new();
        write_struct_schema(&mut s, self.fields, self.schema_name, None);
        s
    }

    /// Appends the JSON of record `iteration`, drawn with `rng`, to `out`, and returns where the
    /// value of top-level field `key` lies in `out` (empty when `key` is not one).
    pub fn write_value(&self, out: &mut String, rng: &mut Rng, iteration: i64, key: &str) -> (usize, usize) {
        let mut key_at = (0, 0);
        out.push('{');
        for (i, f) in self.fields.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            write_name(out, f.name);
            let start = out.len();
            write_field(out, &f.gen, rng, iteration);
            if f.name == key {
                key_at = (start, out.len());
            }
        }
        out.push('}');
        key_at
    }
}

/// The schema of a primitive field, as a record key's schema.
pub fn primitive_schema(typ: &str) -> String {
    format!("{{\"type\":\"{}\",\"optional\":false}}", typ)
}

fn write_struct_schema(s: &mut String, fields: &[Field], name: &str, field_name: Option<&str>) {
    s.push_str("{\"type\":\"struct\",\"fields\":[");
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        match &f.gen {
            Gen::Struct(name, inner) => write_struct_schema(s, inner, name, Some(f.name)),
            _ => {
                let _ = write!(s, "{{\"type\":\"{}\",\"optional\":false,\"field\":\"{}\"}}", f.typ, f.name);
            }
        }
    }
    let _ = write!(s, "],\"optional\":false,\"name\":\"{}\"", name);
    if let Some(f) = field_name {
        let _ = write!(s, ",\"field\":\"{}\"", f);
    }
    s.push('}');
}

fn write_name(out: &mut String, name: &str) {
    out.push('"');
    out.push_str(name);
    out.push_str("\":");
}

fn write_field(out: &mut String, gen: &Gen, rng: &mut Rng, iteration: i64) {
    match gen {
        Gen::Range(lo, hi) => {
            let _ = write!(out, "{}", rng.range(*lo, *hi));
        }
        Gen::Iteration { start, step } => {
            let _ = write!(out, "{}", start.wrapping_add(step.wrapping_mul(iteration)));
        }
        // {:?} keeps a ".0" on whole numbers, so that the value reads as a double.
        Gen::Float(lo, hi) => {
            let _ = write!(out, "{:?}", rng.float(*lo, *hi));
        }
        Gen::Text(prefix, runs) => {
            out.push('"');
            out.push_str(prefix);
            for &(first, last, min, max) in runs.iter() {
                let n = rng.range(min as i64, max as i64 + 1);
                for _ in 0..n {
                    out.push((b'0' + rng.range(first as i64, last as i64 + 1) as u8) as char);
                }
            }
            out.push('"');
        }
        Gen::Options(opts) => {
            out.push('"');
            out.push_str(opts[rng.range(0, opts.len() as i64) as usize]);
            out.push('"');
        }
        Gen::Struct(_, fields) => {
            out.push('{');
            for (i, f) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_name(out, f.name);
                write_field(out, &f.gen, rng, iteration);
            }
            out.push('}');
        }
    }
}
