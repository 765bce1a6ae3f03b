package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/wasmconnect/wasmconnect/wasmhost"
)

// pluginCommands are the subcommands of wasmconnect plugin: the plugin author's toolkit.
var pluginCommands = []command{
	{"inspect", "inspect FILE.wasm [--json]   kind, classes, version, ABI version, config definitions and imports of a module", runPluginInspect},
	{"check", "check FILE.wasm [--json]     run a module through the ABI contract in a sandbox; exit 1 on a problem", runPluginCheck},
	{"embed", "embed FILE.wasm [-o OUT]      write the module's descriptor section, so that a worker lists it without compiling it (through a symbolic link, to its target)", runPluginEmbed},
	{"new", "new --lang LANG NAME [--dir DIR] [--sdk DIR]   write a ready-to-build plugin skeleton with a test (" + strings.Join(templateLangs(), ", ") + ")", runPluginNew},
}

func runPlugin(ctx context.Context, args []string) error {
	if len(args) > 0 {
		for _, c := range pluginCommands {
			if c.name == args[0] {
				return c.run(ctx, args[1:])
			}
		}
	}
	var b strings.Builder
	b.WriteString("usage: wasmconnect plugin <command>\n\ncommands:\n")
	for _, c := range pluginCommands {
		b.WriteString("  " + c.usage + "\n")
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Print(b.String())
		return nil
	}
	fmt.Fprint(os.Stderr, b.String())
	return fmt.Errorf("unknown plugin command %q", args[0])
}

// moduleFlags parses FILE.wasm and the flags every command on one module shares: the limits a
// worker would apply (plugin.memory.max.bytes, plugin.call.timeout.ms). define adds the command's
// own flags; usage is what follows FILE.wasm in its usage line.
func moduleFlags(name, usage string, args []string, define func(*flag.FlagSet)) (file string, cfg wasmhost.Config, err error) {
	fs := newFlags("plugin " + name)
	define(fs)
	mem := fs.Uint64("memory-max-bytes", wasmhost.DefaultMemoryLimitBytes, "per-instance memory cap, as plugin.memory.max.bytes")
	timeout := fs.Duration("call-timeout", wasmhost.DefaultCallTimeout, "bound of one guest call, as plugin.call.timeout.ms")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: wasmconnect plugin %s FILE.wasm %s [--memory-max-bytes N] [--call-timeout D]\n", name, usage)
		fs.PrintDefaults()
	}
	// The file may come before or after the flags.
	var rest []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return "", cfg, err
		}
		if fs.NArg() == 0 {
			break
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(rest) != 1 {
		fs.Usage()
		return "", cfg, fmt.Errorf("want one FILE.wasm, got %d arguments", len(rest))
	}
	return rest[0], wasmhost.Config{MemoryLimitBytes: *mem, CallTimeout: *timeout}, nil
}

// jsonFlag defines inspect's and check's --json.
func jsonFlag(asJSON *bool) func(*flag.FlagSet) {
	return func(fs *flag.FlagSet) { fs.BoolVar(asJSON, "json", false, "print JSON instead of text") }
}

func runPluginInspect(ctx context.Context, args []string) error {
	var asJSON bool
	file, cfg, err := moduleFlags("inspect", "[--json]", args, jsonFlag(&asJSON))
	if err != nil {
		return err
	}
	info, err := wasmhost.Inspect(ctx, file, cfg)
	if err != nil {
		return err
	}
	if asJSON {
		if err := printJSON(os.Stdout, info); err != nil {
			return err
		}
	} else {
		printInfo(os.Stdout, info)
	}
	if info.Problem != "" {
		return errors.New(firstLineOf(info.Problem))
	}
	return nil
}

