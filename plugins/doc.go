// Package plugins holds wasmconnect's plugin modules, each a main package built for WebAssembly
// with the Go SDK (sdk/go):
//
//   - file: FileStreamSource and FileStreamSink (Kafka's FileStream connectors).
//   - converters: JsonConverter, StringConverter and ByteArrayConverter.
//   - testdata/faulty: a test-only source that traps, loops, runs out of memory, panics or opens a
//     file it may not, on purpose.
//
// Build one with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags='-s -w' -o build/plugins/<name>.wasm ./plugins/<name>
//
// Package pluginbuild builds them that way for tests and tools; the tests of this package build all
// three with it and run them in the real host (wasmhost).
package plugins
