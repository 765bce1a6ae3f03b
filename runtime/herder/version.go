package herder

// Version is wasmconnect's version; `wasmconnect version` prints it.
var Version = "0.1.0"

// KafkaVersion is the Apache Kafka Connect version whose REST API and internal topics this worker
// matches; GET / reports it as "version" because tools parse it to pick API features.
const KafkaVersion = "3.9.0"
