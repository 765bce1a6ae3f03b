// Package config reads a worker's settings: Java .properties files as Kafka Connect's
// connect-distributed.properties are written, parsed into the typed WorkerConfig with Kafka's key
// names and defaults. The same settings written in HCL are turned into the same key/value map by
// package hcl, so one validation serves both formats.
//
// Errors name the file and the key, so an operator can fix a bad setting without guessing.
package config
