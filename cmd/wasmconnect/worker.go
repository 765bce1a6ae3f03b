package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/wasmconnect/wasmconnect/hcl"
	"github.com/wasmconnect/wasmconnect/runtime/config"
	"github.com/wasmconnect/wasmconnect/runtime/memtune"
	"github.com/wasmconnect/wasmconnect/runtime/node"
)

func runWorker(ctx context.Context, args []string) error {
	fs := newFlags("worker")
	file := fs.String("config", "", "worker config: a connect-distributed.properties file, or the same settings in .hcl")
	connectors := fs.String("connectors", "", "reconcile the connectors declared in this directory's *.hcl files (connectors.dir)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *file == "" && fs.NArg() == 1 { // connect-distributed.sh style: the file as the only argument
		*file = fs.Arg(0)
	}
	if *file == "" {
		return fmt.Errorf("--config FILE is required")
	}
	props, err := readWorkerProps(*file)
	if err != nil {
		return err
	}
	if *connectors != "" {
		props["connectors.dir"] = *connectors
	}
	cfg, err := config.Parse(*file, props, config.Distributed)
	if err != nil {
		return err
	}
	return serve(ctx, cfg, newLogger(cfg.LogFormat), config.Distributed, nil)
}

// readWorkerProps reads a worker config file: HCL if it ends in .hcl, else Java properties.
func readWorkerProps(file string) (map[string]string, error) {
	if strings.EqualFold(filepath.Ext(file), ".hcl") {
		return hcl.ReadWorkerConfig(file)
	}
	return config.ReadProperties(file)
}

// serve runs a worker until ctx is cancelled (SIGINT/SIGTERM), then stops it gracefully. started,
// if set, runs once the worker serves requests; an error from it stops the worker.
func serve(ctx context.Context, cfg *config.Worker, log *slog.Logger, mode config.Mode, started func(*node.Node) error) error {
	startPprof(log)
	// A burst of records leaves its garbage on the heap until the next collection, which an idle
	// worker may not run for minutes: give it back when the burst ends.
	go memtune.Watch(ctx)
	n, err := node.Start(ctx, cfg, log, mode)
	if err != nil {
		return err
	}
	if started != nil {
		if err := started(n); err != nil {
			stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			n.Stop(stopCtx)
			return err
		}
	}
	<-ctx.Done()
	log.Info("shutting down")
	stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return n.Stop(stopCtx)
}
