// Package plugins holds wasmconnect's plugin modules, built for WebAssembly:
//
//   - file: FileStreamSource and FileStreamSink (Kafka's FileStream connectors), a Rust crate on the
//     Rust SDK (sdk/rust); see plugins/file for how it is built.
//   - converters: JsonConverter, StringConverter and ByteArrayConverter, a main package on the Go
//     SDK (sdk/go), as the rest.
//   - testdata/faulty: a test-only source that traps, loops, runs out of memory, panics or opens a
//     file it may not, on purpose.
//
// Build a Go one with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags='-s -w' -o build/plugins/<name>.wasm ./plugins/<name>
//	go run ./wasmhost/pluginbuild/embeddescriptor build/plugins/<name>.wasm
//
// The second step writes the module's descriptor section (sdk/ABI.md §3.1), so that a worker lists
// its plugins without compiling it; make build does both. Package pluginbuild builds them that way
// for tests and tools; the tests of this package build them with it and run them in the real host
// (wasmhost).
package plugins
