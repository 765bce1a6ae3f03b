// Package hcl reads wasmconnect's HCL files: the worker config (worker.hcl), equivalent to a
// connect-distributed.properties file, and directories of connector files, the connectors-as-code
// desired state that runtime/reconcile keeps a cluster equal to.
//
// A connector file declares connectors (class, tasks_max, state, config, and transform,
// predicate, converter and errors blocks mapped to Kafka Connect's keys), variables, locals, and
// may call env(), file(), abspath(), secret() and common string and collection functions.
// secret() renders a Kafka config-provider placeholder (${env:DB_PASSWORD}), so a secret's value
// never reaches the config topic: the worker resolves it when a task starts.
//
// Errors are hcl diagnostics and print with file, line and column (`worker.hcl:3,9: ...`), and
// say what was expected, so a mistake is found without guessing. A directory with any error
// yields no desired state at all: half a directory is never applied.
package hcl
