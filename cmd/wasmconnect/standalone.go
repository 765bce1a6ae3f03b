package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/wasmconnect/wasmconnect/runtime/config"
	"github.com/wasmconnect/wasmconnect/runtime/node"
)

// runStandalone is Kafka's connect-standalone: one worker without a group, its connectors given
// as .properties files on the command line (created, or updated, at every start), its source
// offsets in offset.storage.file.filename.
func runStandalone(ctx context.Context, args []string) error {
	fs := newFlags("standalone")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() < 1 {
		return fmt.Errorf("usage: wasmconnect standalone WORKER.properties [CONNECTOR.properties...]")
	}
	file := fs.Arg(0)
	props, err := readWorkerProps(file)
	if err != nil {
		return err
	}
	cfg, err := config.Parse(file, props, config.Standalone)
	if err != nil {
		return err
	}
	type connector struct {
		file, name string
		config     map[string]string
	}
	var conns []connector
	for _, f := range fs.Args()[1:] {
		c, err := config.ReadProperties(f)
		if err != nil {
			return err
		}
		name := strings.TrimSpace(c["name"])
		if name == "" {
			return fmt.Errorf("%s: missing required setting name (the connector's name)", f)
		}
		conns = append(conns, connector{f, name, c})
	}
	return serve(ctx, cfg, newLogger(cfg.LogFormat), config.Standalone, func(n *node.Node) error {
		for _, c := range conns {
			if _, _, err := n.Herder().PutConnectorConfig(ctx, c.name, c.config); err != nil {
				return fmt.Errorf("%s: creating connector %s: %w", c.file, c.name, err)
			}
		}
		return nil
	})
}
