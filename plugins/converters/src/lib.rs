//! Kafka Connect's standard converters on the wasmconnect Rust SDK (sdk/rust). They are part of
//! the transforms module (plugins/transforms includes this crate's sources and calls `register`);
//! this crate root builds their native unit tests. Items are named through `super::`, not
//! `crate::`, so that they resolve both here and where the transforms crate includes them.
//!
//! - JsonConverter (org.apache.kafka.connect.json.JsonConverter): schemas.enable (default true)
//!   writes {"schema":...,"payload":...} envelopes and requires exactly those two fields on read;
//!   schemas.cache.size, decimal.format (BASE64|NUMERIC) and replace.null.with.default as in Kafka.
//!   A string value is written with the schema {"type":"string","optional":false} (what Kafka's
//!   FileStreamSource + JsonConverter produce), bytes with {"type":"bytes","optional":true} and
//!   base64, a JSON value with its own schema or "schema":null. On read the payload is checked
//!   against the schema (primitive types, struct fields, arrays, maps, the logical types Decimal,
//!   Date, Time and Timestamp) and normalized as Connect would: defaults for nulls, unknown struct
//!   fields dropped, decimals as base64.
//! - StringConverter (org.apache.kafka.connect.storage.StringConverter): UTF-8 text; a JSON string
//!   payload is written unquoted, other JSON as JSON text.
//! - ByteArrayConverter (org.apache.kafka.connect.converters.ByteArrayConverter): bytes pass
//!   through; other values are an error, as in Kafka.
//!
//! Null values are null bytes and back. Each converter writes its results straight into the
//! call's result batch: no allocation per record.

mod base64;
mod bytearray;
mod conform;
mod decimal;
mod json_converter;
mod scan;
mod schema;
mod string_converter;
mod verbatim;

use wasmconnect::{ConfigDef, Importance, Module};

pub const VERSION: &str = "1.0.0";

/// Adds the converters to a module: the transforms module's (plugins/transforms), which includes
/// this crate's sources, so that a task's converters and transform chain are objects of one
/// instance and its records leave the guest converted (TRANSFORM_CONVERT, sdk/ABI.md §5.9).
pub fn register(m: &mut Module) {
    m.converter(json_converter::info(), || Box::new(json_converter::JsonConverter::default()));
    m.converter(string_converter::info(), || Box::new(string_converter::StringConverter));
    m.converter(bytearray::info(), || Box::new(bytearray::ByteArrayConverter));
}

/// converter.type, which the worker sets: how the converter is used.
fn converter_type_def() -> ConfigDef {
    ConfigDef::new("converter.type")
        .importance(Importance::Low)
        .validator(|v| match v {
            "key" | "value" | "header" => Ok(()),
            _ => Err("String must be one of: key, value, header".to_string()),
        })
        .doc("How this converter will be used.")
}

/// `d` with Kafka's width MEDIUM and a display name, as the converters' settings have.
fn with_look(d: ConfigDef, display_name: &'static str) -> ConfigDef {
    ConfigDef { width: "MEDIUM", display_name: Some(display_name), ..d }
}
