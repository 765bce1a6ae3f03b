package wasmhost

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"

	"github.com/tetratelabs/wazero"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// ModuleInfo is what one module file declares, for a plugin author or an operator deciding
// whether to deploy it (wasmconnect plugin inspect).
type ModuleInfo struct {
	Path    string   `json:"path"`
	Size    int      `json:"size"`
	SHA256  string   `json:"sha256"`
	ABI     int32    `json:"abi"`     // the ABI version of its descriptor; 0 when it did not load
	Imports []string `json:"imports"` // "module.name (params) -> results": what the host must provide
	Exports []string `json:"exports"` // functions and memories
	Plugins []Plugin `json:"plugins"`
	// Problem says why a worker would not load the module; "" when it would.
	Problem string `json:"problem,omitempty"`
}

// Inspect reads a module file the way a worker's plugin path does (cfg's limits apply; its
// PluginPath and Logger are ignored) and lists its imports, exports and plugins. The error is for
// a file that cannot be read; a module the host would refuse is described by ModuleInfo.Problem.
func Inspect(ctx context.Context, path string, cfg Config) (ModuleInfo, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return ModuleInfo{}, err
	}
	b, err := os.ReadFile(abs)
	if err != nil {
		return ModuleInfo{}, err
	}
	info := ModuleInfo{Path: abs, Size: len(b), SHA256: fmt.Sprintf("%x", sha256.Sum256(b)), Imports: []string{}, Exports: []string{}}
	info.Imports, info.Exports = shape(ctx, b)

	h, err := openOne(ctx, abs, cfg)
	if err != nil {
		return info, err
	}
	defer h.Close(ctx)
	if errs := h.LoadErrors(); len(errs) > 0 {
		info.Problem = errs[0].Err.Error()
	} else {
		info.ABI = wire.Version
	}
	info.Plugins = h.Plugins()
	return info, nil
}

// openOne is a host whose plugin path is the one module file path, quiet, without a cache, and
// describing the module by calling it even when it has a descriptor section: what it reports is
// about the file's code, never about an earlier run.
func openOne(ctx context.Context, path string, cfg Config) (*Host, error) {
	cfg.PluginPath = []string{path}
	cfg.CacheDir = ""
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	return newHost(ctx, cfg, hostOptions{callDescribe: true})
}

// shape lists a module's imports and exports as compiled by wazero's interpreter (nothing runs);
// both are empty for bytes that do not compile.
func shape(ctx context.Context, b []byte) (imports, exports []string) {
	imports, exports = []string{}, []string{}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	c, err := rt.CompileModule(ctx, b)
	if err != nil {
		return
	}
	for _, def := range c.ImportedFunctions() {
		mod, name, _ := def.Import()
		imports = append(imports, fmt.Sprintf("%s.%s %s", mod, name, signature(def.ParamTypes(), def.ResultTypes())))
	}
	for _, def := range c.ImportedMemories() {
		mod, name, _ := def.Import()
		imports = append(imports, fmt.Sprintf("%s.%s (memory)", mod, name))
	}
	for name, def := range c.ExportedFunctions() {
		exports = append(exports, name+" "+signature(def.ParamTypes(), def.ResultTypes()))
	}
	for name := range c.ExportedMemories() {
		exports = append(exports, name+" (memory)")
	}
	slices.Sort(imports)
	slices.Sort(exports)
	return
}
