// Package node wires one worker process together: the Kafka clients, the three internal-topic
// stores, the plugin host, the worker and herder, and the REST server. cmd/wasmconnect calls it;
// tests can run a node in-process the same way.
package node
