package main

import (
	"context"
	"fmt"

	"github.com/wasmconnect/wasmconnect/runtime/broker"
)

func runBroker(ctx context.Context, args []string) error {
	fs := newFlags("broker")
	listen := fs.String("listen", "127.0.0.1:9092", "host:port to listen on (a concrete address: it is advertised to clients)")
	dataDir := fs.String("data-dir", "", "directory to persist topics and groups to (empty: memory only)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	log := newLogger()
	b, err := broker.Start(broker.Config{Listen: *listen, DataDir: *dataDir, Logger: log})
	if err != nil {
		return err
	}
	defer b.Close()
	fmt.Printf("broker listening on %s (cluster id %s)\n", b.Addr(), b.ClusterID())
	<-ctx.Done()
	log.Info("broker stopping")
	return nil
}
