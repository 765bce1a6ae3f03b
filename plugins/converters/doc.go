// Package converters holds Kafka Connect's standard converters, written in Rust on the Rust SDK
// (sdk/rust): the crate is Cargo.toml and src/. They are built into the transforms module
// (plugins/transforms includes src/lib.rs), so that a task's converters and transform chain are
// objects of one instance and a source task's records come out of one TRANSFORM_CONVERT call
// converted (sdk/ABI.md §5.9). This Go package has tests only, which run the built module
// (build/plugins/transforms.wasm) in the worker's plugin host, through the WebAssembly boundary, as
// the worker does, and the crate's unit tests natively:
//
//   - JsonConverter (org.apache.kafka.connect.json.JsonConverter): schemas.enable (default true)
//     writes {"schema":...,"payload":...} envelopes and requires exactly those two fields on read;
//     schemas.cache.size, decimal.format (BASE64|NUMERIC) and replace.null.with.default as in Kafka.
//     A string value is written with the schema {"type":"string","optional":false} (what Kafka's
//     FileStreamSource + JsonConverter produce), bytes with {"type":"bytes","optional":true} and
//     base64, a JSON value with its own schema or "schema":null. On read the payload is checked
//     against the schema (primitive types, struct fields, arrays, maps, the logical types Decimal,
//     Date, Time and Timestamp) and normalized as Connect would: defaults for nulls, unknown struct
//     fields dropped, decimals as base64. Payloads are read and written in one pass, without
//     building the value, straight into the call's result.
//   - StringConverter (org.apache.kafka.connect.storage.StringConverter): UTF-8 text; a JSON string
//     payload is written unquoted, other JSON as JSON text.
//   - ByteArrayConverter (org.apache.kafka.connect.converters.ByteArrayConverter): bytes pass
//     through; other values are an error, as in Kafka.
//
// Null values are null bytes and back. Build the transforms module as plugins/transforms/doc.go
// says; the crate root here builds the unit tests (rustc --test src/lib.rs).
package converters
