// Package pluginbuild builds this repository's Go plugin modules to WebAssembly for tests and
// tools, with the documented command
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags='-s -w'
//
// Packages are named by their directory below the module root ("plugins/file",
// "plugins/testdata/faulty") and their modules after its last element (file.wasm, faulty.wasm). It
// runs the go command of the toolchain that built the calling binary, from the module root that
// contains the working directory, so it works from any package's test.
//
// Builds are cached per process: each package is built once, however many callers ask for it, and
// what was built lives in one temporary directory until Cleanup, which a TestMain calls after
// m.Run.
package pluginbuild
