// Package connect holds Kafka Connect's domain model as the REST API and the internal topics expose
// it: connector and task states, the entities of the REST API (ConnectorInfo, ConnectorStateInfo,
// ...), and the errors that map to its status codes.
//
// It has no I/O and knows nothing of Kafka clients, WebAssembly or HTTP, so every other package can
// share these types without pulling in each other.
package connect