func printInfo(w io.Writer, info wasmhost.ModuleInfo) {
	fmt.Fprintf(w, "module   %s\n", info.Path)
	fmt.Fprintf(w, "size     %d bytes, sha256 %s\n", info.Size, info.SHA256)
	if info.ABI != 0 {
		fmt.Fprintf(w, "abi      %d\n", info.ABI)
	} else {
		fmt.Fprintf(w, "abi      none: the module does not load\n")
	}
	fmt.Fprintf(w, "imports  %d (what the host must provide)\n", len(info.Imports))
	for _, im := range info.Imports {
		fmt.Fprintf(w, "  %s\n", im)
	}
	fmt.Fprintf(w, "exports  %d\n", len(info.Exports))
	for _, ex := range info.Exports {
		fmt.Fprintf(w, "  %s\n", ex)
	}
	fmt.Fprintf(w, "plugins  %d\n", len(info.Plugins))
	for _, p := range info.Plugins {
		fmt.Fprintf(w, "  %s %s\n", p.Kind, p.Class)
		fmt.Fprintf(w, "    name %s, version %s", p.Name, p.Version)
		if len(p.Aliases) > 0 {
			fmt.Fprintf(w, ", aliases %s", strings.Join(p.Aliases, ", "))
		}
		fmt.Fprintln(w)
		for _, k := range p.Config {
			def := "no default"
			if k.DefaultValue != nil {
				def = fmt.Sprintf("default %q", *k.DefaultValue)
			}
			req := ""
			if k.Required {
				req = ", required"
			}
			fmt.Fprintf(w, "    config %s: %s, %s%s, importance %s", k.Name, k.Type, def, req, k.Importance)
			if k.Documentation != "" {
				fmt.Fprintf(w, ": %s", k.Documentation)
			}
			fmt.Fprintln(w)
		}
	}
	if info.Problem != "" {
		fmt.Fprintf(w, "problem  %s\n", info.Problem)
	}
}

func runPluginCheck(ctx context.Context, args []string) error {
	var asJSON bool
	file, cfg, err := moduleFlags("check", "[--json]", args, jsonFlag(&asJSON))
	if err != nil {
		return err
	}
	if _, err := os.Stat(file); err != nil {
		return err
	}
	start := time.Now()
	steps, err := wasmhost.Check(ctx, file, cfg)
	if err != nil {
		return err
	}
	problems := 0
	for _, s := range steps {
		if s.Problem != "" {
			problems++
		}
	}
	if asJSON {
		if err := printJSON(os.Stdout, steps); err != nil {
			return err
		}
	} else {
		for _, s := range steps {
			if s.Problem != "" {
				fmt.Printf("FAIL  %s: %s\n", s.Name, s.Problem)
			} else {
				fmt.Printf("ok    %s: %s\n", s.Name, s.Detail)
			}
		}
	}
	if problems > 0 {
		return fmt.Errorf("%s: %d problem(s) in %d checks", file, problems, len(steps))
	}
	if !asJSON {
		fmt.Printf("%s: %d checks passed in %v\n", file, len(steps), time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// runPluginEmbed writes the descriptor section of sdk/ABI.md §3.1 into a module (in place, or to
// -o OUT; through a symbolic link, to the file it names, which the output line then shows): what
// `make` of a plugin skeleton runs after building, as the repository's Makefile does for the
// built-ins with embeddescriptor. Both are wasmhost.EmbedDescriptorFile.
func runPluginEmbed(ctx context.Context, args []string) error {
	var out string
	file, cfg, err := moduleFlags("embed", "[-o OUT]", args, func(fs *flag.FlagSet) {
		fs.StringVar(&out, "o", "", "write the module with the section to OUT (default: rewrite FILE.wasm in place; a symbolic link is written through to its target, atomically, and stays a link)")
	})
	if err != nil {
		return err
	}
	if out == "" {
		out = file
	}
	written, err := wasmhost.EmbedDescriptorFile(ctx, file, out, cfg)
	if err != nil {
		return fmt.Errorf("%s: %w (nothing was written)", file, err)
	}
	if written != out {
		out = fmt.Sprintf("%s -> %s", out, written)
	}
	fmt.Printf("%s: wrote custom section %s (sdk/ABI.md §3.1)\n", out, wasmhost.DescriptorSection)
	return nil
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func firstLineOf(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
