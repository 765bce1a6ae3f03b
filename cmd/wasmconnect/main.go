// Command wasmconnect is a Kafka Connect worker whose connectors and converters are WebAssembly
// modules, plus the tools around it: an embedded Kafka-compatible broker for development.
//
//	wasmconnect worker --config connect-distributed.properties
//	wasmconnect standalone worker.properties connector.properties...
//	wasmconnect broker --listen 127.0.0.1:9092 --data-dir data/broker
//	wasmconnect dev    [--config examples/dev.properties]
//	wasmconnect doctor --config connect-distributed.properties [--json]
//	wasmconnect validate DIR [--plugin-path build/plugins]
//	wasmconnect plan   DIR --url http://127.0.0.1:8083
//	wasmconnect apply  DIR --url http://127.0.0.1:8083
//	wasmconnect plugin inspect|check FILE.wasm
//	wasmconnect plugin new --lang go|rust NAME
//	wasmconnect hash password|token < secret
//	wasmconnect version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

type command struct {
	name, usage string
	run         func(ctx context.Context, args []string) error
}

var commands = []command{
	{"worker", "worker --config FILE     run a worker (FILE: connect-distributed.properties or .hcl)", runWorker},
	{"standalone", "standalone WORKER.properties CONNECTOR.properties...   one worker, no group, offsets in a file (connect-standalone)", runStandalone},
	{"broker", "broker --listen ADDR --data-dir DIR   run the embedded Kafka-compatible broker", runBroker},
	{"dev", "dev [--config FILE]      embedded broker + worker in one process, REST on 127.0.0.1:8083, data in ./data", runDev},
	{"doctor", "doctor --config FILE [--json]   check why a worker will not join: brokers, internal topics, group, settings, plugins, URLs, clock", runDoctor},
	{"validate", "validate DIR [--plugin-path P]   check HCL connector files offline (syntax, schema, plugin configs)", runValidate},
	{"plan", "plan DIR --url URL       show what apply would change (exit 2 when there are changes)", runPlan},
	{"apply", "apply DIR --url URL      make the cluster's connectors match the HCL files, through the REST API", runApply},
	{"plugin", "plugin inspect|check|new ...   the plugin toolkit: inspect or check a module, start a new plugin", runPlugin},
	{"hash", "hash password|token      print the hash of the secret on stdin for rest.auth.basic.file or rest.auth.tokens.file", runHash},
	{"version", "version                  print the version", runVersion},
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: wasmconnect <command> [flags]\n\ncommands:")
	for _, c := range commands {
		fmt.Fprintln(w, "  "+c.usage)
	}
}

func main() {
	if len(os.Args) < 2 {
		usage(os.Stderr)
		os.Exit(2)
	}
	name := os.Args[1]
	if name == "-h" || name == "--help" || name == "help" {
		usage(os.Stdout)
		return
	}
	for _, c := range commands {
		if c.name != name {
			continue
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := c.run(ctx, os.Args[2:])
		stop()
		if err != nil && !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(os.Stderr, "wasmconnect %s: %v\n", name, err)
			os.Exit(1)
		}
		return
	}
	fmt.Fprintf(os.Stderr, "wasmconnect: unknown command %q\n\n", name)
	usage(os.Stderr)
	os.Exit(2)
}

// newLogger returns the process logger: to stderr as text, or as JSON objects one per line when
// format is "json" (log.format); level from WASMCONNECT_LOG_LEVEL.
func newLogger(format string) *slog.Logger {
	level := slog.LevelInfo
	switch strings.ToLower(os.Getenv("WASMCONNECT_LOG_LEVEL")) {
	case "debug":
		level = slog.LevelDebug
	case "warn":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	}
	opts := &slog.HandlerOptions{Level: level}
	if strings.EqualFold(format, "json") {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}

func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("wasmconnect "+name, flag.ContinueOnError)
	return fs
}
