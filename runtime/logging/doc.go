// Package logging gives a worker's slog output named loggers with levels that can be changed
// while it runs, for Kafka Connect's /admin/loggers API (KIP-495, and KIP-976's cluster scope and
// last_modified).
//
// Kafka names its loggers by class and sets them through log4j's hierarchy. Here a logger is
// named by a record's "logger" attribute or, without one, by the package that logged it
// ("wasmconnect.runtime.task", "wasmconnect.wasmhost"); levels follow the same rules: a logger
// with no level of its own inherits its nearest dotted ancestor's, then the root's, and setting a
// namespace sets every existing logger whose name starts with it. Kafka Connect's own names
// (org.apache.kafka.connect.runtime.WorkerSourceTask, ...runtime.distributed) stand for the
// loggers of the packages that do that work here (kafkaLoggers), so runbooks keep working.
//
// Wrap puts a process logger behind a Handler; LevelsOf finds the Levels of any logger derived
// from it. The package knows nothing of Kafka or the config topic: the herder applies
// cluster-scope levels it reads there.
package logging
