// Package store owns Kafka Connect's three internal topics, the shared state
// of a distributed worker cluster, and reads and writes them exactly as the
// Java runtime does so that Go and Java workers can share a cluster:
//
//   - the config topic (ConfigStore): connector configs, target states,
//     task configs with their commit records, restart requests, session
//     keys and cluster-wide logger levels;
//   - the offsets topic (OffsetStore): source connector offsets, keyed by
//     ["<connector>",{partition}];
//   - the status topic (StatusStore): connector, task and active-topic
//     statuses.
//
// Record keys, JSON values, tombstones and partitioning (murmur2, through
// kgo's default partitioner) match Kafka Connect's KafkaConfigBackingStore,
// KafkaOffsetBackingStore and KafkaStatusBackingStore byte for byte where
// bytes matter, and reading follows their rules (task commit buffering,
// putSafe, stale UNASSIGNED statuses).
//
// Each store is a Log: a compacted topic that one consumer without a group
// reads from the beginning, continuously, into memory. Writes wait for the
// brokers' acknowledgement (acks=all) and then until they have been read
// back, so state read after a write reflects it. ReadToEnd catches up with
// writes made by other workers.
//
// EnsureTopics creates missing internal topics as compacted topics and
// refuses existing ones that Kafka Connect would refuse. FileOffsetStore is
// the standalone-mode alternative to OffsetStore; ConnectorOffsetStore
// combines a source connector's own offsets topic (offsets.storage.topic)
// with the worker's; all three satisfy OffsetBackingStore.
//
// The package does not implement exactly-once source support's
// transactional writes to the config topic.
package store
