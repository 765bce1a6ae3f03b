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
	"github.com/wasmconnect/wasmconnect/runtime/node"
)

func runWorker(ctx context.Context, args []string) error {
	fs := newFlags("worker")
	file := fs.String("config", "", "worker config: a connect-distributed.properties file, or the same settings in .hcl")
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
	cfg, err := config.Parse(*file, props, config.Distributed)
	if err != nil {
		return err
	}
	return serve(ctx, cfg, newLogger())
}

// readWorkerProps reads a worker config file: HCL if it ends in .hcl, else Java properties.
func readWorkerProps(file string) (map[string]string, error) {
	if strings.EqualFold(filepath.Ext(file), ".hcl") {
		return hcl.ReadWorkerConfig(file)
	}
	return config.ReadProperties(file)
}

// serve runs a worker until ctx is cancelled (SIGINT/SIGTERM), then stops it gracefully.
func serve(ctx context.Context, cfg *config.Worker, log *slog.Logger) error {
	startPprof(log)
	n, err := node.Start(ctx, cfg, log)
	if err != nil {
		return err
	}
	<-ctx.Done()
	log.Info("shutting down")
	stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return n.Stop(stopCtx)
}
