// Package datagen holds the datagen plugin module, a data generator source like Confluent's
// kafka-connect-datagen (io.confluent.kafka.connect.datagen.DatagenConnector), written in Rust on
// the Rust SDK (sdk/rust): the crate is Cargo.toml and src/ (src/lib.rs says what it does). This Go
// package has its tests only, which run the built module (build/plugins/datagen.wasm) in the
// worker's plugin host, through the WebAssembly boundary, as the worker does.
//
// Build it as plugins/file is built (make does): the same rustc flags, with --crate-name datagen
// and plugins/datagen/src/lib.rs.
package datagen
