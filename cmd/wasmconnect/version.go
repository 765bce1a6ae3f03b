package main

import (
	"context"
	"fmt"

	"github.com/wasmconnect/wasmconnect/runtime/herder"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

func runVersion(context.Context, []string) error {
	fmt.Printf("wasmconnect %s (Kafka Connect %s REST API, plugin ABI v%d)\n", herder.Version, herder.KafkaVersion, wire.Version)
	return nil
}
