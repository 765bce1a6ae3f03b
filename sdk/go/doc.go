// Package sdk is the Go SDK for wasmconnect plugins: Kafka Connect source and sink connectors and
// converters compiled to WebAssembly (GOOS=wasip1 GOARCH=wasm, -buildmode=c-shared).
//
// A plugin implements SourceConnector and SourceTask, SinkConnector and SinkTask, Converter,
// Transformation or Predicate, and registers them from an init function with RegisterSource,
// RegisterSink, RegisterConverter, RegisterTransformation or RegisterPredicate. One module may
// register several plugins (as plugins/transforms, in Rust, registers all of Kafka's standard transformations).
// A transformation sees one record at a time and the SDK batches: it tells the host which input
// each output came from, which records were dropped, unchanged or failed (sdk/ABI.md §5.6). The
// package connect (sdk/go/connect) reads and writes keys and values as Connect data: schemas,
// structs and schemaless maps. The SDK implements the guest side of the ABI (sdk/ABI.md):
// the wc_* exports, the descriptor, handles, the checks of required keys and types declared with
// ConfigDef, and the conversion of records to and from the wire layout (package wire). Plugin code
// never touches pointers.
//
// The dispatch logic is plain Go; only a small file built for wasip1 holds the exports and imports.
// Natively (go test on linux/amd64) the same package builds with stand-ins: SetStoredOffset feeds
// TaskContext.Offset, SetLogOutput captures logs, and Invoke drives registered plugins through the
// real dispatch code, so a plugin's logic is tested without WebAssembly.
//
// A panic in a plugin method is recovered and returned to the host as an error result (a
// *PanicError with the stack). Go runtime fatal errors, such as running out of memory, cannot be
// recovered and abort the module as a trap.
//
// See README.md next to this file for a complete example and the build command.
package sdk
