package kafkaclient

import (
	"maps"
	"strings"

	"github.com/wasmconnect/wasmconnect/runtime/config"
)

// Role names a kind of client, and the prefix of its keys in worker and connector configs.
type Role string

const (
	// Internal is the worker's own clients (internal topics, group membership): top-level keys.
	Internal Role = ""
	Producer Role = "producer" // a source task's producer, a sink's dead letter queue producer
	Consumer Role = "consumer" // a sink task's consumer
	Admin    Role = "admin"    // the worker's admin client
)

// Roles are the client roles a connector may override, in Kafka's order.
var Roles = []Role{Producer, Consumer, Admin}

// Setting is one client property: its value and the key as the user wrote it
// (producer.override.acks), for warnings and errors.
type Setting struct {
	Value string
	Key   string
}

// Settings are one client's properties by their Kafka client key (acks, sasl.mechanism...), each
// layer replacing the one before.
type Settings map[string]Setting

// IsConnectionKey reports whether a top-level worker key says how to reach the brokers. These
// keys are used by the worker's own clients and inherited by the task clients.
func IsConnectionKey(k string) bool {
	return k == "bootstrap.servers" || k == "security.protocol" ||
		strings.HasPrefix(k, "sasl.") || strings.HasPrefix(k, "ssl.")
}

// ForWorker returns the settings of a worker client of the role: the top-level connection keys
// (bootstrap.servers, security.protocol, sasl.*, ssl.*), then, for a producer, consumer or admin
// client, the worker's <role>.* keys.
func ForWorker(k config.Kafka, role Role) Settings {
	s := Settings{}
	for key, v := range k.Connection {
		s[key] = Setting{Value: v, Key: key}
	}
	var own map[string]string
	switch role {
	case Producer:
		own = k.Producer
	case Consumer:
		own = k.Consumer
	case Admin:
		own = k.Admin
	}
	for key, v := range own {
		s[key] = Setting{Value: v, Key: string(role) + "." + key}
	}
	return s
}

// WithOverrides returns a copy of s with a connector's <role>.override.* keys on top.
func (s Settings) WithOverrides(connector map[string]string, role Role) Settings {
	out := maps.Clone(s)
	out.add(connector, string(role)+".override.")
	return out
}

func (s Settings) add(props map[string]string, prefix string) {
	for k, v := range props {
		if rest, ok := strings.CutPrefix(k, prefix); ok && rest != "" {
			s[rest] = Setting{Value: v, Key: k}
		}
	}
}

// Overrides returns a connector's <role>.override.* keys, without the prefix.
func Overrides(connector map[string]string, role Role) Settings {
	return Settings{}.WithOverrides(connector, role)
}
