// Package plugins holds example plugins in the lean guest languages, one per SDK and one without
// any, and the test that builds each and runs it through the worker's plugin host (wasmhost; the
// worker and broker processes run them in cmd/wasmconnect's TestExamplePluginsEndToEnd):
//
//   - csv (C, sdk/c): CsvConverter, a converter between CSV lines and Connect structs;
//   - mask (AssemblyScript, sdk/assemblyscript): MaskField, a transformation that masks string
//     fields of struct and schemaless values;
//   - haskey (WebAssembly text, no SDK): HasKey, a predicate that shows the bare ABI;
//   - jsonlines (Rust, sdk/rust): JsonLinesSource, a source of line-delimited JSON with a Connect
//     schema;
//   - fieldequals (Zig, sdk/zig): FieldEquals, a predicate on a field of struct and schemaless
//     values.
//
// See README.md for how to build, configure and extend them; make examples builds them all.
package plugins
