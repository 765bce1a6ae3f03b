// Package kafkaclient turns Kafka client properties, written as Kafka's Java clients read them,
// into franz-go options: security to the brokers (security.protocol, sasl.*, ssl.*) and client
// settings (acks, compression.type, linger.ms, fetch.max.bytes, isolation.level, ...).
//
// A worker configures its clients as Kafka Connect does. Its own clients (the internal topics, the
// group membership) use the top-level keys; a task's producer, a sink's consumer and the admin
// client add the worker's producer.*, consumer.* or admin.* keys; a connector's
// producer.override.*, consumer.override.* and admin.override.* come last, where the worker's
// connector.client.config.override.policy allows them. Unlike Kafka, the top-level security keys
// are inherited by the task clients, so a worker file need not repeat them under each prefix
// (one written as Kafka's documentation writes it, with the repetition, works the same).
//
// A key with no franz-go equivalent is reported as a warning naming it, never ignored in silence;
// a bad value is an error naming the key as written.
//
// The package knows nothing of connectors, tasks or plugins: it maps properties to options, and
// gives start-up a probe whose errors say which setting is at fault (FailFast).
package kafkaclient
