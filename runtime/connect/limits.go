package connect

import "math"

// MaxConnectorNameBytes is the longest connector name, in bytes, that a worker accepts: 32,733.
//
// A connector's name travels in Kafka protocol STRING fields, whose length is an INT16, so they hold
// at most 32,767 bytes. The group protocol's assignments carry the name as it is, a sink's consumer
// group is "connect-<name>", and each task's clients are named after it; the longest of these is the
// dead letter queue producer's client id, "connector-dlq-producer-<name>-<task>", which puts 34 bytes
// around the name when the task number (an INT32) has ten digits. The config topic itself would take
// a longer name (a record key is not a STRING), and that is the trap: the name is written, and then
// the leader cannot encode an assignment that holds it, so no worker gets work until the record is
// gone.
const MaxConnectorNameBytes = math.MaxInt16 - len(dlqClientIDPrefix) - len("-") - maxTaskNumberDigits

// dlqClientIDPrefix and maxTaskNumberDigits make up the longest Kafka STRING a connector name is
// written into: the client id of a task's dead letter queue producer.
const (
	dlqClientIDPrefix   = "connector-dlq-producer-"
	maxTaskNumberDigits = len("2147483647")
)

// CheckConnectorNameLength returns a 400 naming the limit if name is longer than
// MaxConnectorNameBytes.
func CheckConnectorNameLength(name string) error {
	if len(name) > MaxConnectorNameBytes {
		return BadRequest("Connector name is %d bytes long; the limit is %d bytes (names travel in Kafka protocol strings of at most %d bytes, inside ids such as %s<name>-<task>)",
			len(name), MaxConnectorNameBytes, math.MaxInt16, dlqClientIDPrefix)
	}
	return nil
}
