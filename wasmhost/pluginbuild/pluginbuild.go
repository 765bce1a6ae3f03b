package pluginbuild

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// once is something made once per process: a package's module or a set's directory.
type once struct {
	sync.Once
	path string
	err  error
}

// The process's builds, all in one temporary directory.
var cache struct {
	sync.Mutex
	root    string
	err     error
	modules map[string]*once // by package
	dirs    map[string]*once // by the sorted packages of a Dir call
}

// entry returns the entry of key in *m, one of cache's maps, adding it on first use.
func entry(m *map[string]*once, key string) *once {
	cache.Lock()
	defer cache.Unlock()
	if *m == nil {
		*m = map[string]*once{}
	}
	e, ok := (*m)[key]
	if !ok {
		e = &once{}
		(*m)[key] = e
	}
	return e
}

// Dir returns a directory that holds the modules of pkgs and nothing else, for a plugin host's
// plugin path. The packages are built in parallel, each once per process, and each set of packages
// gets one directory per process. Do not change what is in it.
func Dir(pkgs ...string) (string, error) {
	if len(pkgs) == 0 {
		return "", errors.New("pluginbuild: no packages")
	}
	clean := make([]string, len(pkgs))
	for i, p := range pkgs {
		clean[i] = path.Clean(filepath.ToSlash(p))
	}
	slices.Sort(clean)
	clean = slices.Compact(clean)
	d := entry(&cache.dirs, strings.Join(clean, "\n"))
	d.Do(func() {
		modules := make([]*once, len(clean))
		var wg sync.WaitGroup
		for i, pkg := range clean {
			m := entry(&cache.modules, pkg)
			modules[i] = m
			wg.Go(func() { m.Do(func() { m.path, m.err = build(pkg) }) })
		}
		wg.Wait()
		var errs []error
		for _, m := range modules {
			errs = append(errs, m.err)
		}
		if d.err = errors.Join(errs...); d.err == nil {
			d.path, d.err = link(modules)
		}
	})
	return d.path, d.err
}

// Cleanup removes everything this process built: the directories Dir returned are gone, and later
// calls build again.
func Cleanup() {
	cache.Lock()
	defer cache.Unlock()
	if cache.root != "" {
		os.RemoveAll(cache.root)
	}
	cache.root, cache.err, cache.modules, cache.dirs = "", nil, nil, nil
}

// tempDir makes a new directory in the process's temporary directory, which it makes on first use.
func tempDir(pattern string) (string, error) {
	cache.Lock()
	if cache.root == "" && cache.err == nil {
		cache.root, cache.err = os.MkdirTemp("", "wasmconnect-pluginbuild-")
	}
	root, err := cache.root, cache.err
	cache.Unlock()
	if err != nil {
		return "", err
	}
	return os.MkdirTemp(root, pattern)
}

// build builds the package in directory pkg of the module and returns the module's path. A
// built-in plugin (plugins/*, not plugins/testdata/*) gets its descriptor section, as the
// Makefile's build gives it, so that tests load the modules a release ships; test plugins stay
// without, which keeps the hosts' describe-by-calling path under test.
func build(pkg string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	dir, err := tempDir("module-")
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, path.Base(pkg)+".wasm")
	if err := buildIn(root, pkg, out); err != nil {
		return "", err
	}
	if strings.HasPrefix(pkg, "plugins/") && !strings.HasPrefix(pkg, "plugins/testdata/") {
		if err := embedDescriptor(root, out); err != nil {
			return "", fmt.Errorf("building %s: %w", pkg, err)
		}
	}
	return out, nil
}

// buildIn builds pkg to out: a Rust crate if the directory holds a Cargo.toml, a C,
// AssemblyScript, Zig or WebAssembly text plugin (lang.go), else a Go package.
func buildIn(root, pkg, out string) error {
	switch language(filepath.Join(root, pkg)) {
	case "rust":
		return buildRust(root, pkg, out)
	case "c":
		return buildC(root, pkg, out)
	case "assemblyscript":
		return buildAssemblyScript(root, pkg, out)
	case "zig":
		return buildZig(root, pkg, out)
	case "wat":
		return buildWAT(root, pkg, out)
	}
	cmd := exec.Command(goTool(), "build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s -w", "-o", out, "./"+pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s: %v\n%s", pkg, err, b)
	}
	return nil
}

// embedTool is the package of the command that writes a module's descriptor section.
const embedTool = "wasmhost/pluginbuild/embeddescriptor"

// embedDescriptor runs embeddescriptor on the module out, building the command once per process
// (it imports wasmhost, which this package, imported by wasmhost's tests, cannot).
func embedDescriptor(root, out string) error {
	tool := entry(&cache.modules, "tool "+embedTool)
	tool.Do(func() {
		dir, err := tempDir("tool-")
		if err != nil {
			tool.err = err
			return
		}
		tool.path = filepath.Join(dir, path.Base(embedTool))
		cmd := exec.Command(goTool(), "build", "-o", tool.path, "./"+embedTool)
		cmd.Dir = root
		if b, err := cmd.CombinedOutput(); err != nil {
			tool.err = fmt.Errorf("building %s: %v\n%s", embedTool, err, b)
		}
	})
	if tool.err != nil {
		return tool.err
	}
	if b, err := exec.Command(tool.path, out).CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v\n%s", path.Base(embedTool), err, b)
	}
	return nil
}

// moduleRoot is the directory of the go.mod that governs the working directory.
var moduleRoot = sync.OnceValues(func() (string, error) {
	b, err := exec.Command(goTool(), "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("pluginbuild: go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(b))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("pluginbuild: the working directory is not inside a Go module")
	}
	return filepath.Dir(gomod), nil
})

// goTool is the go command of the toolchain that built this binary if it is there, else the one
// on PATH.
func goTool() string {
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		return "go"
	}
	return gobin
}

// link returns a new directory with the modules, hard-linked where it can and copied where not.
func link(modules []*once) (string, error) {
	dir, err := tempDir("dir-")
	if err != nil {
		return "", err
	}
	for _, m := range modules {
		dst := filepath.Join(dir, filepath.Base(m.path))
		if _, err := os.Lstat(dst); err == nil {
			return "", fmt.Errorf("pluginbuild: two packages build %s", filepath.Base(m.path))
		}
		if os.Link(m.path, dst) != nil {
			if err := copyFile(dst, m.path); err != nil {
				return "", err
			}
		}
	}
	return dir, nil
}

func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
