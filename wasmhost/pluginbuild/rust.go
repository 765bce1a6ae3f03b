package pluginbuild

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// RustFlags are the rustc flags of a module and of the SDK it links (the Makefile uses the same):
// release code, one codegen unit and link-time optimization, which make the module smaller and
// faster, no symbols, and a 256 KiB stack instead of rustc's 1 MiB: the stack lies at the start of
// linear memory, and the first memory growth copies it, making all of it resident in every
// instance (2.2 MB RSS per idle file source task with 1 MiB). bulk-memory (in wazero's default
// CoreFeaturesV2, which wasmhost loads modules with) lets copies and fills of a non-constant size
// compile to one memory.copy / memory.fill instead of a call to the compiler's memcpy, a word loop
// whose every iteration also pays the fuel check: it cuts the fuel FileStreamSource burns per
// 100-byte line by a third (BenchmarkBuiltinPoll fuel/record 29.2 -> 18.5). simd128 (also in
// CoreFeaturesV2; wazero compiles it to SSE/NEON) lets LLVM vectorize the byte loops that scan
// and copy text: same fuel, 11% less time for the HoistField+InsertField+RegexRouter chain and 16%
// for JsonConverter on hoisted lines (BenchmarkChain/lines/fused, BenchmarkJsonConverterFromConnectHoisted).
var RustFlags = []string{"--edition", "2021", "--target", "wasm32-wasi", "-C", "opt-level=3", "-C", "lto=fat", "-C", "codegen-units=1", "-C", "strip=symbols",
	"-C", "link-arg=-zstack-size=262144", "-C", "target-feature=+bulk-memory,+simd128"}

// RustInstall is how to install a Rust compiler that builds wasm32-wasi modules on Debian.
const RustInstall = "apt-get install rustc libstd-rust-dev-wasm32 lld-14"

// ToolMissingError says that a module cannot be built because a tool is not installed.
type ToolMissingError struct {
	What    string // the tool
	Install string // how to install it
}

func (e *ToolMissingError) Error() string {
	return fmt.Sprintf("%s is not installed: %s", e.What, e.Install)
}

// rustc is the Rust compiler that can build wasm32-wasi modules: $RUSTC if set, else
// /usr/bin/rustc (Debian's, which has the wasm32-wasi standard library, while toolchains earlier
// in PATH may not), else rustc on PATH. It must have the wasm32-wasi standard library.
var rustc = sync.OnceValues(func() (string, error) {
	candidates := []string{os.Getenv("RUSTC"), "/usr/bin/rustc", "rustc"}
	for _, c := range candidates {
		if c == "" {
			continue
		}
		bin, err := exec.LookPath(c)
		if err != nil {
			continue
		}
		out, err := exec.Command(bin, "--print", "target-libdir", "--target", "wasm32-wasi").Output()
		if err != nil {
			continue
		}
		libs, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "libstd-*.rlib"))
		if len(libs) > 0 {
			return bin, nil
		}
	}
	return "", &ToolMissingError{What: "a Rust compiler with the wasm32-wasi standard library", Install: RustInstall}
})

// rustSDK is the Rust SDK (sdk/rust) built once per process as an rlib, which every Rust module
// links as the crate wasmconnect.
var rustSDK = sync.OnceValues(func() (string, error) {
	bin, err := rustc()
	if err != nil {
		return "", err
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	dir, err := tempDir("rust-sdk-")
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "libwasmconnect.rlib")
	args := append(append([]string{}, RustFlags...), "--crate-type", "rlib", "--crate-name", "wasmconnect", "-o", out, "sdk/rust/src/lib.rs")
	return out, runRustc(root, "sdk/rust", bin, args)
})

