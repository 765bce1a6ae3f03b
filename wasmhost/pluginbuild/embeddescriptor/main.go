// Command embeddescriptor writes each module's descriptor into its descriptor section
// (sdk/ABI.md §3.1), so that a worker lists the module's plugins without compiling or running it:
//
//	embeddescriptor FILE.wasm...
//
// It is wasmhost.EmbedDescriptorFile in place on each file, as `wasmconnect plugin embed FILE` is:
// the module is described by calling it in wazero's interpreter, as a worker does a module without
// the section, and the file is rewritten atomically, keeping its mode and replacing a section an
// earlier run wrote; a symbolic link is written through to its target and stays a link. The
// Makefile runs it on every built-in module it builds, and pluginbuild on every module it builds
// for tests; this command, not bin/wasmconnect, because building it does not build (or wait for)
// the whole worker.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/wasmconnect/wasmconnect/wasmhost"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: embeddescriptor FILE.wasm...")
		os.Exit(2)
	}
	for _, file := range os.Args[1:] {
		if _, err := wasmhost.EmbedDescriptorFile(context.Background(), file, file, wasmhost.Config{}); err != nil {
			fmt.Fprintf(os.Stderr, "embeddescriptor %s: %v\n", file, err)
			os.Exit(1)
		}
	}
}
