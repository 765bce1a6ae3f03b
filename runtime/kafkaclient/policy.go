package kafkaclient

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Policy is connector.client.config.override.policy: which client keys a connector may override
// with producer.override.*, consumer.override.* and admin.override.*.
type Policy string

const (
	PolicyNone      Policy = "None"      // no override
	PolicyPrincipal Policy = "Principal" // security.protocol, sasl.mechanism and sasl.jaas.config only
	PolicyAll       Policy = "All"       // any key (Kafka's default since 3.0)
)

// PolicyKey is the worker key that sets the Policy.
const PolicyKey = "connector.client.config.override.policy"

// ParsePolicy reads a policy as Kafka does: None, Principal or All, or the class name of one
// (org.apache.kafka.connect.connector.policy.NoneConnectorClientConfigOverridePolicy...). An
// empty value is All.
func ParsePolicy(v string) (Policy, error) {
	v = strings.TrimSpace(v)
	name := strings.TrimSuffix(v[strings.LastIndexByte(v, '.')+1:], "ConnectorClientConfigOverridePolicy")
	switch name {
	case "":
		return PolicyAll, nil
	case "None", "Principal", "All":
		return Policy(name), nil
	}
	return "", fmt.Errorf("invalid value %q for %s: want None, Principal or All", v, PolicyKey)
}

var principalKeys = []string{"sasl.jaas.config", "sasl.mechanism", "security.protocol"}

// Allows reports whether the policy lets a connector override the client key.
func (p Policy) Allows(key string) bool {
	switch p {
	case PolicyAll:
		return true
	case PolicyPrincipal:
		return slices.Contains(principalKeys, key)
	}
	return false
}

// Refusals returns, for each <role>.override.* key of a connector config that the policy does
// not allow, Kafka's message for it (AbstractConnectorClientConfigOverridePolicy), by the key as
// written.
func (p Policy) Refusals(connector map[string]string, roles ...Role) map[string]string {
	out := map[string]string{}
	for _, role := range roles {
		o := Overrides(connector, role)
		for _, k := range slices.Sorted(maps.Keys(o)) {
			if !p.Allows(k) {
				out[o[k].Key] = fmt.Sprintf("The '%s' policy does not allow '%s' to be overridden in the connector configuration.", p, k)
			}
		}
	}
	return out
}
