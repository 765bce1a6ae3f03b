// Command embeddescriptor writes each module's descriptor into its descriptor section
// (sdk/ABI.md §3.1), so that a worker lists the module's plugins without compiling or running it:
//
//	embeddescriptor FILE.wasm...
//
// It describes each module by calling it in wazero's interpreter, as a worker does a module
// without the section, and rewrites the file in place (atomically, keeping its mode), replacing a
// section an earlier run wrote. The Makefile runs it on every built-in module it builds, and
// pluginbuild on every module it builds for tests.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wasmconnect/wasmconnect/wasmhost"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: embeddescriptor FILE.wasm...")
		os.Exit(2)
	}
	for _, file := range os.Args[1:] {
		if err := embed(file); err != nil {
			fmt.Fprintf(os.Stderr, "embeddescriptor %s: %v\n", file, err)
			os.Exit(1)
		}
	}
}

func embed(file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	st, err := os.Stat(file)
	if err != nil {
		return err
	}
	out, err := wasmhost.EmbedDescriptor(context.Background(), b, wasmhost.Config{})
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".embeddescriptor-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(st.Mode().Perm()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}
