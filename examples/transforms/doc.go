// Package transforms holds custom transformations written in languages other than Go, against the
// plugin ABI (sdk/ABI.md) directly, and the tests that build them and run them in the worker's
// plugin host (wasmhost):
//
//   - uppercase/uppercase.c: UppercaseValue, a C transformation that upper-cases STRING values
//     (see README.md for the build command).
package transforms
