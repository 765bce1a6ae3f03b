// Package broker runs the embedded single-node Kafka broker that a worker
// can start when no external cluster is configured.
//
// It owns the lifecycle of a kfake cluster (start, address, close) and the
// settings that make it behave like a default Apache Kafka broker where a
// Connect worker depends on it: topics are auto-created, new topics get one
// partition, and compacted topics are actually compacted on Kafka's default
// cleaner schedule. With a data directory the broker keeps its topics,
// records and group offsets across restarts, a kill -9 included; after a kill
// it ends the transactions that were open with abort markers before clients
// get in, as Kafka's transaction coordinator would (kfake alone writes none,
// and read_committed readers would then drop later committed records).
//
// The embedded broker is meant for development and single-machine setups:
// it has one node, keeps a copy of all data in memory, and always listens
// on one address. See the package's Config for the knobs it exposes.
package broker
