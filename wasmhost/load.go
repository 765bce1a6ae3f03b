package wasmhost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/wasmconnect/wasmconnect/wasmhost/internal/fuel"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

var (
	i32 = api.ValueTypeI32
	i64 = api.ValueTypeI64
)

// abiExports are the functions ABI v1 requires a module to export (sdk/ABI.md §1).
var abiExports = []struct {
	name            string
	params, results []api.ValueType
}{
	{"wc_abi_version", nil, []api.ValueType{i32}},
	{"wc_alloc", []api.ValueType{i32}, []api.ValueType{i32}},
	{"wc_free", []api.ValueType{i32, i32}, nil},
	{"wc_describe", nil, []api.ValueType{i64}},
	{"wc_call", []api.ValueType{i32, i32, i32, i32}, []api.ValueType{i64}},
}

// knownKinds are the plugin kinds the descriptor may name (sdk/ABI.md §3). Kinds this host does not
// run yet are still listed, so that a module written for a newer host loads and says what it offers.
var knownKinds = []wire.Kind{wire.KindSource, wire.KindSink, wire.KindConverter, "transformation", "predicate"}

// findModules lists the .wasm files on the plugin path: directly inside each directory and inside
// its immediate subdirectories, in name order, each file once. An entry that is a .wasm file is
// that module.
func findModules(dirs []string) (files []string, errs []LoadError) {
	seen := map[string]bool{}
	add := func(path string) {
		if !seen[path] {
			seen[path] = true
			files = append(files, path)
		}
	}
	for _, dir := range dirs {
		abs, err := filepath.Abs(dir)
		if err != nil {
			errs = append(errs, LoadError{Path: dir, Err: err})
			continue
		}
		if st, err := os.Stat(abs); err == nil && st.Mode().IsRegular() && isWasm(abs) {
			add(abs) // a module named directly (wasmconnect plugin inspect and check)
			continue
		}
		entries, err := os.ReadDir(abs)
		if err != nil {
			errs = append(errs, LoadError{Path: abs, Err: fmt.Errorf("plugin directory: %w", err)})
			continue
		}
		for _, e := range entries {
			path := filepath.Join(abs, e.Name())
			st, err := os.Stat(path) // follows symlinks, as a plugin folder is often a link
			if err != nil {
				if isWasm(e.Name()) { // a dangling link to a module: say so rather than skip it silently
					errs = append(errs, LoadError{Path: path, Err: unreadable(err)})
				}
				continue
			}
			if st.Mode().IsRegular() && isWasm(e.Name()) {
				add(path)
				continue
			}
			if !st.IsDir() {
				continue
			}
			subs, err := os.ReadDir(path)
			if err != nil {
				errs = append(errs, LoadError{Path: path, Err: fmt.Errorf("plugin directory: %w", err)})
				continue
			}
			for _, s := range subs {
				sp := filepath.Join(path, s.Name())
				if !isWasm(s.Name()) {
					continue
				}
				if st, err := os.Stat(sp); err != nil {
					errs = append(errs, LoadError{Path: sp, Err: unreadable(err)})
				} else if st.Mode().IsRegular() {
					add(sp)
				}
			}
		}
	}
	return files, errs
}

// unreadable says why a *.wasm entry could not be read, without repeating its path (LoadError
// names it): most often a symbolic link to a file that is gone.
func unreadable(err error) error {
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("cannot read the file: %w", err)
}

func isWasm(name string) bool { return strings.HasSuffix(name, ".wasm") }

// loadModule reads one file's descriptor: from the descriptor cache when these bytes, with this
// memory limit, compiled before (no guest code runs then), from the module's descriptor section
// (section.go; its shape is checked when it compiles), or else by checking them against ABI v1 and
// calling wc_describe in the interpreter. Every error names precisely what is wrong, because
// the operator sees it at start-up (or on a reload) with nothing else to go on.
func (h *Host) loadModule(ctx context.Context, d *describer, path string, b []byte, sum [32]byte) (*module, error) {
	if !bytes.HasPrefix(b, []byte("\x00asm")) {
		return nil, fmt.Errorf("not a WebAssembly module: the file does not start with the \\0asm magic number")
	}
	desc, hasSection, err := descriptorSection(b)
	if err != nil && !h.callDescribe {
		return nil, err // before the cache: the module is refused whatever an earlier host made of it
	}
	m := &module{path: path, base: filepath.Base(path), sum: sum}
	if c, ok := h.cachedDescriptor(m); ok {
		m.hasInitialize, m.cached = c.Initialize, true
		return m, h.parseDescriptor(m, c.Descriptor)
	}
	if hasSection && !h.callDescribe {
		if err := h.parseDescriptor(m, desc); err != nil {
			return nil, fmt.Errorf("custom section %s: %w", DescriptorSection, err)
		}
		m.descriptor, m.unchecked = desc, true
	} else if err := d.describe(ctx, m, b); err != nil {
		return nil, err
	}
	m.wasm = b // compiled from these very bytes, even if the file is replaced meanwhile
	return m, nil
}

// compileError says why a module did not compile, with the memory limit when that is the cause.
func (h *Host) compileError(err error) error {
	if strings.Contains(err.Error(), "over limit") {
		return fmt.Errorf("compile: %w (the per-instance memory limit is %s)", err, mib(uint64(h.pages)<<16))
	}
	return fmt.Errorf("compile: %w", err)
}

