package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wasmconnect/wasmconnect/runtime/broker"
	"github.com/wasmconnect/wasmconnect/runtime/config"
)

// runDev starts an embedded broker and a worker in one process: the quickest way to try
// wasmconnect on a laptop. Settings come from --config (examples/dev.properties by default);
// bootstrap.servers is replaced by the embedded broker's address.
func runDev(ctx context.Context, args []string) error {
	fs := newFlags("dev")
	file := fs.String("config", "examples/dev.properties", "worker config")
	dataDir := fs.String("data-dir", "data", "where the broker keeps its data and plugins may keep files (data/files)")
	listen := fs.String("broker", "127.0.0.1:9092", "embedded broker address")
	if err := fs.Parse(args); err != nil {
		return err
	}
	props, err := readWorkerProps(*file)
	if err != nil {
		return err
	}
	log := newLogger(props["log.format"]) // checked by config.Parse below
	if err := os.MkdirAll(filepath.Join(*dataDir, "files"), 0o755); err != nil {
		return err
	}
	b, err := broker.Start(broker.Config{Listen: *listen, DataDir: filepath.Join(*dataDir, "broker"), Logger: log.With("component", "broker")})
	if err != nil {
		return fmt.Errorf("starting the embedded broker: %w", err)
	}
	defer b.Close()
	log.Info("embedded broker started", "addr", b.Addr(), "data_dir", filepath.Join(*dataDir, "broker"))
	props["bootstrap.servers"] = b.Addr()
	cfg, err := config.Parse(*file, props, config.Distributed)
	if err != nil {
		return err
	}
	return serve(ctx, cfg, log, config.Distributed, nil)
}
