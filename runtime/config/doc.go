// Package config reads a worker's settings: Java .properties files as Kafka Connect's
// connect-distributed.properties are written, parsed once into the typed Worker with Kafka's key
// names and defaults. The same settings written in HCL are turned into the same key/value map by
// package hcl, so one validation serves both formats.
//
// Each part of the worker declares its keys (name, default, and why a key is accepted but has no
// effect, if it has none) next to its section type and parse function, one file per part:
// worker.go, plugins.go, kafka.go, topics.go, rest.go, cluster.go, reconcile.go, providers.go.
// Parse composes them, so the keys the worker knows are the keys something reads; any other key
// given is a warning, and so is a key kept only for compatibility with Kafka Connect.
//
// Errors name the file and the key, so an operator can fix a bad setting without guessing. The
// package is a leaf: it imports nothing of wasmconnect, and the components it configures import it.
package config