// checkShape checks the exports and imports of c, m's code, before anything runs, so that a module
// built against the wrong SDK is named as such instead of failing later with a link error or a trap.
func checkShape(m *module, c wazero.CompiledModule) error {
	var problems []string
	if len(c.ImportedMemories()) > 0 {
		problems = append(problems, `imports its linear memory; ABI v1 requires the module to define and export it as "memory"`)
	} else if _, ok := c.ExportedMemories()["memory"]; !ok {
		problems = append(problems, `missing export "memory" (the linear memory)`)
	}
	fns := c.ExportedFunctions()
	for _, want := range abiExports {
		def, ok := fns[want.name]
		if !ok {
			problems = append(problems, fmt.Sprintf("missing export %s %s", want.name, signature(want.params, want.results)))
			continue
		}
		if !slices.Equal(def.ParamTypes(), want.params) || !slices.Equal(def.ResultTypes(), want.results) {
			problems = append(problems, fmt.Sprintf("export %s has signature %s, ABI v1 requires %s", want.name,
				signature(def.ParamTypes(), def.ResultTypes()), signature(want.params, want.results)))
		}
	}
	if def, ok := fns["_initialize"]; ok {
		if len(def.ParamTypes()) != 0 || len(def.ResultTypes()) != 0 {
			problems = append(problems, "export _initialize must take and return nothing")
		} else {
			m.hasInitialize = true
		}
	}
	for _, def := range c.ImportedFunctions() {
		mod, name, _ := def.Import()
		switch {
		case mod == "wasi_snapshot_preview1":
		case mod == "wasmconnect" && (name == "log" || name == "offset_get" || slices.Contains(wire.NetImports, name)):
		case mod == fuel.ImportModule && name == fuel.ImportName:
			// Added by the fuel rewrite, which refuses modules that import it themselves.
		default:
			problems = append(problems, fmt.Sprintf("imports %s.%s, which the host does not provide (it offers wasmconnect.log, wasmconnect.offset_get, wasmconnect.net_* and wasi_snapshot_preview1)", mod, name))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("not a wasmconnect ABI v1 module: %s", strings.Join(problems, "; "))
	}
	return nil
}

func signature(params, results []api.ValueType) string {
	names := func(ts []api.ValueType) string {
		s := make([]string, len(ts))
		for i, t := range ts {
			s[i] = api.ValueTypeName(t)
		}
		return strings.Join(s, ", ")
	}
	if len(results) == 0 {
		return "(" + names(params) + ")"
	}
	return "(" + names(params) + ") -> " + names(results)
}

// describe instantiates m once, checks wc_abi_version and returns what wc_describe says. The
// instance is thrown away: a long-lived one per module would cost megabytes for Go guests.
func (h *Host) describe(ctx context.Context, m *module) ([]byte, error) {
	in, err := h.instantiate(ctx, m, h.log.With("module", m.base), nil)
	if err != nil {
		return nil, err
	}
	defer in.close(ctx, nil)
	in.mu.Lock()
	defer in.mu.Unlock()

	stack := in.stack[:]
	if err := in.invoke(ctx, "", "wc_abi_version", in.mod.ExportedFunction("wc_abi_version"), stack); err != nil {
		return nil, err
	}
	if v := api.DecodeI32(stack[0]); v != wire.Version {
		return nil, fmt.Errorf("declares ABI version %d (wc_abi_version); this host implements version %d", v, wire.Version)
	}
	if err := in.invoke(ctx, "", "wc_describe", in.mod.ExportedFunction("wc_describe"), stack); err != nil {
		return nil, err
	}
	return in.result("", "wc_describe", stack[0], nil)
}

// parseDescriptor checks a descriptor wc_describe returned and sets m.plugins from it.
func (h *Host) parseDescriptor(m *module, out []byte) error {
	var d wire.Descriptor
	if err := json.Unmarshal(out, &d); err != nil {
		return fmt.Errorf("wc_describe returned an invalid descriptor: %w", err)
	}
	if d.ABI != wire.Version {
		return fmt.Errorf("descriptor declares abi %d; this host implements version %d", d.ABI, wire.Version)
	}
	if len(d.Plugins) == 0 {
		return fmt.Errorf("descriptor lists no plugins")
	}
	m.transformChain = d.TransformChain
	m.transformConvert = d.TransformConvert
	seen := map[string]bool{}
	for i, pd := range d.Plugins {
		switch {
		case pd.Name == "" || pd.Class == "":
			return fmt.Errorf("descriptor plugin #%d has no name or class", i)
		case seen[pd.Class]:
			return fmt.Errorf("descriptor lists plugin class %s twice", pd.Class)
		case pd.Kind == "":
			return fmt.Errorf("descriptor plugin %s has no kind", pd.Class)
		}
		seen[pd.Class] = true
		if !slices.Contains(knownKinds, pd.Kind) {
			h.log.Warn("plugin of an unknown kind skipped", "module", m.path, "class", pd.Class, "kind", pd.Kind)
			continue
		}
		m.plugins = append(m.plugins, Plugin{
			Name: pd.Name, Class: pd.Class, Aliases: pd.Aliases, Kind: pd.Kind,
			Version: pd.Version, Config: pd.Config, Module: m.path,
		})
	}
	return nil
}
