// Package file holds the file plugin module, Kafka's FileStream connectors, written in Rust on the
// Rust SDK (sdk/rust): the crate is Cargo.toml and src/. This Go package has its tests only, which
// run the built module (build/plugins/file.wasm) in the worker's plugin host, through the
// WebAssembly boundary, as the worker does:
//
//   - FileStreamSource (org.apache.kafka.connect.file.FileStreamSourceConnector) reads the lines of
//     file into topic, batch.size lines per poll at most, as STRING values with null keys. Its source
//     partition is {"filename": file} and its offset {"position": byte position after the line}, as
//     in Kafka, so a restarted task resumes where the stored offset says. It waits for a file that does
//     not exist yet and for the newline of a partial last line, and never blocks in Poll. Unlike Kafka,
//     file is required: a sandboxed plugin has no standard input.
//   - FileStreamSink (org.apache.kafka.connect.file.FileStreamSinkConnector) appends the text form of
//     each value plus a newline to file, writing each put at once, and syncs it on FLUSH.
//
// Both connectors run one task, as in Kafka. The file must lie in a directory granted by the worker
// setting plugin.fs.allow. Build (Debian: rustc libstd-rust-dev-wasm32 lld-14), as make and
// wasmhost/pluginbuild do:
//
//	rustc --edition 2021 --target wasm32-wasi -C opt-level=3 -C lto=fat -C codegen-units=1 -C strip=symbols \
//	    -C link-arg=-zstack-size=262144 -C target-feature=+bulk-memory,+simd128 \
//	    --crate-type rlib --crate-name wasmconnect -o build/rust/libwasmconnect.rlib sdk/rust/src/lib.rs
//	rustc <the same flags> --crate-type cdylib --crate-name file \
//	    --extern wasmconnect=build/rust/libwasmconnect.rlib -o build/plugins/file.wasm plugins/file/src/lib.rs
//
// or, with Cargo, `cargo build --release --target wasm32-wasi` in this directory.
package file