// buildRust builds the Rust crate in directory pkg (src/lib.rs, depending on the SDK only) into
// the module out. Unlike go build, rustc keeps no build cache, and an optimized build takes seconds
// of CPU, which every test process would pay again: modules are kept in the user's cache
// directory by the hash of the compiler, the flags and the sources of the crate and the SDK.
func buildRust(root, pkg, out string) error {
	bin, err := rustc()
	if err != nil {
		return err
	}
	cached, key := rustCached(root, pkg, bin)
	if key != "" && copyFile(out, cached) == nil {
		now := time.Now()
		os.Chtimes(cached, now, now) // in use: keep it from pruneCache
		return nil
	}
	sdk, err := rustSDK()
	if err != nil {
		return err
	}
	defer func() {
		if err == nil && key != "" {
			keepInCache(cached, out)
		}
	}()
	crate := strings.ReplaceAll(path.Base(pkg), "-", "_")
	args := append(append([]string{}, RustFlags...), "--crate-type", "cdylib", "--crate-name", crate,
		"--extern", "wasmconnect="+sdk, "-o", out, filepath.Join(pkg, "src", "lib.rs"))
	err = runRustc(root, pkg, bin, args)
	return err
}

// rustCached returns where the module of pkg built by bin is cached, and its key ("" if the
// sources cannot be read).
func rustCached(root, pkg, bin string) (path, key string) {
	h := sha256.New()
	version, err := exec.Command(bin, "-vV").Output()
	if err != nil {
		return "", ""
	}
	fmt.Fprintf(h, "%s\n%s\n%s\n", version, strings.Join(RustFlags, " "), pkg)
	dirs := append([]string{filepath.Join(root, "sdk", "rust", "src"), filepath.Join(root, pkg, "src")}, rustIncludes(filepath.Join(root, pkg, "src"))...)
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			fmt.Fprintf(h, "%s %d\n", strings.TrimPrefix(p, root), len(b))
			h.Write(b)
			return err
		})
		if err != nil {
			return "", ""
		}
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", ""
	}
	key = hex.EncodeToString(h.Sum(nil))
	return filepath.Join(cache, "wasmconnect", "pluginbuild-rust", key+".wasm"), key
}

// rustIncludes returns the directories of the sources a crate's lib.rs includes from elsewhere
// with #[path = "..."] (the transforms module includes the converters' crate), which its cache key
// must cover too.
func rustIncludes(src string) []string {
	b, err := os.ReadFile(filepath.Join(src, "lib.rs"))
	if err != nil {
		return nil
	}
	var dirs []string
	for _, line := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), `#[path = "`)
		if !ok {
			continue
		}
		if p, _, ok := strings.Cut(rest, `"`); ok {
			dirs = append(dirs, filepath.Dir(filepath.Join(src, p)))
		}
	}
	return dirs
}

// keepInCache copies the module built at out to cached, atomically, so that a concurrent reader
// sees a whole module or none. Failures only cost a rebuild later.
func keepInCache(cached, out string) {
	if os.MkdirAll(filepath.Dir(cached), 0o755) != nil {
		return
	}
	tmp := fmt.Sprintf("%s.%d.tmp", cached, os.Getpid())
	if copyFile(tmp, out) != nil || os.Rename(tmp, cached) != nil {
		os.Remove(tmp)
	}
	pruneCache(filepath.Dir(cached))
}

// cacheMaxAge is how long a cached module nobody used is kept: every change of the sources adds
// one.
const cacheMaxAge = 7 * 24 * time.Hour

// pruneCache removes the modules in dir that were not built or used for cacheMaxAge.
func pruneCache(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > cacheMaxAge {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

func runRustc(root, pkg, bin string, args []string) error {
	cmd := exec.Command(bin, args...)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s: %s %s: %v\n%s", pkg, bin, strings.Join(args, " "), err, b)
	}
	return nil
}

// DirOf is Dir for a test or benchmark: a toolchain that is not installed is reported with
// Missing (a skip on a developer's machine, a failure in CI), any other error fails tb.
func DirOf(tb testing.TB, pkgs ...string) string {
	tb.Helper()
	dir, err := Dir(pkgs...)
	var missing *ToolMissingError
	if errors.As(err, &missing) {
		Missing(tb, missing.What, missing.Install)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return dir
}

// Rustc returns the Rust compiler modules are built with, or a *ToolMissingError.
func Rustc() (string, error) { return rustc() }
