// Package hcl reads wasmconnect's HCL files: the worker config (worker.hcl), equivalent to a
// connect-distributed.properties file.
//
// Errors are hcl diagnostics and print with file, line and column (`worker.hcl:3,9: ...`), so a
// mistake is found without guessing.
package hcl
