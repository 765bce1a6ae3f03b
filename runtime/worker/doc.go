// Package worker runs the connectors and tasks assigned to this process, as Kafka Connect's
// Worker: it resolves a connector's plugin and converters, asks the connector for task configs, and
// starts, pauses and stops task loops, each in its own plugin session (WebAssembly instances that
// belong to that task alone, so a trap fails only that task).
//
// It does not decide what runs where; the herder does, and tells the worker.
package worker
