// Package transforms holds the transforms module, Kafka Connect's standard single message
// transforms and predicates (org.apache.kafka.connect.transforms), written in Rust on the Rust SDK
// (sdk/rust): the crate is Cargo.toml and src/. The module carries Kafka's converters too (their
// sources are plugins/converters, included by src/lib.rs), so that a task's converters share its
// chain's instance and a source task's chain and converters run in one TRANSFORM_CONVERT call
// (sdk/ABI.md §5.9; convert_test.go checks it against TRANSFORM_CHAIN then FROM_CONNECT). This Go package has its tests only, which run the
// built module in the worker's plugin host, through the WebAssembly boundary, as the worker does,
// and the crate's own unit tests natively:
//
//	Cast, ExtractField, Flatten, HeaderFrom, HoistField, InsertField, MaskField, ReplaceField,
//	SetSchemaMetadata, TimestampConverter ($Key and $Value each); DropHeaders, Filter, InsertHeader,
//	RegexRouter, TimestampRouter, ValueToKey; predicates HasHeaderKey, RecordIsTombstone and
//	TopicNameMatches; and Debezium's io.debezium.transforms.ExtractNewRecordState (src/debezium.rs),
//	which unwraps change events to their row state.
//
// Each is registered under Kafka's class name (org.apache.kafka.connect.transforms.InsertField$Value)
// with its short name (InsertField$Value) and Kafka's config keys, and behaves as Kafka's on
// schemaless values (maps) and on values with a schema (structs, schemas updated as Kafka updates
// them). Values are read and written with the SDK's Connect data model (sdk/rust/src/connect.rs).
//
// Performance: a transformation that does not touch the value never decodes it; HoistField of a
// string writes the struct as text; InsertField and MaskField rewrite struct payloads as text
// where the result is the same (unit tests in src/fields.rs compare both paths); derived schemas
// and their JSON are cached per schema; RegexRouter and TopicNameMatches remember their result
// per topic. BenchmarkChain in wasm_test.go measures a chain through the real host.
//
// Differences from Kafka: Java's SimpleDateFormat patterns are supported for the common letters
// (y M d H h k K m s S E u a z Z X and quoted text); Java regular expressions run on a small
// backtracking engine (src/regex.rs) without lookaround, nested classes or \p{...}; Decimal values
// hold at most 38 digits; InsertHeader parses value.literal as booleans, numbers, null and strings
// (not Kafka's lists and maps).
//
// Build (Debian: rustc libstd-rust-dev-wasm32 lld-14), as make and wasmhost/pluginbuild do:
//
//	rustc --edition 2021 --target wasm32-wasi -C opt-level=3 -C lto=fat -C codegen-units=1 -C strip=symbols \
//	    -C link-arg=-zstack-size=262144 -C target-feature=+bulk-memory,+simd128 \
//	    --crate-type rlib --crate-name wasmconnect -o build/rust/libwasmconnect.rlib sdk/rust/src/lib.rs
//	rustc <the same flags> --crate-type cdylib --crate-name transforms \
//	    --extern wasmconnect=build/rust/libwasmconnect.rlib -o build/plugins/transforms.wasm plugins/transforms/src/lib.rs
//
// or, with Cargo, `cargo build --release --target wasm32-wasi` in this directory.
package transforms
