// Package wire encodes and decodes the binary layouts of the wasmconnect plugin ABI (sdk/ABI.md §5):
// records, Connect data values, and the batches of them that cross the WebAssembly boundary.
//
// It is plain Go with no dependency on WebAssembly, so the host (the worker) and the Go guest SDK share
// one implementation of the byte layout and cannot drift apart. Decoding never panics on malformed
// input: it returns an error that says what was truncated or invalid, because the bytes come from an
// untrusted plugin.
package wire
