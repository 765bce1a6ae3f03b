//! The transforms module: Kafka Connect's standard single message transforms and predicates
//! (org.apache.kafka.connect.transforms) on the wasmconnect Rust SDK (sdk/rust), one WebAssembly
//! module so that a task's whole chain shares one instance, with Kafka's converters (included from
//! plugins/converters) so that a source task's chain and converters run in one call:
//!
//!   Cast, ExtractField, Flatten, HeaderFrom, HoistField, InsertField, MaskField, ReplaceField,
//!   SetSchemaMetadata, TimestampConverter ($Key and $Value each); DropHeaders, Filter,
//!   InsertHeader, RegexRouter, TimestampRouter, ValueToKey; predicates HasHeaderKey,
//!   RecordIsTombstone and TopicNameMatches; and Debezium's ExtractNewRecordState
//!   (io.debezium.transforms.ExtractNewRecordState), which unwraps change events.
//!
//! Each is registered under Kafka's class name (org.apache.kafka.connect.transforms.InsertField$Value)
//! with its short name (InsertField$Value) and Kafka's config keys, and behaves as Kafka's on
//! schemaless values (maps) and on values with a schema (structs, schemas updated as Kafka updates
//! them). Values are read and written with the SDK's Connect data model (wasmconnect::connect).
//!
//! Per-record work is kept to what a transformation needs: a transformation that does not touch
//! the value never decodes it (routers, header transforms), HoistField of a string writes the
//! struct as text, InsertField and MaskField rewrite struct payloads as text where the result is
//! the same, derived schemas and their JSON are cached per schema, and RegexRouter and
//! TopicNameMatches remember their result per topic.

mod common;
// Kafka's converters, in this module so that a task's converters share the chain's instance: a
// source task's records then come out of one TRANSFORM_CONVERT call as the bytes the producer
// sends (sdk/ABI.md §5.9).
#[path = "../../converters/src/lib.rs"]
mod converters;
mod datefmt;
mod debezium;
mod fields;
mod headers;
mod predicates;
mod regex;
mod routers;
mod schema;

use wasmconnect::config::ConfigDef;
use wasmconnect::{Info, Module};

pub const VERSION: &str = "1.0.0";

fn info(name: &'static str, class: &'static str, config: Vec<ConfigDef>) -> Info {
    Info { name, class, aliases: &[], version: VERSION, config }
}

/// Registers the $Key and $Value variants of a transformation.
macro_rules! kv {
    ($m:expr, $name:literal, $ty:path, $defs:expr) => {
        $m.transformation(
            info(concat!($name, "$Key"), concat!("org.apache.kafka.connect.transforms.", $name, "$Key"), $defs),
            || Box::new(<$ty>::new(true)),
        );
        $m.transformation(
            info(concat!($name, "$Value"), concat!("org.apache.kafka.connect.transforms.", $name, "$Value"), $defs),
            || Box::new(<$ty>::new(false)),
        );
    };
}

/// Adds every plugin of the module (public for native benchmarks and tests of the crate).
pub fn register(m: &mut Module) {
    converters::register(m);
    kv!(m, "InsertField", fields::InsertField, fields::insert_field_defs());
    kv!(m, "ReplaceField", fields::ReplaceField, fields::replace_field_defs());
    kv!(m, "MaskField", fields::MaskField, fields::mask_field_defs());
    m.transformation(info("ValueToKey", "org.apache.kafka.connect.transforms.ValueToKey", fields::value_to_key_defs()), || Box::new(fields::ValueToKey::new()));
    kv!(m, "ExtractField", fields::ExtractField, fields::extract_field_defs());
    kv!(m, "HoistField", fields::HoistField, fields::hoist_field_defs());

    kv!(m, "Cast", schema::Cast, schema::cast_defs());
    kv!(m, "TimestampConverter", schema::TimestampConverter, schema::timestamp_converter_defs());
    kv!(m, "Flatten", schema::Flatten, schema::flatten_defs());
    kv!(m, "SetSchemaMetadata", schema::SetSchemaMetadata, schema::set_schema_metadata_defs());

    m.transformation(info("RegexRouter", "org.apache.kafka.connect.transforms.RegexRouter", routers::regex_router_defs()), || Box::new(routers::RegexRouter::new()));
    m.transformation(info("TimestampRouter", "org.apache.kafka.connect.transforms.TimestampRouter", routers::timestamp_router_defs()), || Box::new(routers::TimestampRouter::new()));
    m.transformation(info("Filter", "org.apache.kafka.connect.transforms.Filter", Vec::new()), || Box::new(routers::Filter));

    m.transformation(info("InsertHeader", "org.apache.kafka.connect.transforms.InsertHeader", headers::insert_header_defs()), || Box::new(headers::InsertHeader::new()));
    m.transformation(info("DropHeaders", "org.apache.kafka.connect.transforms.DropHeaders", headers::drop_headers_defs()), || Box::new(headers::DropHeaders::new()));
    kv!(m, "HeaderFrom", headers::HeaderFrom, headers::header_from_defs());

    m.transformation(info("ExtractNewRecordState", "io.debezium.transforms.ExtractNewRecordState", debezium::extract_new_record_state_defs()), || {
        Box::new(debezium::ExtractNewRecordState::new())
    });

    m.predicate(info("TopicNameMatches", "org.apache.kafka.connect.transforms.predicates.TopicNameMatches", predicates::topic_name_matches_defs()), || {
        Box::new(predicates::TopicNameMatches::new())
    });
    m.predicate(info("HasHeaderKey", "org.apache.kafka.connect.transforms.predicates.HasHeaderKey", predicates::has_header_key_defs()), || Box::new(predicates::HasHeaderKey::new()));
    m.predicate(info("RecordIsTombstone", "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone", Vec::new()), || Box::new(predicates::RecordIsTombstone));
}

// The exports exist in the WebAssembly module only: the crate's unit tests run natively.
#[cfg(target_arch = "wasm32")]
wasmconnect::export_module!(register);

#[cfg(test)]
mod tests {
    use super::register;
    use wasmconnect::abi::invoke;
    use wasmconnect::dispatch::{OP_OPEN, OP_VALIDATE};

    /// Every plugin is registered once (a name registered twice panics) and opens with a config.
    #[test]
    fn registers_and_validates() {
        let v = invoke(register, OP_VALIDATE, 0, br#"{"plugin":"Cast$Value","config":{"spec":"a:decimal"}}"#).unwrap();
        assert_eq!(String::from_utf8(v).unwrap(), r#"{"errors":{"spec":["Invalid value a:decimal for configuration spec: Invalid type found in casting spec: decimal"]}}"#);
        let h = invoke(register, OP_OPEN, 0, br#"{"plugin":"org.apache.kafka.connect.transforms.predicates.RecordIsTombstone","role":"predicate","config":{}}"#).unwrap();
        assert!(h.starts_with(br#"{"handle":"#));
    }
}
