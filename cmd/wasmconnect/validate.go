package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/wasmconnect/wasmconnect/hcl"
	"github.com/wasmconnect/wasmconnect/runtime/config"
	"github.com/wasmconnect/wasmconnect/runtime/configprovider"
	"github.com/wasmconnect/wasmconnect/runtime/connect"
	connworker "github.com/wasmconnect/wasmconnect/runtime/worker"
	"github.com/wasmconnect/wasmconnect/wasmhost"
)

// runValidate checks a directory of connector files offline: syntax and schema, then, with the
// plugins of --plugin-path (or of --worker-config's plugin.path), each connector's config against
// its plugin's config definitions, as the worker would validate it.
func runValidate(ctx context.Context, args []string) error {
	fs := newFlags("validate")
	vars := varsFlag{}
	fs.Var(vars, "var", "set a variable: --var name=value (repeatable)")
	pluginPath := fs.String("plugin-path", "", "plugin directories (comma-separated) to check connector configs against")
	workerFile := fs.String("worker-config", "", "a worker config (.properties or .hcl) to take plugin.path, group.id and converters from")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: wasmconnect validate DIR [--plugin-path DIRS] [--worker-config FILE] [--var name=value]")
		fs.PrintDefaults()
	}
	dir, err := dirArg(fs, args)
	if err != nil {
		return err
	}
	cs, err := loadDir(dir, vars, os.Stderr)
	if err != nil {
		return err
	}
	wcfg := &config.Worker{
		KeyConverter:   "org.apache.kafka.connect.json.JsonConverter",
		ValueConverter: "org.apache.kafka.connect.json.JsonConverter",
	}
	if *workerFile != "" {
		props, err := readWorkerProps(*workerFile)
		if err != nil {
			return err
		}
		if wcfg, err = config.Parse(*workerFile, props, config.Standalone); err != nil {
			return err
		}
		wcfg.GroupID = strings.TrimSpace(props["group.id"])
	}
	if *pluginPath != "" {
		wcfg.PluginPath = strings.Split(*pluginPath, ",")
	}
	if len(wcfg.PluginPath) == 0 {
		fmt.Printf("%s: %d connector(s), syntax and schema valid (no --plugin-path: configs not checked against plugins)\n", dir, len(cs.Connectors))
		return nil
	}
	problems, err := checkPlugins(ctx, cs, wcfg, os.Stderr)
	if err != nil {
		return err
	}
	if problems > 0 {
		return fmt.Errorf("%s: %d problem(s) in connector configs", dir, problems)
	}
	fmt.Printf("%s: %d connector(s) valid\n", dir, len(cs.Connectors))
	return nil
}

// checkPlugins validates each connector's config with its plugin and prints the problems, each at
// the position of the key it is about.
func checkPlugins(ctx context.Context, cs *hcl.Connectors, wcfg *config.Worker, out io.Writer) (int, error) {
	cache := ""
	if d, err := os.UserCacheDir(); err == nil {
		cache = filepath.Join(d, "wasmconnect", "wazero")
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	host, err := wasmhost.New(ctx, wasmhost.Config{PluginPath: wcfg.PluginPath, CacheDir: cache, Logger: log})
	if err != nil {
		return 0, fmt.Errorf("loading plugins: %w", err)
	}
	defer host.Close(context.Background())
	for _, e := range host.LoadErrors() {
		fmt.Fprintf(out, "warning: plugin module %s not loaded: %v\n", e.Path, e.Err)
	}
	w := connworker.New(connworker.Config{Worker: wcfg, Host: host, Logger: log})
	problems := 0
	for _, c := range cs.Connectors {
		cfg := map[string]string{"name": c.Name}
		for k, v := range c.Config {
			cfg[k] = v
		}
		infos, _, err := w.ValidateConfig(ctx, cfg)
		if err != nil {
			problems++
			msg := err.Error()
			var ce *connect.Error
			if errors.As(err, &ce) {
				msg = ce.Message
			}
			pos := c.KeyPositions["connector.class"]
			if pos == "" {
				pos = c.Position()
			}
			fmt.Fprintf(out, "%s: connector %q: %s\n", pos, c.Name, msg)
			continue
		}
		var lines []string
		for _, ci := range infos.Configs {
			if ci.Value == nil || len(ci.Value.Errors) == 0 {
				continue
			}
			key := ci.Value.Name
			if configprovider.HasPlaceholder(c.Config[key]) {
				continue // resolved by the worker at task start: not checkable here
			}
			pos := c.KeyPositions[key]
			if pos == "" {
				pos = c.Position()
			}
			for _, e := range ci.Value.Errors {
				lines = append(lines, fmt.Sprintf("%s: connector %q: %s: %s", pos, c.Name, key, e))
			}
		}
		sort.Strings(lines)
		for _, l := range lines {
			fmt.Fprintln(out, l)
		}
		problems += len(lines)
	}
	return problems, nil
}
