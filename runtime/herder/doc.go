// Package herder coordinates a worker's connectors, as Kafka Connect's Herder: it keeps the
// connectors and tasks this worker runs equal to what the config topic says, generates task configs
// when a connector's config changes, writes statuses, and serves the REST API's requests.
//
// The config topic is the single source of truth. REST writes go to the config topic and take
// effect when the herder reads them back, exactly as writes from any other worker would; the herder
// never acts on a request's body directly. Plugin code (task-config generation) never runs on the
// herder's loop, so a slow or stuck plugin cannot make the REST API time out.
package herder
