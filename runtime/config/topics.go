package config

import (
	"fmt"
	"strconv"
	"strings"
)

// maxTopicNameLength is Kafka's limit on a topic name (Topic.MAX_NAME_LENGTH).
const maxTopicNameLength = 249

// CheckTopicName says why name cannot be a Kafka topic, as the broker would refuse it when the
// topic is created, or nil: ASCII alphanumerics, '.', '_' and '-', at most 249 of them, not "."
// or "..". A worker checks the topics it creates itself (internal topics, a connector's own
// offsets topic, a dead letter queue) before it needs them, so that a typo is an error where it
// was typed and not a task that fails later.
func CheckTopicName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("topic name is illegal, it can't be empty")
	case name == "." || name == "..":
		return fmt.Errorf("topic name cannot be \".\" or \"..\"")
	case len(name) > maxTopicNameLength:
		return fmt.Errorf("topic name is illegal, it can't be longer than %d characters, topic name: %s", maxTopicNameLength, name)
	}
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("topic name %q is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'", name)
		}
	}
	return nil
}

// Names are the three topics' names, config, offsets, status.
func (t InternalTopics) Names() []string {
	return []string{t.Config.Name, t.Offsets.Name, t.Status.Name}
}

// Topic is one internal topic: its name, and how to create it when it is missing.
type Topic struct {
	Name string // <prefix>topic (required)
	// Key is the setting that names the topic (config.storage.topic), for errors.
	Key string
	// Partitions of a new topic: 1 for the config topic, offset.storage.partitions (25),
	// status.storage.partitions (5).
	Partitions int32
	// ReplicationFactor of a new topic: <prefix>replication.factor (3); -1 is the broker default.
	ReplicationFactor int16
	// Configs are the other <prefix>* keys: topic configs of a new topic (cleanup.policy is
	// always compact).
	Configs map[string]string
}

// InternalTopics are a distributed worker's three internal topics.
type InternalTopics struct {
	Config, Offsets, Status Topic
}

// topicKeys are the internal topics' keys, with Kafka's DistributedConfig defaults.
var topicKeys = []Key{
	{Name: "config.storage.topic", Doc: "the topic of connector configs"},
	{Name: "offset.storage.topic", Doc: "the topic of source offsets"},
	{Name: "status.storage.topic", Doc: "the topic of connector and task statuses"},
	{Name: "config.storage.replication.factor", Default: "3", Doc: "replication of a new config topic; -1 = broker default"},
	{Name: "offset.storage.replication.factor", Default: "3", Doc: "replication of a new offset topic; -1 = broker default"},
	{Name: "status.storage.replication.factor", Default: "3", Doc: "replication of a new status topic; -1 = broker default"},
	{Name: "offset.storage.partitions", Default: "25", Doc: "partitions of a new offset topic"},
	{Name: "status.storage.partitions", Default: "5", Doc: "partitions of a new status topic"},
	{Name: "config.storage.partitions", Ignored: "the config topic always has one partition"},
	{Name: "config.storage.cleanup.policy", Ignored: "internal topics are always compacted"},
	{Name: "offset.storage.cleanup.policy", Ignored: "internal topics are always compacted"},
	{Name: "status.storage.cleanup.policy", Ignored: "internal topics are always compacted"},
	{Name: "config.storage.", Doc: "topic configs of a new config topic"},
	{Name: "offset.storage.", Doc: "topic configs of a new offset topic"},
	{Name: "status.storage.", Doc: "topic configs of a new status topic"},
}

func parseTopics(p *parser) InternalTopics {
	t := InternalTopics{
		Config:  parseTopic(p, "config.storage.", ""),
		Offsets: parseTopic(p, "offset.storage.", "offset.storage.partitions"),
		Status:  parseTopic(p, "status.storage.", "status.storage.partitions"),
	}
	// Two internal topics of one name would each read the other's records as their own: the
	// config topic would take offsets for connector configs, and compaction would mix both.
	all := []Topic{t.Config, t.Offsets, t.Status}
	for i, a := range all {
		for _, b := range all[:i] {
			if a.Name != "" && a.Name == b.Name {
				p.failf("worker properties %s and %s both name the topic %q: the three internal topics must be distinct", b.Key, a.Key, a.Name)
			}
		}
	}
	return t
}

// parseTopic reads the topic of prefix; partitionsKey is "" for the config topic, which has one.
func parseTopic(p *parser, prefix, partitionsKey string) Topic {
	t := Topic{Key: prefix + "topic", Partitions: 1, Configs: p.under(prefix)}
	t.Name = p.required(t.Key)
	if t.Name != "" {
		if err := CheckTopicName(t.Name); err != nil {
			p.failf("worker property %s=%q: %v", t.Key, t.Name, err)
		}
	}
	if partitionsKey != "" {
		v := p.str(partitionsKey)
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < 1 {
			p.failf("worker property %s=%q: want a positive integer", partitionsKey, v)
		}
		t.Partitions = int32(n)
	}
	rfKey := prefix + "replication.factor"
	v := p.str(rfKey)
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 16)
	if err != nil || n == 0 || n < -1 {
		p.failf("worker property %s=%q: want a positive integer, or -1 for the broker default", rfKey, v)
	}
	t.ReplicationFactor = int16(n)
	return t
}
