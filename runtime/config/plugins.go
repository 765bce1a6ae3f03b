package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/wasmconnect/wasmconnect/wasmhost/netgrant"
)

// pluginKeys are the plugin host's keys: where modules are found and the sandbox they run in.
var pluginKeys = []Key{
	{Name: "plugin.path", Doc: "directories of .wasm plugin modules"},
	{Name: "plugin.fs.allow", Doc: "directories plugins may read and write"},
	{Name: "plugin.net.allow", Doc: "TCP destinations plugins may connect to (host:port, host:*, CIDR:port; none by default)"},
	{Name: "plugin.cache.dir", Doc: "compiled-module cache (default: the user cache dir's wasmconnect)"},
	{Name: "plugin.memory.max.bytes", Default: "268435456", Doc: "linear memory cap of each plugin instance"},
	{Name: "plugin.call.timeout.ms", Default: "30000", Doc: "bound on one call into a plugin"},
	{Name: "plugin.cpu.bound", Default: "fuel", Doc: "fuel (each call is bounded and checks in with the host) or none, for benchmarks and diagnostics only"},
}

func parsePlugins(p *parser, w *Worker) {
	w.PluginPath = p.list("plugin.path")
	w.PluginFSAllow = p.list("plugin.fs.allow")
	for i, d := range w.PluginFSAllow {
		abs, err := filepath.Abs(d)
		if err != nil {
			p.fail("plugin.fs.allow", d, err.Error())
			continue
		}
		w.PluginFSAllow[i] = abs
		// Checked here, before anything starts, rather than when the plugins load.
		if st, err := os.Stat(abs); err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err // the path is in the message already
			}
			p.fail("plugin.fs.allow", d, err.Error())
		} else if !st.IsDir() {
			p.fail("plugin.fs.allow", d, "not a directory (plugins are granted directories, not files)")
		}
	}
	if g, err := netgrant.Parse(p.str("plugin.net.allow")); err != nil {
		p.fail("plugin.net.allow", p.str("plugin.net.allow"), err.Error())
	} else {
		w.PluginNetAllow = g
	}
	w.PluginCacheDir = p.str("plugin.cache.dir")
	if _, given := p.raw("plugin.cache.dir"); !given {
		w.PluginCacheDir = defaultCacheDir()
	}
	w.PluginMemoryMax = uint64(p.intRange("plugin.memory.max.bytes", 1<<16, 1<<32))
	w.PluginCallTimeout = p.millis("plugin.call.timeout.ms")
	switch b := strings.ToLower(p.str("plugin.cpu.bound")); b {
	case "fuel":
	case "none":
		w.PluginNoCPUBound = true
	default:
		p.fail("plugin.cpu.bound", b, "want fuel (the default) or none (no bound on a call's CPU time, for benchmarks and diagnostics only)")
	}
}

func defaultCacheDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "wasmconnect")
	}
	return ""
}
